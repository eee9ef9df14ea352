#pragma once
// One immutable reading of a session file: everything the views show, computed once on the
// reader's thread and shared by `std::shared_ptr<const SessionSnapshot>` with the GUI thread. A
// newer reading replaces an older one; nobody changes one after it is made.
#include "eval/protocol.h"
#include "problem/problem.h"
#include "search/records.h"
#include "search/settings.h"
#include "search/trajectory.h"
#include "store/session_store.h"

#include <QMetaType>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf::ui {

// A node as the views see it: the stored row plus what is derived from it.
struct NodeView {
    NodeRecord record;
    std::optional<EvalResult> result; // candidates that were evaluated
    DraftInfo draft;
    double medianMs = 0;       // correct candidates with a timing; rounds and ideas: the best below
    double speedup = 0;        // eager / median, 0 when either is unknown
    double percentOfFloor = 0; // floor / median × 100, 0 when unknown
    std::int64_t ideaNode = 0; // the idea above a candidate (through repairs and edits)
    bool onBestPath = false;   // the best kernel and every node above it
    int depth = 0;             // 0 for the root
    // The status the views colour and filter by: the stored one, except for a finished round
    // without a correct kernel, which shows "needs gpu" when candidates below wait for a GPU (a
    // compile-only search) and "failed" otherwise.
    std::string shownStatus;
    bool sanitizerUnchecked = false; // compute-sanitizer ran but could not judge it ("unchecked")

    std::int64_t id() const { return record.id; }
    bool isCandidate() const { return record.kind == NodeKind::Candidate; }
};

struct SessionSnapshot {
    std::string path;
    bool readOnly = false; // the workbench will not write to it (an example, a read-only file)
    SessionMeta meta;
    std::optional<Problem> problem; // parsed from the session's own problem text
    std::string problemError;       // why it did not parse
    SearchSettings settings;
    nlohmann::json generatorSettings; // meta generator_settings (never a key), null when absent
    Ceilings ceilings;                // meta "ceilings", zero when unknown
    double eagerMs = 0;               // the eager baseline's median
    double compiledMs = 0;            // torch.compile's median (meta "torch_compile"), 0 when unknown
    std::vector<NodeView> nodes;      // ordered by id: a parent always comes before its children
    Trajectory trajectory;
    std::int64_t bestNode = 0;  // fastest correct candidate, 0 when none
    std::int64_t lastEvent = 0; // id of the newest event when it was read
    std::string version;        // changes whenever a node, an event or the meta changes

    const NodeView *node(std::int64_t id) const;
    const std::vector<std::int64_t> &children(std::int64_t id) const; // ordered by id
    std::optional<std::int64_t> rootId() const;
    std::string ideaTitle(std::int64_t candidate) const; // "" when none
    std::string ideaText(std::int64_t candidate) const;

    // Filled by readSnapshot().
    std::map<std::int64_t, std::size_t> index;
    std::map<std::int64_t, std::vector<std::int64_t>> childIds;
};
using SnapshotPtr = std::shared_ptr<const SessionSnapshot>;

// Reads the whole session. Errors are the store's (a damaged file says so).
Result<SnapshotPtr> readSnapshot(const SessionStore &);
// Reads the file through a read-only connection (reading never changes a file, not even its
// journal mode); `writable` says whether the workbench may write to it later.
Result<SnapshotPtr> readSnapshot(const std::string &path, bool writable = false);

// Meta key where a torch.compile time may be recorded: {"median_ms": ...} (docs/gui.md).
inline constexpr std::string_view kTorchCompileMeta = "torch_compile";

} // namespace kf::ui

Q_DECLARE_METATYPE(kf::ui::SnapshotPtr)
