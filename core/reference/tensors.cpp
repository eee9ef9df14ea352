#include "tensors.h"

#include <cmath>
#include <limits>

namespace kf::ref {

torch::Dtype torchDtype(DType t)
{
    switch (t) {
    case DType::F32:
        return torch::kFloat32;
    case DType::F16:
        return torch::kFloat16;
    case DType::BF16:
        return torch::kBFloat16;
    case DType::F64:
        return torch::kFloat64;
    case DType::I32:
        return torch::kInt32;
    case DType::I64:
        return torch::kInt64;
    case DType::Bool:
        return torch::kBool;
    }
    return torch::kFloat32;
}

bool isFloating(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64; }

std::vector<TrialSpec> trialPlan(const Problem &p, int trials, std::uint64_t baseSeed)
{
    std::vector<Dist> rotation = p.inputs.empty() ? std::vector<Dist>{Dist::Uniform} : p.inputs.front().distributions;
    if (rotation.empty())
        rotation = {Dist::Uniform};
    std::vector<TrialSpec> plan;
    for (int i = 0; i < trials; ++i)
        plan.push_back({i, baseSeed + std::uint64_t(i) * 7919u, toString(rotation[std::size_t(i) % rotation.size()]),
                        i > 0, false});
    if (p.normalization)
        plan.push_back({trials, baseSeed + 104729u, "offset", trials > 1, true});
    return plan;
}

namespace {

torch::Tensor draw(const std::string &dist, torch::IntArrayRef shape, torch::Device dev)
{
    // Drawn in fp32 on the device, then cast: the same values whatever the target dtype.
    auto o = torch::TensorOptions().dtype(torch::kFloat32).device(dev);
    if (dist == "normal")
        return torch::randn(shape, o);
    if (dist == "laplace") {
        // rand() returns exactly 0 about once in 2^24 draws: u = -0.5 would give -inf, so the
        // magnitude stops at the one the next representable u gives (about 16.6).
        auto u = torch::rand(shape, o) - 0.5;
        return -torch::sign(u) * torch::log1p(-2.0 * torch::abs(u)).clamp_min(-16.7);
    }
    if (dist == "lognormal")
        return torch::exp(torch::randn(shape, o));
    if (dist == "exponential")
        return torch::empty(shape, o).exponential_(1.0);
    if (dist == "offset")
        return torch::randn(shape, o) * 0.1 + 1000.0;
    return torch::rand(shape, o); // uniform [0, 1), KernelBench's own
}

} // namespace

std::vector<torch::Tensor> makeInputs(const Problem &p, const TrialSpec &t, torch::Device dev)
{
    torch::manual_seed(t.seed);
    std::vector<torch::Tensor> out;
    for (const InputSpec &in : p.inputs) {
        if (isFloating(in.dtype)) {
            out.push_back(draw(t.distribution, in.shape, dev).to(torchDtype(in.dtype)));
        } else if (in.dtype == DType::Bool) {
            out.push_back(torch::rand(in.shape, torch::TensorOptions().device(dev)) < 0.5);
        } else {
            out.push_back(
                torch::randint(0, 1000, in.shape, torch::TensorOptions().dtype(torchDtype(in.dtype)).device(dev)));
        }
    }
    return out;
}

std::vector<torch::Tensor> makeParams(const Problem &p, const TrialSpec &t, torch::Device dev)
{
    torch::manual_seed(t.seed ^ 0x9e3779b97f4a7c15ull);
    std::vector<torch::Tensor> out;
    for (const ParamSpec &ps : p.params) {
        auto o = torch::TensorOptions().dtype(torch::kFloat32).device(dev);
        torch::Tensor v;
        // Trials after the first move ones and zeros away from the identity, so a kernel that
        // ignores an affine weight and bias fails.
        if (ps.init == "ones")
            v = t.randomParams ? torch::rand(ps.shape, o) + 0.5 : torch::ones(ps.shape, o);
        else if (ps.init == "zeros")
            v = t.randomParams ? torch::rand(ps.shape, o) - 0.5 : torch::zeros(ps.shape, o);
        else if (ps.init == "uniform")
            v = torch::rand(ps.shape, o) * (ps.high - ps.low) + ps.low;
        else if (ps.init == "normal")
            v = torch::randn(ps.shape, o) * ps.high + ps.low;
        else { // fan_in_uniform, as nn.Conv2d and nn.Linear initialise weight and bias
            const double b = 1.0 / std::sqrt(double(std::max<std::int64_t>(ps.fanIn, 1)));
            v = torch::rand(ps.shape, o) * (2 * b) - b;
        }
        out.push_back(v.to(torchDtype(ps.dtype)));
    }
    return out;
}

torch::Tensor poisoned(const TensorSpec &s, torch::Device dev)
{
    auto t = torch::empty(s.shape, torch::TensorOptions().dtype(torchDtype(s.dtype)).device(dev));
    if (isFloating(s.dtype))
        t.fill_(std::numeric_limits<double>::quiet_NaN());
    else if (s.dtype == DType::Bool)
        t.fill_(true);
    else
        t.fill_(s.dtype == DType::I32 ? std::numeric_limits<std::int32_t>::min()
                                      : std::numeric_limits<std::int64_t>::min());
    return t;
}

} // namespace kf::ref
