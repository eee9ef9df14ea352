#pragma once
// How the built-in generator chooses ideas from what was measured: the roofline gap of the best
// kernel, its traffic and parallelism as the cost model sees them, its registers, spills and
// occupancy, and which ideas were tried on which kernel.
#include "gen/builtin/catalogue.h"
#include "gen/generator.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kf::builtin {

// "softmax_online~near(BLOCK=512, VEC=4)~2" -> "softmax_online".
std::string catalogueId(const std::string &ideaId);

// Local searches. A local search measures the points of one catalogue idea around a centre: a
// measured kernel's parameter point, or the point the cost model ranks first when no kernel of
// the idea is kept. Its id names the idea, the centre and, from the second search around the same
// centre on, how many came before: "softmax_online~near(BLOCK=512, VEC=4)", "...~2", ...
std::string tuneId(const std::string &catalogue, const Point &centre, int nth = 1);
bool isTuneId(const std::string &ideaId);
std::optional<Point> tuneCentre(const std::string &ideaId); // the centre spelled in the id

// How far a point lies from a centre: `changed` parameters differ, the farthest by `reach`
// positions in its dimension's values sorted by size (BLOCK 256 -> 512 is one position).
struct Ring {
    int reach = 0;
    int changed = 0;
    auto operator<=>(const Ring &) const = default;
};
Ring ringOf(const IdeaDef &, const Point &centre, const Point &p);
std::string ringText(const Ring &); // "one parameter moved to a neighbouring value"

// Every valid point but the centre, nearest first: one parameter moved to a neighbouring value,
// then two, ..., then values two positions away, and so on until the whole space; within a ring,
// best first by the cost model.
std::vector<Point> nearPoints(const IdeaDef &, const Target &, const Point &centre);

// The points one local search measures: the first kPointsPerSearch not in `skip` of the centre
// (when no kernel was measured there) and its nearPoints.
inline constexpr int kPointsPerSearch = 4;
std::vector<Point> tunePoints(const IdeaDef &, const Target &, const Point &centre, const std::set<Point> &skip);

// The points an idea draws its drafts from, best first, none of them in `done`: for a local
// search the points the planner gave it (params "points"), else those near its centre; for a
// catalogue idea its whole valid space.
std::vector<Point> pointsFor(const IdeaDef &, const Target &, const std::string &ideaId, const nlohmann::json &params,
                             const std::set<Point> &done);

// The parameter points generated in this session, by catalogue idea: those of the kept kernels
// (top-k and bank) and those of the tried ideas. An idea's own points are used when the record
// has them (a resumed session); otherwise its draws are replayed round by round (each idea drew
// its first correct + failed points, a catalogue idea from its space, a local search from what the
// planner gave it), which is exact as long as every draft came from the planner.
using PointSets = std::map<std::string, std::set<Point>>;
PointSets generatedPoints(const GenContext &, const Target &);
std::set<Point> generatedPoints(const GenContext &, const Target &, const std::string &catalogue);

// What a measured kernel's resources say about it.
struct KernelHealth {
    int registers = 0;    // the most any of its kernels uses
    int spillBytes = 0;   // spill stores + loads, all kernels
    double occupancy = 1; // lowest theoretical occupancy among its launches (resident warps / 64)
    int threads = 0;      // threads per block of that launch
    std::string note;     // "uses 96 registers per thread: 31% occupancy" (empty when nothing stands out)
};
// `smemPerSm`: the shared memory of one SM on the GPU it ran on.
KernelHealth kernelHealth(const KernelRecord &, const Problem &, int smemPerSm = kDefaultSmemPerSm);

// The memory floor in ms: the problem's bytes over the measured copy bandwidth (an H200's 4 TB/s
// when nothing was measured).
double memoryFloorMs(const GenContext &);

// A search with at least this many seconds left (or without a time budget) measures the `after`
// steps of an idea before proposing it, one round a step; a shorter one (a suite's 15-30 s a
// problem) goes straight to the ideas the model ranks first.
inline constexpr double kLadderSeconds = 60;

// Up to `count` ideas for this round, best first, none repeated on its parent: the catalogue's
// fresh ideas and local searches near the top-k kernels, then near the bank's kernels of other
// ideas, then farther out, then ideas the model expects to be slow. Empty only when every
// applicable idea has been tried and every valid point of each has been generated.
std::vector<Idea> planIdeas(const GenContext &, const Target &, int count);

} // namespace kf::builtin
