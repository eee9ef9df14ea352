#include "problem/problem.h"

#include <utility>

namespace kf {
namespace {

// Canonical spellings first: toString() returns the first name listed for a value.
constexpr std::pair<DType, std::string_view> kDTypeNames[] = {
    {DType::F32, "float32"},
    {DType::F16, "float16"},
    {DType::BF16, "bfloat16"},
    {DType::F64, "float64"},
    {DType::I32, "int32"},
    {DType::I64, "int64"},
    {DType::Bool, "bool"},
    // Short forms people write in directives and in CUDA-minded files.
    {DType::F32, "fp32"},
    {DType::F32, "f32"},
    {DType::F32, "float"},
    {DType::F16, "fp16"},
    {DType::F16, "f16"},
    {DType::F16, "half"},
    {DType::BF16, "bf16"},
    {DType::F64, "fp64"},
    {DType::F64, "f64"},
    {DType::F64, "double"},
    {DType::I32, "i32"},
    {DType::I32, "int"},
    {DType::I64, "i64"},
};

constexpr std::pair<Dist, std::string_view> kDistNames[] = {
    {Dist::Uniform, "uniform"},     {Dist::Normal, "normal"},           {Dist::Laplace, "laplace"},
    {Dist::LogNormal, "lognormal"}, {Dist::Exponential, "exponential"},
};

constexpr std::pair<Policy, std::string_view> kPolicyNames[] = {
    {Policy::Strict, "strict"},
    {Policy::Loose, "loose"},
};

template <typename E, std::size_t N>
std::string nameOf(const std::pair<E, std::string_view> (&table)[N], E value)
{
    for (const auto &[v, name] : table)
        if (v == value)
            return std::string(name);
    return "?";
}

template <typename E, std::size_t N>
std::optional<E> valueOf(const std::pair<E, std::string_view> (&table)[N], std::string_view name)
{
    for (const auto &[v, n] : table)
        if (n == name)
            return v;
    return std::nullopt;
}

} // namespace

std::string toString(DType t) { return nameOf(kDTypeNames, t); }
std::optional<DType> parseDType(std::string_view s) { return valueOf(kDTypeNames, s); }
std::string toString(Dist d) { return nameOf(kDistNames, d); }
std::optional<Dist> parseDist(std::string_view s) { return valueOf(kDistNames, s); }
std::string toString(Policy p) { return nameOf(kPolicyNames, p); }
std::optional<Policy> parsePolicy(std::string_view s) { return valueOf(kPolicyNames, s); }

std::size_t elementSize(DType t)
{
    switch (t) {
    case DType::F32:
        return 4;
    case DType::F16:
        return 2;
    case DType::BF16:
        return 2;
    case DType::F64:
        return 8;
    case DType::I32:
        return 4;
    case DType::I64:
        return 8;
    case DType::Bool:
        return 1;
    }
    return 0;
}

double tolerance(Policy p) { return p == Policy::Loose ? 1e-2 : 1e-4; }

std::int64_t TensorSpec::numel() const
{
    std::int64_t n = 1; // a 0-d tensor holds one element
    for (std::int64_t d : shape)
        n *= d;
    return n;
}

double Problem::derivedBytes() const
{
    double total = 0;
    for (const auto &t : inputs)
        total += double(t.bytes());
    for (const auto &t : params)
        total += double(t.bytes());
    for (const auto &t : outputs)
        total += double(t.bytes());
    return total;
}

const TensorSpec *Problem::tensor(std::string_view wanted) const
{
    for (const auto &t : inputs)
        if (t.name == wanted)
            return &t;
    for (const auto &t : params)
        if (t.name == wanted)
            return &t;
    for (const auto &t : outputs)
        if (t.name == wanted)
            return &t;
    return nullptr;
}

} // namespace kf
