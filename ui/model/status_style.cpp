#include "model/status_style.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace kf::ui {

StatusGroup statusGroup(const QString &s)
{
    if (s == u"correct" || s == u"finished")
        return StatusGroup::Good;
    if (s == u"suspect")
        return StatusGroup::Suspect;
    if (s == u"queued" || s == u"compiling" || s == u"running")
        return StatusGroup::Pending;
    if (s.isEmpty() || s == u"stopped" || s == u"interrupted" || s == u"needs gpu")
        return StatusGroup::Neutral;
    return StatusGroup::Failed; // compile error, launch error, wrong, racy, crashed, timed out, failed
}

QColor statusColor(const QString &s)
{
    if (s == u"compile error" || s == u"launch error")
        return QColor(0xe0, 0x8a, 0x1e); // orange: the code never ran
    if (s == u"crashed" || s == u"timed out")
        return QColor(0x8e, 0x44, 0xad); // purple: the worker had to be replaced
    switch (statusGroup(s)) {
    case StatusGroup::Good: return QColor(0x2e, 0x9d, 0x4f);
    case StatusGroup::Failed: return QColor(0xc6, 0x28, 0x28);
    case StatusGroup::Suspect: return QColor(0xd4, 0xb1, 0x06);
    case StatusGroup::Pending: return QColor(0x5d, 0x8c, 0xc9);
    case StatusGroup::Neutral: break;
    }
    return QColor(0x90, 0x90, 0x90);
}

QIcon statusIcon(const QString &s)
{
    static QHash<QString, QIcon> cache;
    auto it = cache.constFind(s);
    if (it != cache.constEnd())
        return *it;
    QPixmap pm(16, 16);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(statusColor(s).darker(140));
    p.setBrush(statusColor(s));
    p.drawEllipse(QRectF(3, 3, 10, 10));
    p.end();
    return *cache.insert(s, QIcon(pm));
}

QColor bestPathColor() { return QColor(0xf5, 0x9e, 0x0b); }

} // namespace kf::ui
