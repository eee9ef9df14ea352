#include "domain/evaluation.h"

#include <array>

namespace kf {

namespace {

constexpr std::array<const char *, 14> kVerdictNames = {
    "queued",  "compiling", "compile error", "launch error", "wrong",     "racy",         "correct",
    "crashed", "timed out", "suspect",       "needs gpu",    "sanitizer", "inconsistent", "engine error"};

} // namespace

std::string toString(Verdict v)
{
    auto i = static_cast<std::size_t>(v);
    return i < kVerdictNames.size() ? kVerdictNames[i] : "unknown";
}

std::optional<Verdict> parseVerdict(std::string_view text)
{
    for (std::size_t i = 0; i < kVerdictNames.size(); ++i)
        if (text == kVerdictNames[i])
            return static_cast<Verdict>(i);
    return std::nullopt;
}

void applyTimedRun(EvalResult &r, const TimedRun &t)
{
    r.timingCheck = t.check;
    r.timing = t.timing;
    if (t.verdict != Verdict::Correct && r.verdict == Verdict::Correct) {
        r.verdict = t.verdict;
        r.reason = t.reason;
    }
}

} // namespace kf
