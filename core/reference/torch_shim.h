#pragma once
// The small surface over libtorch version differences (1.13 on Debian, 2.x from PyTorch wheels).
#include <nlohmann/json.hpp>
#include <string>

namespace kf::shim {
std::string torchVersion();
bool torchHasCuda();
// PyTorch's default precision flags as they stand (cuDNN TF32 on, matmul TF32 off by default).
nlohmann::json precisionFlags();
// Graph optimisations and fusers off, so a TorchScript reference runs as eager PyTorch.
void makeJitEager();
} // namespace kf::shim
