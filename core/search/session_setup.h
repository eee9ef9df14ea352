#pragma once
// A session for a problem: what a new one records and how an existing one is found. One place for
// the CLI's search and eval, the suite and the workbench.
#include "problem/problem.h"
#include "store/session_store.h"
#include "util/error.h"

#include <cstddef>
#include <string>

namespace kf {

// The problem text a session keeps: the problem's own, with its module ([module_data]) when the
// text stays within `limit` bytes; past it, the file's text, which names the module file instead:
// SQLite keeps no value over 1 GB, writing hundreds of megabytes costs seconds, and the problem's
// folder has the module already.
inline constexpr std::size_t kSessionTextLimit = std::size_t(64) << 20;
std::string sessionProblemText(const Problem &problem, std::size_t limit = kSessionTextLimit);

// What a new session of `problem` records (its settings, GPU and baseline are the caller's).
SessionMeta sessionMetaFor(const Problem &problem, const std::string &generator, const std::string &writer);

// The session at `path`, or a new one made with `meta` where no file is there. A file that is
// there but cannot be opened is that error, never a new session over it.
Result<SessionStore> openOrCreateSession(const std::string &path, const SessionMeta &meta);

} // namespace kf
