#pragma once
// How the built-in generator chooses ideas from what was measured: the roofline gap of the best
// kernel, its traffic and parallelism as the cost model sees them, its registers, spills and
// occupancy, and which ideas were tried on which kernel.
#include "gen/builtin/catalogue.h"
#include "gen/generator.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kf::builtin {

// "softmax_online~near(BLOCK=512, VEC=4)" -> "softmax_online".
std::string catalogueId(const std::string &ideaId);
// The id of a local search around a measured kernel's parameter point.
std::string tuneId(const std::string &catalogue, const Point &centre);
bool isTuneId(const std::string &ideaId);

// Points next to `centre`: those that change one value first, then those that change two, each
// group best first by the cost model; `centre` itself is not among them.
std::vector<Point> nearPoints(const IdeaDef &, const Target &, const Point &centre);

// The points an idea draws its drafts from, best first: the whole valid space, or for a local
// search the points near its centre.
std::vector<Point> pointsFor(const IdeaDef &, const Target &, const std::string &ideaId, const nlohmann::json &params);

// The points of a catalogue idea already generated in this session: those of the kept kernels
// (top-k and bank), and those earlier rounds drew, replayed from the tried ideas (each drew its
// first correct + failed points, skipping what was generated before it).
std::set<Point> generatedPoints(const GenContext &, const Target &, const std::string &catalogue);

// What a measured kernel's resources say about it.
struct KernelHealth {
    int registers = 0;      // the most any of its kernels uses
    int spillBytes = 0;     // spill stores + loads, all kernels
    double occupancy = 1;   // lowest theoretical occupancy among its launches (resident warps / 64)
    int threads = 0;        // threads per block of that launch
    std::string note;       // "uses 96 registers per thread: 31% occupancy" (empty when nothing stands out)
};
KernelHealth kernelHealth(const KernelRecord &, const Problem &);

// The memory floor in ms: the problem's bytes over the measured copy bandwidth (an H200's 4 TB/s
// when nothing was measured).
double memoryFloorMs(const GenContext &);

// Up to `count` ideas for this round, best first, none repeated on its parent.
std::vector<Idea> planIdeas(const GenContext &, const Target &, int count);

} // namespace kf::builtin
