#pragma once
// Peak rates from the datasheet, keyed by device name; CUDA 13 no longer reports clocks. Kept
// apart from runtime.h (which includes the CUDA runtime) so that code without a GPU, such as the
// workbench's problem browser, can show a roofline floor for a named GPU.
#include <map>
#include <string>
#include <vector>

namespace kf::gpu {

struct Datasheet {
    double bandwidthGBs = 0;
    std::map<std::string, double> tflops; // dense
};
// The row whose key the name contains ("NVIDIA H200" -> "H200"); empty when none does.
Datasheet datasheetFor(const std::string &deviceName);
// The keys of the table, in its order ("H200", "H100", ...).
std::vector<std::string> datasheetNames();

} // namespace kf::gpu
