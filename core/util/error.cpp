#include "util/error.h"

#include <array>
#include <utility>

namespace kf {

namespace {

constexpr std::array<std::pair<ErrorCode, std::string_view>, 48> kTexts{{
    {ErrorCode::BadRequest, "bad-request"},
    {ErrorCode::Busy, "busy"},
    {ErrorCode::Cancelled, "cancelled"},
    {ErrorCode::Check, "check"},
    {ErrorCode::Closed, "closed"},
    {ErrorCode::Compile, "compile"},
    {ErrorCode::Crashed, "crashed"},
    {ErrorCode::Damaged, "damaged"},
    {ErrorCode::Done, "done"},
    {ErrorCode::Empty, "empty"},
    {ErrorCode::Engine, "engine"},
    {ErrorCode::Exists, "exists"},
    {ErrorCode::Expr, "expr"},
    {ErrorCode::Fatal, "fatal"},
    {ErrorCode::Format, "format"},
    {ErrorCode::Generator, "generator"},
    {ErrorCode::Internal, "internal"},
    {ErrorCode::Invalid, "invalid"},
    {ErrorCode::Io, "io"},
    {ErrorCode::Launch, "launch"},
    {ErrorCode::Llm, "llm"},
    {ErrorCode::LlmAnswer, "llm-answer"},
    {ErrorCode::Load, "load"},
    {ErrorCode::NoGpu, "no-gpu"},
    {ErrorCode::NoProblem, "no-problem"},
    {ErrorCode::NotFound, "not-found"},
    {ErrorCode::Parse, "parse"},
    {ErrorCode::Prices, "prices"},
    {ErrorCode::Process, "process"},
    {ErrorCode::Prompt, "prompt"},
    {ErrorCode::Protocol, "protocol"},
    {ErrorCode::ReadOnly, "read-only"},
    {ErrorCode::Reference, "reference"},
    {ErrorCode::Resource, "resource"},
    {ErrorCode::Session, "session"},
    {ErrorCode::Settings, "settings"},
    {ErrorCode::Sqlite, "sqlite"},
    {ErrorCode::Suite, "suite"},
    {ErrorCode::Template, "template"},
    {ErrorCode::Timeout, "timeout"},
    {ErrorCode::TooLarge, "too-large"},
    {ErrorCode::UnknownKey, "unknown-key"},
    {ErrorCode::UnknownOp, "unknown-op"},
    {ErrorCode::Unsupported, "unsupported"},
    {ErrorCode::Usage, "usage"},
    {ErrorCode::Version, "version"},
    {ErrorCode::Worker, "worker"},
    {ErrorCode::WorkerStart, "worker-start"},
}};
// One text a code: the table follows the enum, whose last code is WorkerStart.
static_assert(kTexts.size() == std::size_t(ErrorCode::WorkerStart) + 1);

} // namespace

std::string toString(ErrorCode code)
{
    for (const auto &[c, text] : kTexts)
        if (c == code)
            return std::string(text);
    return "internal";
}

ErrorCode errorCodeFrom(std::string_view text)
{
    for (const auto &[c, t] : kTexts)
        if (t == text)
            return c;
    return ErrorCode::Worker;
}

} // namespace kf
