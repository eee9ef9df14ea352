#pragma once
// The one rule for "faster than physics" (docs/verification.md). A timed median under the time
// the problem's FLOPs take at the GPU's fastest dense rate, or its bytes at its highest bandwidth,
// cannot be a kernel that did all the work. It is a second line of defence behind the checked
// timed runs, and only where a launch costs less than the floor can it tell anything at all.
#include "domain/gpu_facts.h"
#include "kernel/candidate.h"

#include <string>

namespace kf {

// Roofline floor in ms for a problem at a precision, given the ceilings: max(flops/rate, bytes/bw).
// Rates: fp32 for FP32, tf32 for TF32, tf32/3 for TF32x3, fp16, bf16, bf16/3 for BF16x3.
double floorMs(double flops, double bytes, Precision, const Ceilings &);

} // namespace kf

namespace kf::gpu {

// A measured median under this fraction of the floor is suspect: the margin covers timing noise.
inline constexpr double kSuspectFraction = 0.9;

struct FloorJudgement {
    double physicalFloorMs = 0; // 0 when the problem has no FLOP or byte count
    bool suspect = false;
    std::string reason; // why suspect
    std::string note;   // where the check cannot tell (the floor is below one launch)
};

// The highest of the measured ceilings and the datasheet's rates for the named GPU decide the
// floor, so that a stand-in ceiling a little under the hardware's never raises it.
double physicalFloorMs(double flops, double bytes, const Ceilings &measured, const std::string &gpuName);

// Ceilings measured while other work shared the GPU come out far too low, and a floor from them
// far too high. A measured figure under this fraction of the named GPU's datasheet value is taken
// for such a measurement: it is not kept, and it is measured again.
inline constexpr double kPlausibleFraction = 0.4;
// Empty when every measured figure is at least kPlausibleFraction of the datasheet's (or the GPU
// has no datasheet row); otherwise which figure fell short, by how much.
std::string implausibleCeilings(const Ceilings &measured, const std::string &gpuName);

FloorJudgement judgeAgainstFloor(double medianMs, double flops, double bytes, const Ceilings &measured,
                                 const std::string &gpuName, double launchMs);

} // namespace kf::gpu
