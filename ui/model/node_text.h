#pragma once
// What the views write about a node, so the outline, the graph, the chart and the candidate pane
// say the same thing: a short name, and the details that tell it apart from its siblings (a
// candidate's parameters, an idea's difference from the other ideas of its round, a round's
// counts).
#include "model/session_snapshot.h"

#include <QString>

#include <nlohmann/json.hpp>

namespace kf::ui {

// "BLOCK=512 · SPLIT=64": a generator's parameters, without the idea's own id; "" for none.
QString compactParams(const nlohmann::json &params);

// "#21" for a candidate whose title only repeats its parameters, "#21 title" otherwise, a
// "(hand-edited)" mark; the title for rounds and ideas.
QString nodeName(const NodeView &);

// What sets a node apart from its siblings: for a candidate the parameters whose values differ
// from those of the other candidates of its idea (all of them when it has no siblings); for an
// idea the same within its round (the centre of a parameter search where ideas share a title,
// else the kernel it builds on); for a round how many candidates it judged and how many were
// correct.
QString nodeDetails(const SessionSnapshot &, const NodeView &);

// Why the node shows the status it shows, for tooltips: "correct", "finished: no correct kernel
// (candidates wait for a GPU)", the stored reason, and the sanitizer's "unchecked" note.
QString statusText(const NodeView &);

// The node's tooltip wherever it is shown: its name, all its parameters (or its details), its
// status and why, and its time.
QString nodeToolTip(const SessionSnapshot &, const NodeView &);

// Candidates below a node (through repairs and hand edits), and those that are correct.
struct NodeCounts {
    int candidates = 0, correct = 0;
    std::int64_t best = 0; // the fastest correct one, 0 when none
};
NodeCounts countBelow(const SessionSnapshot &, std::int64_t node);

// What the candidate pane shows for a round or an idea, as HTML: its status and why, its counts
// and bests, and a table of its ideas (with their differences) or candidates.
QString summaryHtml(const SessionSnapshot &, const NodeView &);

} // namespace kf::ui
