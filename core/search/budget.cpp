#include "search/budget.h"

#include <algorithm>
#include <cstdio>

namespace kf {

namespace {

template <typename T>
void read(const nlohmann::json &j, const char *key, T &out)
{
    // Sessions are untrusted files: a field of the wrong type reads as missing.
    if (auto it = j.find(key); it != j.end())
        try {
            out = it->get<T>();
        } catch (const nlohmann::json::exception &) {
        }
}

} // namespace

std::string secondsText(double s)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.1f s", s);
    return b;
}

void to_json(nlohmann::json &j, const RunBudget &b)
{
    const BudgetSplit &s = b.split;
    j = {{"budget_s", b.budgetSeconds},
         {"elapsed_s", b.elapsedSeconds},
         {"setup_s", s.setup},
         {"compiling_s", s.compiling},
         {"verifying_s", s.verifying},
         {"timing_s", s.timing},
         {"gate_s", s.gate},
         {"idle_s", s.idle},
         {"gate_background_s", b.gateBackgroundSeconds},
         {"gate_runs", b.gateRuns},
         {"gate_findings", b.gateFindings},
         {"best_node", b.bestNode},
         {"best_gate", b.bestGate},
         {"best_gate_note", b.bestGateNote},
         {"best_checked_node", b.bestCheckedNode},
         {"best_checked_ms", b.bestCheckedMs}};
}

void from_json(const nlohmann::json &j, RunBudget &b)
{
    BudgetSplit &s = b.split;
    read(j, "budget_s", b.budgetSeconds);
    read(j, "elapsed_s", b.elapsedSeconds);
    read(j, "setup_s", s.setup);
    read(j, "compiling_s", s.compiling);
    read(j, "verifying_s", s.verifying);
    read(j, "timing_s", s.timing);
    read(j, "gate_s", s.gate);
    read(j, "idle_s", s.idle);
    read(j, "gate_background_s", b.gateBackgroundSeconds);
    read(j, "gate_runs", b.gateRuns);
    read(j, "gate_findings", b.gateFindings);
    read(j, "best_node", b.bestNode);
    read(j, "best_gate", b.bestGate);
    read(j, "best_gate_note", b.bestGateNote);
    read(j, "best_checked_node", b.bestCheckedNode);
    read(j, "best_checked_ms", b.bestCheckedMs);
}

std::optional<RunBudget> readRunBudget(const nlohmann::json &j)
{
    if (!j.is_object())
        return std::nullopt;
    return j.get<RunBudget>();
}

std::string describe(const BudgetSplit &s)
{
    return "setup " + secondsText(s.setup) + ", compiling " + secondsText(s.compiling) + ", verifying " +
        secondsText(s.verifying) + ", timing " + secondsText(s.timing) + ", gate " + secondsText(s.gate) + ", idle " +
        secondsText(s.idle);
}

std::string describe(const RunBudget &b)
{
    std::string out =
        b.budgetSeconds > 0 ? "budget " + secondsText(b.budgetSeconds) + ", used " : "no time budget, ran ";
    out += secondsText(b.elapsedSeconds) + ": " + describe(b.split);
    if (b.gateBackgroundSeconds > 0)
        out += "; compute-sanitizer also ran " + secondsText(b.gateBackgroundSeconds) + " while the GPU waited";
    if (b.bestNode == 0)
        return out + "; no correct kernel";
    const std::string best = "best #" + std::to_string(b.bestNode);
    if (b.bestGate == "clean")
        return out + "; " + best + " passed compute-sanitizer";
    out += "; " + best + (b.bestGate == "off" ? " unchecked (the gate is off" : " unchecked (" + b.bestGateNote);
    if (b.bestGate == "off" && !b.bestGateNote.empty())
        out += ": " + b.bestGateNote;
    out += ")";
    if (b.bestCheckedNode != 0) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.4f ms", b.bestCheckedMs);
        out += ", the fastest that passed is #" + std::to_string(b.bestCheckedNode) + " (" + ms + ")";
    }
    return out;
}

BudgetClock::BudgetClock() : m_start(Clock::now()), m_since(m_start) {}

double &BudgetClock::slot(Part p)
{
    switch (p) {
    case Setup:
        return m_split.setup;
    case Compiling:
        return m_split.compiling;
    case Verifying:
        return m_split.verifying;
    case Timing:
        return m_split.timing;
    case Gate:
        return m_split.gate;
    case Idle:
        break;
    }
    return m_split.idle;
}

void BudgetClock::enter(Part p)
{
    const auto now = Clock::now();
    slot(m_part) += std::chrono::duration<double>(now - m_since).count();
    m_since = now;
    m_part = p;
}

void BudgetClock::shift(Part from, Part to, double s)
{
    s = std::clamp(s, 0.0, slot(from));
    slot(from) -= s;
    slot(to) += s;
}

BudgetSplit BudgetClock::split() const
{
    BudgetClock now = *this;
    now.enter(m_part);
    return now.m_split;
}

double BudgetClock::elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }

} // namespace kf
