#pragma once
// Verification and timing of candidates against one loaded problem (internal to the worker).
#include "eval/protocol.h"
#include "gpu/runtime.h"
#include "reference.h"
#include "tensors.h"

#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>

namespace kf::ref {

struct VerifyRequest {
    std::string key;
    std::string source;
    std::string cubin;                               // empty: compile here
    std::map<std::string, std::string> loweredNames; // with cubin; empty means the names as written
    Policy policy = Policy::Strict;
    int trials = 5;
    bool raceRerun = true; // run the first trial's inputs again and compare (the racy check)
};

class Evaluator {
public:
    static Result<std::unique_ptr<Evaluator>> load(const Problem &, const GpuInfo &gpu);
    const LoadedProblem &loaded() const { return m_loaded; }

    Result<Timing> baseline(int trials);
    EvalResult verify(const VerifyRequest &);
    Result<Timing> time(const std::string &key, int trials, EvalResult *judged = nullptr);
    void release(const std::string &key);
    ~Evaluator();

    void setCeilings(const Ceilings &c) { m_ceilings = c; }
    // True once a kernel has left the CUDA context unusable: the worker must exit.
    bool contextLost() const { return m_contextLost; }

private:
    struct Prepared;
    Evaluator() = default;
    enum class PlanUse { Verify, Time };
    Status runPlan(Prepared &, const std::vector<torch::Tensor> &inputs, const std::vector<torch::Tensor> &params,
                   const std::vector<torch::Tensor> &outputs, PlanUse use);
    Result<Timing> timeLoop(const std::function<Status()> &body, int trials);
    EvalResult fail(EvalResult r, Verdict v, const std::string &reason);
    // The trial's parameters: a module problem's own values where the trial takes the initialiser.
    std::vector<torch::Tensor> paramsFor(const TrialSpec &);

    Problem m_problem;
    GpuInfo m_gpu;
    torch::Device m_device{torch::kCPU};
    std::unique_ptr<Reference> m_reference;
    LoadedProblem m_loaded;
    Ceilings m_ceilings;
    torch::Tensor m_flush; // larger than L2, rewritten before every timed run
    std::map<std::string, std::unique_ptr<Prepared>> m_prepared;
    bool m_contextLost = false;
};

} // namespace kf::ref
