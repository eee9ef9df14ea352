#pragma once
// The problem's TorchScript reference, compiled from source and run as eager PyTorch
// (internal to the worker; includes libtorch).
#include "domain/op_graph.h"
#include "problem/problem.h"

#include <torch/script.h>

#include <memory>
#include <vector>

namespace kf::ref {

class Reference {
public:
    // Errors name the problem file and the line inside the reference source where TorchScript can.
    // A module problem's reference is its saved module, lowered to the same form (module_graph.h).
    static Result<std::unique_ptr<Reference>> compile(const Problem &);

    // A module problem's own parameter values, in the problem's order (empty for source problems):
    // trial 0 runs on them, as the model was built.
    const std::vector<torch::Tensor> &moduleParams() const { return m_moduleParams; }

    // forward(inputs..., params...) -> the outputs as a list (one tensor or the tuple's tensors).
    std::vector<torch::Tensor> run(const std::vector<torch::Tensor> &inputs, const std::vector<torch::Tensor> &params);

    // Runs the graph node by node on these arguments to record every op with its shapes and FLOPs.
    std::vector<OpNode> trace(const std::vector<torch::Tensor> &inputs, const std::vector<torch::Tensor> &params);
    // The graph without shapes (when running it is too costly, e.g. large sizes on a CPU).
    std::vector<OpNode> structure() const;

private:
    std::shared_ptr<torch::jit::CompilationUnit> m_unit;
    torch::jit::Function *m_forward = nullptr;
    std::vector<torch::Tensor> m_moduleParams;
};

// FLOPs of one op given its argument and result shapes (0 for ops that move data only).
double opFlops(const OpNode &);
// A product with diag(v) scales rows or columns: one multiply per output element, not a full
// product's 2K. Counting the full product would put the physical floor above what a kernel that
// scales needs, and mark a correct, fast kernel suspect.
void discountDiagonalProducts(std::vector<OpNode> &nodes);

} // namespace kf::ref
