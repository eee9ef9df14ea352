#pragma once
// Errors are values: a machine-readable code, a message for people, and where it happened
// ("problems/seed/softmax.toml:12 inputs[0].shape"). Nothing in core throws across its API.
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kf {

// What kind of failure, for code that decides what to do next (retry, skip, stop, which exit
// status). Codes travel between processes as their text (docs/protocol.md lists the worker's).
enum class ErrorCode {
    BadRequest,  // a request the worker cannot read: a missing or ill-typed field
    Busy,        // the resource is taken (a session open for writing elsewhere)
    Cancelled,   // the user stopped it
    Check,       // the engine's own check kernels failed to build or run
    Closed,      // the object was closed or moved from
    Compile,     // a kernel did not compile
    Crashed,     // the worker died while serving the request
    Damaged,     // a file is there but its content cannot be read back
    Done,        // nothing left to do
    Empty,       // nothing to work on
    Engine,      // the worker could not judge a kernel for a reason of its own
    Exists,      // would overwrite something that is kept
    Expr,        // a shape expression that does not evaluate
    Fatal,       // the GPU context is lost: the worker must restart
    Format,      // a file of another kind or an unknown format
    Generator,   // the generator failed
    Internal,    // a broken invariant
    Invalid,     // a value the operation does not accept
    Io,          // reading or writing a file
    Launch,      // a kernel launch failed
    Llm,         // an LLM request failed
    LlmAnswer,   // an LLM answer that cannot be used
    Load,        // a compiled module did not load
    NoGpu,       // no usable GPU
    NoProblem,   // the worker has no problem loaded
    NotFound,    // what was asked for is not there
    Parse,       // text that does not parse
    Prices,      // the LLM price table
    Process,     // a child process could not be run
    Prompt,      // an LLM prompt template
    Protocol,    // a message that breaks the worker protocol
    ReadOnly,    // a write to something opened read-only
    Reference,   // the PyTorch reference failed
    Resource,    // a resource file is missing
    Session,     // a session that cannot be used as asked
    Settings,    // search settings out of range or inconsistent
    Sqlite,      // the database library failed
    Suite,       // a suite that cannot be run as asked
    Template,    // a kernel template that does not render
    Timeout,     // no answer in time
    TooLarge,    // over a size limit
    UnknownKey,  // the worker holds no module under that key
    UnknownOp,   // the worker does not know that operation
    Unsupported, // a form the tool does not handle (yet)
    Usage,       // a command used the wrong way
    Version,     // written by a newer version
    Worker,      // the worker failed in a way it did not name
    WorkerStart, // the worker did not start (the last code: util/error.cpp keeps a text for each)
};

// The code's stable text ("no-gpu" for NoGpu), as messages and the protocol carry it.
std::string toString(ErrorCode);
// The code for a text; a text no code has (from a newer worker) is Worker.
ErrorCode errorCodeFrom(std::string_view);

struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message; // one sentence for people
    std::string where;   // file:line and field, or empty

    std::string text() const { return where.empty() ? message : where + ": " + message; }
};

inline Error makeError(ErrorCode code, std::string message, std::string where = {})
{
    return Error{code, std::move(message), std::move(where)};
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
