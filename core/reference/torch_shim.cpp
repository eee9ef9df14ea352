#include "torch_shim.h"

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

namespace kf::shim {

std::string torchVersion() { return TORCH_VERSION; }

bool torchHasCuda() { return torch::cuda::is_available(); }

// Only the getters: 2.9 replaced the TF32 setters with per-backend precision strings, and mixing
// the two setter styles raises an error, so the worker never sets these flags. It reports them as
// found (PyTorch's defaults: cuDNN TF32 on, matmul TF32 off).
nlohmann::json precisionFlags()
{
    auto &ctx = at::globalContext();
    return {{"matmul_tf32", ctx.allowTF32CuBLAS()},
            {"cudnn_tf32", ctx.allowTF32CuDNN()},
            {"cudnn_enabled", ctx.userEnabledCuDNN()}};
}

void makeJitEager()
{
    torch::jit::setGraphExecutorOptimize(false);
    torch::jit::setTensorExprFuserEnabled(false);
}

} // namespace kf::shim
