#include "model/format.h"

#include <QStringList>

#include <cmath>

namespace kf::ui {

QString formatMs(double ms)
{
    if (!(ms > 0))
        return {};
    return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 10 ? 4 : 2);
}

QString formatSpeedup(double x) { return x > 0 ? QStringLiteral("%1×").arg(x, 0, 'f', 2) : QString(); }

QString formatPercent(double p) { return p > 0 ? QStringLiteral("%1 %").arg(p, 0, 'f', 1) : QString(); }

namespace {

QString scaled(double v, const QString &unit)
{
    static const char *prefix[] = {"", "K", "M", "G", "T", "P"};
    int p = 0;
    while (std::fabs(v) >= 1000 && p < 5) {
        v /= 1000;
        ++p;
    }
    return QStringLiteral("%1 %2%3").arg(v, 0, 'g', 3).arg(QLatin1String(prefix[p]), unit).trimmed();
}

} // namespace

QString formatCount(double v) { return scaled(v, QString()); }
QString formatBytes(double bytes) { return scaled(bytes, QStringLiteral("B")); }

QString plural(int n, const QString &one, const QString &many)
{
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QString formatShape(const std::vector<std::int64_t> &shape)
{
    QStringList dims;
    for (std::int64_t d : shape)
        dims << QString::number(qint64(d));
    return QLatin1Char('[') + dims.join(QStringLiteral(" × ")) + QLatin1Char(']');
}

} // namespace kf::ui
