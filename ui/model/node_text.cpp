#include "model/node_text.h"

#include "model/format.h"
#include "model/status_style.h"

#include <QObject>
#include <QStringList>

#include <set>

namespace kf::ui {

namespace {

QString valueText(const nlohmann::json &v) { return v.is_string() ? qs(v.get<std::string>()) : qs(v.dump()); }

// The parameter-search centre of an idea ({"centre": {"BLOCK": 512, ...}}), an empty object if none.
nlohmann::json centreOf(const NodeView &idea)
{
    const nlohmann::json params = readIdeaInfo(idea.record).params;
    if (params.is_object() && params.contains("centre") && params["centre"].is_object())
        return params["centre"];
    return nlohmann::json::object();
}

// "KEY=value" of the keys of `mine` whose value some of `others` does not share (all keys when
// there are no others, or when nothing differs).
QStringList differingParams(const nlohmann::json &mine, const std::vector<nlohmann::json> &others)
{
    QStringList differ, all;
    for (const auto &[key, value] : mine.items()) {
        if (key == "idea")
            continue;
        const QString text = QStringLiteral("%1=%2").arg(qs(key), valueText(value));
        all << text;
        for (const nlohmann::json &o : others)
            if (!o.is_object() || !o.contains(key) || o[key] != value) {
                differ << text;
                break;
            }
    }
    return differ.isEmpty() ? all : differ;
}

QString candidateDifference(const SessionSnapshot &s, const NodeView &n)
{
    if (!n.draft.params.is_object())
        return {};
    std::vector<nlohmann::json> others;
    if (n.record.parent)
        for (std::int64_t id : s.children(*n.record.parent))
            if (const NodeView *o = s.node(id);
                o && o->id() != n.id() && o->isCandidate() && o->draft.params.is_object() && !o->draft.params.empty())
                others.push_back(o->draft.params);
    return differingParams(n.draft.params, others).join(QStringLiteral(" · "));
}

QString ideaDifference(const SessionSnapshot &s, const NodeView &idea)
{
    const nlohmann::json centre = centreOf(idea);
    // The other ideas of the round with the same title: only what differs from them is news.
    std::vector<nlohmann::json> others;
    if (idea.record.parent)
        for (std::int64_t id : s.children(*idea.record.parent))
            if (const NodeView *o = s.node(id);
                o && o->id() != idea.id() && o->record.kind == NodeKind::Idea && o->record.title == idea.record.title)
                others.push_back(centreOf(*o));
    if (!centre.empty())
        if (const QStringList parts = differingParams(centre, others); !parts.isEmpty())
            return QObject::tr("near %1").arg(parts.join(QStringLiteral(" · ")));
    if (const std::int64_t parent = readIdeaInfo(idea.record).parentKernel)
        return QObject::tr("builds on #%1").arg(parent);
    return {};
}

} // namespace

QString compactParams(const nlohmann::json &params)
{
    if (!params.is_object())
        return {};
    QStringList parts;
    for (const auto &[key, value] : params.items())
        if (key != "idea")
            parts << QStringLiteral("%1=%2").arg(qs(key), valueText(value));
    return parts.join(QStringLiteral(" · "));
}

QString nodeName(const NodeView &n)
{
    QString name = qs(n.record.title);
    if (n.isCandidate()) {
        // The built-in generator names a candidate by its parameters, which the details show.
        const QString params = compactParams(n.draft.params);
        const bool onlyParams =
            !params.isEmpty() && QString(params).replace(QStringLiteral(" · "), QStringLiteral(", ")) == name;
        name = onlyParams ? QStringLiteral("#%1").arg(n.id()) : QStringLiteral("#%1 %2").arg(n.id()).arg(name);
    }
    if (n.record.edited)
        name += QObject::tr(" (hand-edited)");
    return name;
}

NodeCounts countBelow(const SessionSnapshot &s, std::int64_t node)
{
    NodeCounts c;
    std::vector<std::int64_t> stack = s.children(node);
    std::set<std::int64_t> seen; // a damaged file may hold a cycle
    while (!stack.empty()) {
        const std::int64_t id = stack.back();
        stack.pop_back();
        const NodeView *n = s.node(id);
        if (!n || !seen.insert(id).second)
            continue;
        if (n->isCandidate()) {
            ++c.candidates;
            c.correct += n->record.status == "correct" ? 1 : 0;
            const NodeView *best = s.node(c.best);
            if (n->medianMs > 0 && (!best || n->medianMs < best->medianMs))
                c.best = n->id();
        }
        const auto &kids = s.children(id);
        stack.insert(stack.end(), kids.begin(), kids.end());
    }
    return c;
}

QString nodeDetails(const SessionSnapshot &s, const NodeView &n)
{
    switch (n.record.kind) {
    case NodeKind::Candidate: {
        QString text = candidateDifference(s, n);
        if (n.draft.repairOf)
            text = text.isEmpty() ? QObject::tr("repair of #%1").arg(n.draft.repairOf)
                                  : QObject::tr("repair of #%1 · %2").arg(n.draft.repairOf).arg(text);
        return text;
    }
    case NodeKind::Idea:
        return ideaDifference(s, n);
    case NodeKind::Round: {
        const NodeCounts c = countBelow(s, n.id());
        if (c.candidates == 0)
            return {};
        return plural(c.candidates, QObject::tr("candidate"), QObject::tr("candidates")) +
            QObject::tr(" · %1 correct").arg(c.correct);
    }
    default:
        return {};
    }
}

QString nodeToolTip(const SessionSnapshot &s, const NodeView &n)
{
    QString tip = nodeName(n);
    const QString all = n.isCandidate() ? compactParams(n.draft.params) : QString();
    const QString details = all.isEmpty() ? nodeDetails(s, n) : all;
    if (!details.isEmpty())
        tip += QLatin1Char('\n') + details;
    tip += QLatin1Char('\n') + statusText(n);
    if (n.medianMs > 0)
        tip += QStringLiteral("\n%1, %2").arg(formatMs(n.medianMs), formatSpeedup(n.speedup));
    return tip;
}

QString statusText(const NodeView &n)
{
    QString text = qs(n.shownStatus);
    if (n.shownStatus != n.record.status) // a finished round without a correct kernel
        text = n.shownStatus == node_status::NeedsGpu
            ? QObject::tr("finished: no correct kernel; its candidates compiled and wait for a GPU")
            : QObject::tr("finished: no correct kernel");
    if (!n.record.reason.empty())
        text += QStringLiteral(": ") + qs(n.record.reason);
    if (n.sanitizerUnchecked) {
        text += QObject::tr("\ncompute-sanitizer could not check it (unchecked)");
        if (!n.result->sanitizer->note.empty())
            text += QStringLiteral(": ") + qs(n.result->sanitizer->note);
    }
    return text;
}

QString summaryHtml(const SessionSnapshot &s, const NodeView &n)
{
    auto esc = [](const std::string &t) { return qs(t).toHtmlEscaped(); };
    auto dot = [](const NodeView &v) {
        return QStringLiteral("<span style='color:%1'>●</span>").arg(statusColor(qs(v.shownStatus)).name());
    };
    auto best = [&](std::int64_t id) -> QString {
        const NodeView *b = s.node(id);
        if (!b || b->medianMs <= 0)
            return QObject::tr("none");
        return QStringLiteral("#%1 %2 (%3)").arg(b->id()).arg(formatMs(b->medianMs), formatSpeedup(b->speedup));
    };
    QString html =
        QStringLiteral("<h3>%1 %2</h3><p>%3</p>").arg(dot(n), esc(n.record.title), statusText(n).toHtmlEscaped());
    const NodeCounts counts = countBelow(s, n.id());
    QString rows;
    if (n.record.kind == NodeKind::Round) {
        const auto summary = readRoundSummary(n.record);
        html += QObject::tr("<p>%1, %2 correct")
                    .arg(plural(counts.candidates, QObject::tr("candidate"), QObject::tr("candidates")))
                    .arg(counts.correct);
        if (summary && summary->seconds > 0)
            html += QObject::tr(", %1 s").arg(summary->seconds, 0, 'f', 1);
        html += QStringLiteral("</p>");
        if (summary) {
            html += QObject::tr("<p><b>Best of this round:</b> %1</p>").arg(best(summary->roundBestNode));
            html += QObject::tr("<p><b>Best of the session after it:</b> %1</p>").arg(best(summary->bestNode));
        }
        for (std::int64_t id : s.children(n.id()))
            if (const NodeView *idea = s.node(id)) {
                const NodeCounts c = countBelow(s, id);
                rows += QStringLiteral(
                            "<tr><td>%1 %2</td><td>%3</td><td align=right>%4 / %5</td><td align=right>%6</td></tr>")
                            .arg(dot(*idea), esc(idea->record.title), nodeDetails(s, *idea).toHtmlEscaped())
                            .arg(c.correct)
                            .arg(c.candidates)
                            .arg(formatSpeedup(idea->speedup));
            }
        if (!rows.isEmpty())
            html += QObject::tr("<table cellspacing=6><tr><th align=left>Idea</th><th align=left>Difference</th>"
                                "<th>Correct</th><th>Best</th></tr>%1</table>")
                        .arg(rows);
    } else {
        if (const QString d = nodeDetails(s, n); !d.isEmpty())
            html += QStringLiteral("<p><i>%1</i></p>").arg(d.toHtmlEscaped());
        if (n.record.kind == NodeKind::Idea) {
            const IdeaInfo info = readIdeaInfo(n.record);
            if (!n.record.text.empty())
                html += QStringLiteral("<p>%1</p>").arg(esc(n.record.text));
            if (!info.why.empty())
                html += QObject::tr("<p><b>Why:</b> %1</p>").arg(esc(info.why));
            if (info.parentKernel)
                html += QObject::tr("<p><b>Builds on:</b> %1</p>").arg(best(info.parentKernel));
        }
        html += QObject::tr("<p>%1, %2 correct; best %3</p>")
                    .arg(plural(counts.candidates, QObject::tr("candidate"), QObject::tr("candidates")))
                    .arg(counts.correct)
                    .arg(best(counts.best));
        for (std::int64_t id : s.children(n.id()))
            if (const NodeView *c = s.node(id); c && c->isCandidate())
                rows +=
                    QStringLiteral(
                        "<tr><td>%1 #%2</td><td>%3</td><td>%4</td><td align=right>%5</td><td align=right>%6</td></tr>")
                        .arg(dot(*c))
                        .arg(c->id())
                        .arg(nodeDetails(s, *c).toHtmlEscaped(), qs(c->shownStatus), formatMs(c->medianMs),
                             formatSpeedup(c->speedup));
        if (!rows.isEmpty())
            html += QObject::tr("<table cellspacing=6><tr><th align=left>Candidate</th><th align=left>Parameters</th>"
                                "<th align=left>Status</th><th>Time</th><th>Speedup</th></tr>%1</table>")
                        .arg(rows);
    }
    return html;
}

} // namespace kf::ui
