#pragma once
// A unified diff of two texts by lines (longest common subsequence), for "diff against parent".
#include <QString>

namespace kf::ui {

// Hunks with `context` lines around each change, headed "--- fromName" / "+++ toName"; "" when
// the texts are equal. Texts longer than a few thousand lines are compared by a cheaper rule
// (common prefix and suffix only) so the GUI never stalls.
QString unifiedDiff(const QString &from, const QString &to, const QString &fromName, const QString &toName,
                    int context = 3);

} // namespace kf::ui
