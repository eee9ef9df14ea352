#pragma once
// The search's progress and time left, from the time each candidate has actually taken. The clock
// starts at the first judged candidate, so what comes before it (starting workers, measuring the
// eager baseline, the first answer of a model) does not count as time per candidate; a batch
// judged at once counts as one step of that many candidates.
#include <algorithm>

namespace kf::ui {

class ProgressEstimate {
public:
    // `total` candidates expected; `budgetSeconds` 0 for none.
    void start(int total, double budgetSeconds)
    {
        *this = ProgressEstimate{};
        m_total = std::max(1, total);
        m_budget = budgetSeconds;
    }
    void queued() { m_total = std::max(m_total, m_done + 1); } // a repair or more work than expected
    void judged(double elapsedSeconds)
    {
        ++m_done;
        m_total = std::max(m_total, m_done);
        if (m_firstAt < 0)
            m_firstAt = elapsedSeconds;
        if (elapsedSeconds - m_firstAt < kSameMoment)
            m_doneAtFirst = m_done; // judged together with the first: no time measured yet
    }
    int done() const { return m_done; }
    int total() const { return m_total; }
    // Seconds left: measured time per candidate times those left, capped by the budget left;
    // -1 while nothing has been measured and there is no budget.
    double etaSeconds(double elapsedSeconds) const
    {
        double eta = -1;
        const int measured = m_done - m_doneAtFirst;
        if (m_firstAt >= 0 && measured > 0 && elapsedSeconds > m_firstAt)
            eta = (elapsedSeconds - m_firstAt) / measured * (m_total - m_done);
        if (m_budget > 0) {
            const double left = std::max(0.0, m_budget - elapsedSeconds);
            eta = eta < 0 ? left : std::min(eta, left);
        }
        return eta;
    }
    // Of the run, by candidates or by the time budget, whichever is further.
    double fraction(double elapsedSeconds) const
    {
        double f = double(m_done) / m_total;
        if (m_budget > 0)
            f = std::max(f, elapsedSeconds / m_budget);
        return std::min(1.0, f);
    }

private:
    static constexpr double kSameMoment = 0.05; // seconds: results of one batch arrive together
    int m_done = 0, m_total = 1, m_doneAtFirst = 0;
    double m_firstAt = -1, m_budget = 0;
};

} // namespace kf::ui
