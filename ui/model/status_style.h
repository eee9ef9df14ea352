#pragma once
// Colours and icons of node statuses, shared by the outline, the graph and the chart.
#include <QColor>
#include <QIcon>
#include <QString>

namespace kf::ui {

enum class StatusGroup { Good, Failed, Pending, Suspect, Neutral };
StatusGroup statusGroup(const QString &status);
QColor statusColor(const QString &status);
QIcon statusIcon(const QString &status); // a filled dot in the status colour, cached
QColor bestPathColor();

} // namespace kf::ui
