#include "model/search_summary.h"

#include "model/format.h"

#include <QObject>
#include <QStringList>

#include <map>

namespace kf::ui {

QString searchSummary(const SessionSnapshot &s, std::int64_t newestBefore, const QString &stopReason)
{
    std::map<std::string, int> byStatus;
    int candidates = 0;
    for (const NodeView &n : s.nodes)
        if (n.isCandidate() && n.id() > newestBefore) {
            ++candidates;
            ++byStatus[n.record.status];
        }
    QString text = QObject::tr("Finished (%1): ").arg(stopReason);
    if (candidates == 0) {
        text += QObject::tr("no candidate was judged");
    } else {
        // Correct first, then the kernels waiting for a GPU, then the failures by count.
        QStringList parts;
        if (int c = byStatus["correct"])
            parts << QObject::tr("%1 correct").arg(c);
        if (int c = byStatus["needs gpu"])
            parts << QObject::tr("%1 compiled and waiting for a GPU").arg(c);
        std::multimap<int, std::string, std::greater<>> rest;
        for (const auto &[status, count] : byStatus)
            if (status != "correct" && status != "needs gpu")
                rest.emplace(count, status);
        for (const auto &[count, status] : rest)
            parts << QStringLiteral("%1 %2").arg(count).arg(qs(status));
        text += plural(candidates, QObject::tr("candidate"), QObject::tr("candidates")) + QStringLiteral(" — ") +
            parts.join(QStringLiteral(", "));
    }
    text += QStringLiteral(". ");
    if (const NodeView *best = s.node(s.bestNode)) {
        text += QObject::tr("Best: #%1, %2").arg(best->id()).arg(formatMs(best->medianMs));
        if (best->speedup > 0)
            text += QStringLiteral(", ") + formatSpeedup(best->speedup);
        if (best->id() <= newestBefore)
            text += QObject::tr(" (from before this run)");
        text += QLatin1Char('.');
    } else {
        text += QObject::tr("No kernel has been timed yet.");
    }
    return text;
}

} // namespace kf::ui
