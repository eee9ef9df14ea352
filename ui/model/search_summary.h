#pragma once
// What a search run found, in one sentence for the search panel, the message bar and the log:
// "Finished (rounds): 12 candidates — 10 correct, 2 compile errors. Best: #16, 0.5970 ms, 1.76×."
// It counts the candidates the run added (ids above the newest node before it started).
#include "model/session_snapshot.h"

#include <QString>

namespace kf::ui {

// `stopReason` as the search gives it ("rounds", "cancelled", "time budget (after 120 s)").
QString searchSummary(const SessionSnapshot &, std::int64_t newestBefore, const QString &stopReason);

} // namespace kf::ui
