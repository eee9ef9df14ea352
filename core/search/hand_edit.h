#pragma once
// Candidates written or edited by hand (kernelforge-cli eval --session, the workbench's
// Re-benchmark): where they go in a session's tree. A hand-edited kernel is a child of the node it
// was edited from and is marked `edited`; one written from scratch hangs under the root in round 0,
// so the trajectory counts it from the start (docs/search.md).
#include "domain/evaluation.h"
#include "problem/problem.h"
#include "store/session_store.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kf {

// The session's root node, added (titled with the problem) when the session has none yet.
Result<std::int64_t> ensureRoot(SessionStore &, const Problem &);

// Adds the evaluated candidate under `parent` (the node it was edited from; none: the root), in
// the parent's round, with status and reason from the result and `edited` set. Returns its id.
Result<std::int64_t> recordHandEdited(SessionStore &, const Problem &, std::optional<std::int64_t> parent,
                                      const std::string &title, const std::string &source, const EvalResult &);

} // namespace kf
