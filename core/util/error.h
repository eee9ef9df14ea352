#pragma once
// Errors are values: a machine-readable code, a message for people, and where it happened
// ("problems/seed/softmax.toml:12 inputs[0].shape"). Nothing in core throws across its API.
#include <string>
#include <utility>
#include <variant>

namespace kf {

struct Error {
    std::string code;     // short, stable: "parse", "io", "compile", "launch", "no-gpu", ...
    std::string message;  // one sentence for people
    std::string where;    // file:line and field, or empty

    std::string text() const { return where.empty() ? message : where + ": " + message; }
};

inline Error makeError(std::string code, std::string message, std::string where = {})
{
    return Error{std::move(code), std::move(message), std::move(where)};
}

template <typename T>
class Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T &value() { return std::get<0>(m_v); }
    const T &value() const { return std::get<0>(m_v); }
    T &operator*() { return value(); }
    const T &operator*() const { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    const Error &error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

// For operations that return nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

} // namespace kf
