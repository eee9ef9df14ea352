#include "model/status_style.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace kf::ui {

namespace {

struct Style {
    const char16_t *status;
    StatusGroup group;
    QRgb colour;
};

// One row per status word (domain/evaluation.h verdicts, search/records.h node statuses), each with
// a colour that no other status shares.
constexpr Style kStyles[] = {
    {u"correct", StatusGroup::Good, 0x2e9d4f},
    {u"finished", StatusGroup::Good, 0x1f7a3d},        // a round that found a correct kernel
    {u"compile error", StatusGroup::Failed, 0xe08a1e}, // orange: the code never ran
    {u"launch error", StatusGroup::Failed, 0xb35900},
    {u"wrong", StatusGroup::Failed, 0xc62828},
    {u"racy", StatusGroup::Failed, 0xd81b60},
    {u"sanitizer", StatusGroup::Failed, 0x9c2a6b},
    {u"inconsistent", StatusGroup::Failed, 0x8d5a2b}, // correct when verified, wrong when timed
    {u"crashed", StatusGroup::Failed, 0x8e44ad},      // purple: the worker had to be replaced
    {u"timed out", StatusGroup::Failed, 0x5e35b1},
    {u"failed", StatusGroup::Failed, 0x7f1d1d}, // an idea or round without a correct kernel
    {u"suspect", StatusGroup::Suspect, 0xd4b106},
    {u"needs gpu", StatusGroup::Unjudged, 0x4f7c8a}, // compiled; nothing has run it
    {u"queued", StatusGroup::Pending, 0x7fa6d9},
    {u"compiling", StatusGroup::Pending, 0x3f7fd0},
    {u"running", StatusGroup::Pending, 0x1e5aa8},
    {u"stopped", StatusGroup::Neutral, 0x9a9a9a},
    {u"interrupted", StatusGroup::Neutral, 0x6b6b6b},
};

const Style *styleOf(const QString &s)
{
    for (const Style &st : kStyles)
        if (s == QStringView(st.status))
            return &st;
    return nullptr;
}

} // namespace

StatusGroup statusGroup(const QString &s)
{
    if (const Style *st = styleOf(s))
        return st->group;
    return s.isEmpty() ? StatusGroup::Neutral : StatusGroup::Failed; // a verdict this build does not know
}

QColor statusColor(const QString &s)
{
    if (const Style *st = styleOf(s))
        return QColor(st->colour);
    return s.isEmpty() ? QColor(0x8a, 0x99, 0xb4) : QColor(0x5a, 0x5a, 0x5a);
}

QIcon statusIcon(const QString &s, bool unchecked)
{
    static QHash<QString, QIcon> cache;
    const QString key = unchecked ? s + QStringLiteral("|unchecked") : s;
    auto it = cache.constFind(key);
    if (it != cache.constEnd())
        return *it;
    QPixmap pm(16, 16);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    if (unchecked) {
        p.setPen(QPen(uncheckedColor(), 2));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(QRectF(1, 1, 14, 14));
    }
    p.setPen(statusColor(s).darker(140));
    p.setBrush(statusColor(s));
    p.drawEllipse(unchecked ? QRectF(4, 4, 8, 8) : QRectF(3, 3, 10, 10));
    p.end();
    return *cache.insert(key, QIcon(pm));
}

QColor bestPathColor() { return QColor(0xf5, 0x9e, 0x0b); }
QColor uncheckedColor() { return QColor(0xff, 0x6f, 0x00); }

QStringList candidateStatuses()
{
    return {QStringLiteral("correct"),      QStringLiteral("needs gpu"), QStringLiteral("compile error"),
            QStringLiteral("launch error"), QStringLiteral("wrong"),     QStringLiteral("inconsistent"),
            QStringLiteral("racy"),         QStringLiteral("sanitizer"), QStringLiteral("crashed"),
            QStringLiteral("timed out"),    QStringLiteral("suspect"),   QStringLiteral("queued"),
            QStringLiteral("compiling")};
}

} // namespace kf::ui
