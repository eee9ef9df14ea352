#include "physical_floor.h"

#include "datasheet.h"

#include <algorithm>
#include <cstdio>

namespace kf {

// A missing rate or bandwidth drops its term rather than borrowing another precision's rate: a
// floor must stay a lower bound, and a slower stand-in rate would raise it above the real one.
double floorMs(double flops, double bytes, Precision precision, const Ceilings &ceilings)
{
    auto rate = [&](const char *key) {
        auto it = ceilings.tflops.find(key);
        return it == ceilings.tflops.end() || !(it->second > 0) ? 0.0 : it->second;
    };
    double tflops = 0;
    switch (precision) {
    case Precision::FP32:
        tflops = rate("fp32");
        break;
    case Precision::TF32:
        tflops = rate("tf32");
        break;
    case Precision::TF32x3:
        tflops = rate("tf32") / 3;
        break;
    case Precision::FP16:
        tflops = rate("fp16");
        break;
    case Precision::BF16:
        tflops = rate("bf16");
        break;
    case Precision::BF16x3:
        tflops = rate("bf16") / 3;
        break;
    }
    double computeMs = tflops > 0 && flops > 0 ? flops / (tflops * 1e12) * 1e3 : 0;
    double memoryMs = ceilings.bandwidthGBs > 0 && bytes > 0 ? bytes / (ceilings.bandwidthGBs * 1e9) * 1e3 : 0;
    return std::max(computeMs, memoryMs);
}

} // namespace kf

namespace kf::gpu {

double physicalFloorMs(double flops, double bytes, const Ceilings &measured, const std::string &gpuName)
{
    const Datasheet sheet = datasheetFor(gpuName);
    double fastest = 0;
    for (const auto &[name, rate] : measured.tflops)
        fastest = std::max(fastest, rate);
    for (const auto &[name, rate] : sheet.tflops)
        fastest = std::max(fastest, rate);
    const double bandwidth = std::max(measured.bandwidthGBs, sheet.bandwidthGBs);
    const double computeMs = fastest > 0 && flops > 0 ? flops / (fastest * 1e12) * 1e3 : 0;
    const double memoryMs = bandwidth > 0 && bytes > 0 ? bytes / (bandwidth * 1e9) * 1e3 : 0;
    return std::max(computeMs, memoryMs);
}

std::string implausibleCeilings(const Ceilings &measured, const std::string &gpuName)
{
    const Datasheet sheet = datasheetFor(gpuName);
    char text[200];
    auto shortOf = [&](const char *what, double got, double expected, const char *unit) {
        if (!(expected > 0) || got >= kPlausibleFraction * expected)
            return false;
        std::snprintf(text, sizeof text, "%s measured %.3g %s, under %.0f %% of the datasheet's %.3g %s", what, got,
                      unit, 100 * kPlausibleFraction, expected, unit);
        return true;
    };
    if (shortOf("bandwidth", measured.bandwidthGBs, sheet.bandwidthGBs, "GB/s"))
        return text;
    for (const auto &[key, rate] : measured.tflops) {
        auto it = sheet.tflops.find(key);
        if (it != sheet.tflops.end() && shortOf(key.c_str(), rate, it->second, "TFLOP/s"))
            return text;
    }
    return {};
}

FloorJudgement judgeAgainstFloor(double medianMs, double flops, double bytes, const Ceilings &measured,
                                 const std::string &gpuName, double launchMs)
{
    FloorJudgement j;
    j.physicalFloorMs = physicalFloorMs(flops, bytes, measured, gpuName);
    char text[320];
    if (j.physicalFloorMs <= 0) {
        j.note = "no FLOP or byte count: the floor check cannot tell; the checked timed runs vouch for this time";
        return j;
    }
    if (launchMs > 0 && j.physicalFloorMs < launchMs) {
        std::snprintf(text, sizeof text,
                      "the physical floor (%.3g ms) is below the cost of one launch on this GPU (%.3g ms): the "
                      "floor check cannot tell here; the checked timed runs vouch for this time",
                      j.physicalFloorMs, launchMs);
        j.note = text;
    }
    if (medianMs > 0 && medianMs < kSuspectFraction * j.physicalFloorMs) {
        std::snprintf(text, sizeof text,
                      "median %.4g ms is below the physical floor of %.4g ms (the FLOPs at the fastest rate, the "
                      "bytes at the highest bandwidth): the kernel cannot have done all the work",
                      medianMs, j.physicalFloorMs);
        j.suspect = true;
        j.reason = text;
    }
    return j;
}

} // namespace kf::gpu
