#include "search/events.h"

#include <algorithm>
#include <cstdio>

namespace kf {

namespace {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

std::string fmt(const char *format, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

std::string ms(double v) { return fmt("%.4f ms", v); }
std::string node(std::int64_t id) { return "#" + std::to_string(id); }

} // namespace

std::string toString(StopReason r)
{
    switch (r) {
    case StopReason::Rounds:
        return "rounds";
    case StopReason::TimeBudget:
        return "time budget";
    case StopReason::Cancelled:
        return "cancelled";
    case StopReason::NoMoreIdeas:
        return "no more ideas";
    case StopReason::Error:
        return "error";
    case StopReason::TokenBudget:
        return "token budget";
    case StopReason::CostBudget:
        return "cost budget";
    }
    return "unknown";
}

std::string eventKind(const SearchEvent &e)
{
    static const char *kNames[] = {"search-started",
                                   "round-started",
                                   "idea-proposed",
                                   "candidate-queued",
                                   "candidate-compiled",
                                   "compile-failed",
                                   "candidate-verified",
                                   "candidate-timed",
                                   "round-finished",
                                   "stopped",
                                   "message",
                                   "candidate-sanitizing",
                                   "candidate-sanitized",
                                   "budget"};
    static_assert(std::size(kNames) == std::variant_size_v<SearchEvent>);
    return kNames[e.index()];
}

namespace {

std::string startedText(const SearchStarted &e)
{
    std::string s = e.problem + " on " + (e.gpu.empty() ? "an unnamed GPU" : e.gpu) + " with the " + e.generator +
        " generator, from round " + std::to_string(e.firstRound);
    s += e.eagerMs > 0 ? "; eager PyTorch " + ms(e.eagerMs) : "; eager time unknown";
    if (e.budgetSeconds > 0)
        s += "; setup took " + fmt("%.1f s", e.setupSeconds) + " of the " + fmt("%.0f s", e.budgetSeconds) + " budget";
    return s;
}

std::string roundText(const RoundFinished &e)
{
    std::string s = "round " + std::to_string(e.round) + " done: ";
    s += e.bestMs > 0 ? "best " + ms(e.bestMs) + " (" + node(e.bestNode) + ", " + e.bestIdea + ")"
                      : "no correct kernel yet";
    s += "; this round " + std::to_string(e.correct) + " of " + std::to_string(e.candidates) + " correct";
    if (e.roundBestMs > 0)
        s += ", fastest " + ms(e.roundBestMs);
    if (e.tokens > 0)
        s += "; " + std::to_string(e.tokens) + " tokens" + (e.cost > 0 ? ", cost " + fmt("%.4f", e.cost) : "");
    if (e.sanitized > 0)
        s += "; sanitizer " + std::to_string(e.sanitized) + " checked in " + fmt("%.1f s", e.sanitizerSeconds) +
            (e.findings > 0 ? ", " + std::to_string(e.findings) + " demoted" : "");
    if (e.bestGate == "pending")
        s += "; the best is not yet through compute-sanitizer";
    return s;
}

std::string finishedText(const SearchFinished &e)
{
    std::string s = "stopped (" + toString(e.reason) + (e.detail.empty() ? "" : ": " + e.detail) + ")";
    s += " after " + std::to_string(e.roundsRun) + (e.roundsRun == 1 ? " round" : " rounds");
    if (!(e.bestMs > 0))
        return s;
    s += "; best " + ms(e.bestMs) + " (" + node(e.bestNode);
    if (e.budget.bestGate == "clean")
        return s + ", passed compute-sanitizer)";
    return s + (e.budget.bestGate.empty() ? ")" : ", not checked by compute-sanitizer)");
}

std::string sanitizingText(const CandidateSanitizing &e)
{
    std::string tools;
    for (const auto &t : e.tools)
        tools += (tools.empty() ? "" : ", ") + t;
    return node(e.node) + " sanitizing (" + tools + (e.background ? ", while the GPU waits" : ", final gate") +
        (e.estimateSeconds > 0 ? ", about " + fmt("%.0f s", e.estimateSeconds) : "") + ")";
}

std::string sanitizedText(const CandidateSanitized &e)
{
    if (e.putOff)
        return node(e.node) + " sanitizer run put off: the GPU is needed for timing";
    const SanitizerCheck &c = e.check;
    std::string tools;
    for (const auto &t : c.tools)
        tools += (tools.empty() ? "" : ", ") + t;
    std::string when = c.sameAs ? "same source as " + node(c.sameAs) : tools + ", " + fmt("%.1f s", c.seconds);
    if (c.outcome == "finding")
        return node(e.node) + " sanitizer finding, now " + toString(e.verdict) + ": " + c.note + " (" + when + ")";
    if (c.outcome == "clean")
        return node(e.node) + " sanitizer clean (" + when + ")";
    return node(e.node) + " not sanitized, kept: " + c.note + " (" + when + ")";
}

std::string budgetText(const BudgetStatus &e)
{
    std::string s = describe(e.budget.split);
    if (e.budget.budgetSeconds > 0)
        s = fmt("%.0f s", std::max(0.0, e.budget.budgetSeconds - e.budget.elapsedSeconds)) + " of " +
            fmt("%.0f s", e.budget.budgetSeconds) + " left (" + s + ")";
    if (e.reserveSeconds > 0)
        s += "; " + fmt("%.0f s", e.reserveSeconds) + " kept for the final gate";
    if (e.gating != 0)
        s += "; compute-sanitizer on " + node(e.gating) + (e.finalGate ? " (final gate)" : "");
    const std::string &gate = e.budget.bestGate;
    if (e.budget.bestNode != 0)
        s += "; best " + node(e.budget.bestNode) + " " +
            (gate == "clean"         ? "checked"
                 : gate == "pending" ? "not checked yet"
                 : gate == "off"     ? "unchecked (the gate is off)"
                                     : "unchecked");
    return "budget: " + s;
}

} // namespace

std::string describe(const SearchEvent &event)
{
    return std::visit(Overloaded{
                          [](const SearchStarted &e) { return startedText(e); },
                          [](const RoundStarted &e) {
                              return "round " + std::to_string(e.round) +
                                  (e.bestMs > 0 ? " (best so far " + ms(e.bestMs) + ")" : " (no correct kernel yet)");
                          },
                          [](const IdeaProposed &e) {
                              std::string s = "idea " + node(e.node) + " " + e.title + " [" + e.ideaId + "]";
                              s += e.parentKernel ? " on " + node(e.parentKernel) : " from the reference";
                              return e.why.empty() ? s : s + ": " + e.why;
                          },
                          [](const CandidateQueued &e) {
                              std::string s = node(e.node) + " queued: " + e.title;
                              return e.repairOf ? s + " (repair of " + node(e.repairOf) + ")" : s;
                          },
                          [](const CandidateCompiled &e) {
                              std::string s = node(e.node) +
                                  (e.cached ? " compiled (cached)" : " compiled in " + fmt("%.1f s", e.seconds));
                              if (e.registers > 0)
                                  s += ", " + std::to_string(e.registers) + " registers";
                              if (e.spills > 0)
                                  s += ", " + std::to_string(e.spills) + " B spilled";
                              return s;
                          },
                          [](const CompileFailed &e) { return node(e.node) + " compile error: " + e.reason; },
                          [](const CandidateVerified &e) {
                              std::string s = node(e.node) + " " + toString(e.verdict);
                              if (e.verdict == Verdict::Correct)
                                  return s + " (max scaled error " + fmt("%.2e", e.maxScaledError) + ")";
                              return e.reason.empty() ? s : s + ": " + e.reason;
                          },
                          [](const CandidateTimed &e) {
                              std::string s = node(e.node) + " " + ms(e.timing.medianMs);
                              if (e.speedup > 0)
                                  s += ", " + fmt("%.2fx", e.speedup) + " eager";
                              return e.newBest ? s + " (new best)" : s;
                          },
                          [](const RoundFinished &e) { return roundText(e); },
                          [](const SearchFinished &e) { return finishedText(e); },
                          [](const SearchMessage &e) { return e.text; },
                          [](const CandidateSanitizing &e) { return sanitizingText(e); },
                          [](const CandidateSanitized &e) { return sanitizedText(e); },
                          [](const BudgetStatus &e) { return budgetText(e); },
                      },
                      event);
}

} // namespace kf
