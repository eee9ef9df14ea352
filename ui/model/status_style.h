#pragma once
// Colours, icons and filter groups of node statuses, shared by the outline, the graph, the chart
// and the candidate pane. Every status has a colour of its own, keyed by its string, so a verdict
// that a newer engine writes (such as "inconsistent") is styled before this build knows its enum.
#include <QColor>
#include <QIcon>
#include <QString>
#include <QStringList>

namespace kf::ui {

// Good: correct kernels, rounds and ideas that found one. Failed: every verdict that judged a
// kernel wrong or unusable. Unjudged: compiled but not run ("needs gpu"). Pending: not done yet.
enum class StatusGroup { Good, Failed, Suspect, Unjudged, Pending, Neutral };
StatusGroup statusGroup(const QString &status);
QColor statusColor(const QString &status);
// A filled dot in the status colour; `unchecked` adds an amber ring: compute-sanitizer could not
// judge the kernel (its sanitizer outcome is "unchecked"). Cached.
QIcon statusIcon(const QString &status, bool unchecked = false);
QColor bestPathColor();
QColor uncheckedColor();
// The candidate statuses a person can filter on one by one, in the order the filter lists them.
QStringList candidateStatuses();

} // namespace kf::ui
