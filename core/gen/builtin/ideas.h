#pragma once
// Internal to the catalogue: the idea families (one file each) and the helpers they share.
#include "gen/builtin/catalogue.h"
#include "gen/builtin/codegen.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kf::builtin::ideas {

void addElementwise(std::vector<IdeaDef> &);
void addReduce(std::vector<IdeaDef> &);
void addSoftmax(std::vector<IdeaDef> &);
void addNorm(std::vector<IdeaDef> &);

inline std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// DRAM traffic over the minimum when the input is read `inputReads` times and the affine
// parameters `paramReads` times (the output is written once).
double traffic(const Target &, double inputReads, double paramReads = 1);
// Fraction of the GPU a grid keeps busy: half of an SM's 2048 threads in flight per SM is taken
// as enough to saturate memory with vector loads.
double busy(const Target &, double blocks, int threadsPerBlock);
std::string gridText(double blocks, int threadsPerBlock); // "16 blocks of 1024 threads"
std::string timesText(double reads);                      // "once", "twice", "three times"

// "" when `n` is a multiple of `by`, else the reason.
std::string multipleOf(std::int64_t n, std::int64_t by, const std::string &what);
// Registers a thread needs to hold `elems` floats plus the kernel's own state, against the SM's
// 65536 registers shared by `block` threads: "" when it fits without spilling.
std::string registersFit(int elems, int block);

// How well a kernel that holds `elems` floats per thread in registers, with `block` threads per
// block, hides memory latency: its bytes in flight per SM against the ~32 KB that keep an H100/H200
// SM's share of bandwidth busy; 1 when it has enough.
double inFlight(int elems, int block);

// Placeholders of every row template: ROWS, LEN, INPUT (the Input struct), IN_PARAMS, IN_ARGS,
// IN_LAUNCH.
TemplateValues rowValues(const Target &, Loads loads = Loads::ReadOnly);
// LayerNorm / RMSNorm: EPS, CENTRE (false for RMSNorm), AFFINE, AFFINE_PARAMS, AFFINE_ARGS, AFFINE_LAUNCH.
TemplateValues normValues(const Target &);

std::string doubleLiteral(double); // "1e-05"

} // namespace kf::builtin::ideas
