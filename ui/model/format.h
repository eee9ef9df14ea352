#pragma once
// How numbers read in the workbench: one place, so the outline, the metrics and the chart agree.
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace kf::ui {

inline QString qs(const std::string &s) { return QString::fromStdString(s); }

QString formatMs(double ms);       // "0.5970 ms"; "" for 0
QString formatSpeedup(double x);   // "1.76×"; "" for 0
QString formatPercent(double p);   // "84.7 %"; "" for 0
QString formatCount(double v);     // "1.34 G" (FLOPs and such)
QString formatBytes(double bytes); // "2.15 GB" (decimal units, as bandwidths are quoted)
QString formatShape(const std::vector<std::int64_t> &shape);
QString plural(int n, const QString &one, const QString &many); // "1 error", "2 errors"

} // namespace kf::ui
