#pragma once
// Verification and timing of candidates against one loaded problem (internal to the worker).
// docs/verification.md describes what each step guards against.
#include "check_kernels.h"
#include "eval/protocol.h"
#include "reference.h"
#include "tensors.h"
#include "worker/runtime.h"

#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace kf::ref {

struct VerifyRequest {
    std::string key;
    std::string source;
    std::string cubin;                               // empty: compile here
    std::map<std::string, std::string> loweredNames; // with cubin; empty means the names as written
    Policy policy = Policy::Strict;
    int trials = 5;
    bool raceRerun = true;             // run the first trial's inputs again and compare (the racy check)
    std::optional<std::uint64_t> seed; // replays an evaluation; otherwise drawn at random
};

// What the worker may use of the GPU's memory, and how it keeps track of the most it used.
struct MemoryBudget {
    std::int64_t capacity = 0; // bytes this worker may plan for (its share of what was free at start)
    std::int64_t peak = 0;     // the most in use on the device, seen at the planned points
    void notePeak();
};

class Evaluator {
public:
    static Result<std::unique_ptr<Evaluator>> load(const Problem &, const GpuInfo &gpu, std::int64_t capacityBytes);
    const LoadedProblem &loaded() const { return m_loaded; }

    Result<Timing> baseline(int trials);
    // A verdict on the kernel, or an error when the engine itself could not judge it
    // (code "engine": out of GPU memory, a failure of libtorch or of the check kernels).
    Result<EvalResult> verify(const VerifyRequest &);
    // Times a verified candidate with every timed run checked; `checked` false is a measurement
    // of what the checks cost and never gives a verdict of its own.
    Result<TimedRun> time(const std::string &key, int trials, bool checked = true);
    void release(const std::string &key);
    // The inputs and fp64 reference outputs of each trial an evaluation with this seed draws, as
    // flat lists of numbers: what `eval --seed` replays, for looking at a failure (and for the test
    // that a kernel which memorised them passes only with that seed). Small problems only.
    Result<nlohmann::json> trialData(std::uint64_t seed, int trials);
    ~Evaluator();

    void setCeilings(const Ceilings &c) { m_ceilings = c; }
    // True once a kernel has left the CUDA context unusable: the worker must exit.
    bool contextLost() const { return m_contextLost; }

private:
    struct Prepared;
    struct TrialData;
    Evaluator() = default;
    void poisonScratch(Prepared &);
    Status launchPlan(Prepared &, const std::vector<torch::Tensor> &inputs, const std::vector<torch::Tensor> &params,
                      const std::vector<torch::Tensor> &outputs);
    Status poisonOutputs(const std::vector<torch::Tensor> &outputs);
    Result<Timing> timeLoop(const std::function<Status()> &body, int trials);
    // The trial's parameters: a module problem's own values where the trial takes the initialiser.
    std::vector<torch::Tensor> paramsFor(const TrialSpec &);
    Result<EvalResult> runTrials(Prepared &, const VerifyRequest &, EvalResult r);
    // One trial's inputs, its fp64 reference with rms, the eager output (for KernelBench's check)
    // and the salted hashes of its inputs.
    Result<TrialData> drawTrial(const TrialSpec &, double tolerance, std::uint64_t salt,
                                std::vector<torch::Tensor> &eager);
    // Poisons, launches and waits; a verdict when the launch failed.
    std::optional<EvalResult> launchAndWait(Prepared &, const TrialData &, const std::vector<torch::Tensor> &into,
                                            const EvalResult &sofar);
    void judgeTrial(const std::vector<CompareStats> &, TrialResult &) const;
    Result<std::optional<EvalResult>> raceCheck(Prepared &, const TrialData &, const std::vector<torch::Tensor> &first,
                                                double tol, std::uint64_t *slot, const EvalResult &sofar);
    void keepForTiming(Prepared &, TrialData &, std::int64_t &keptBytes);
    // Compares each output with the trial's reference into its own slot (kStatsWords words each,
    // zeroed by the caller); with `readBack` waits and returns what each comparison found.
    Result<std::vector<CompareStats>> compareOutputs(const std::vector<torch::Tensor> &outs, const TrialData &,
                                                     const std::vector<torch::Tensor> *eager, std::uint64_t *slots,
                                                     bool readBack);
    // A salted hash of each input, then each parameter.
    Result<std::vector<std::uint64_t>> hashTensors(const TrialData &, std::uint64_t salt);
    Result<std::vector<double>> rmsOf(const std::vector<torch::Tensor> &refs64);
    // Names the first input or parameter whose hash changed, or "" when none did.
    Result<std::string> changedInput(const TrialData &, std::uint64_t salt);
    double measureLaunchMs();
    // Waits for the runs launched so far: the launch's own error first, then the device's.
    Status finishRuns(const Status &launched, const char *what);
    Status reloadModule(Prepared &);
    Status judgeTimedRuns(const Prepared &, const std::vector<std::size_t> &order, const std::vector<bool> &canary,
                          const std::vector<std::uint64_t> &slots, TimedRun &out);

    Problem m_problem;
    GpuInfo m_gpu;
    torch::Device m_device{torch::kCPU};
    std::unique_ptr<Reference> m_reference;
    std::unique_ptr<CheckKernels> m_checks;
    LoadedProblem m_loaded;
    Ceilings m_ceilings;
    MemoryBudget m_memory;
    double m_launchMs = 0;
    torch::Tensor m_flush; // larger than L2, rewritten before every timed run
    std::map<std::string, std::unique_ptr<Prepared>> m_prepared;
    bool m_contextLost = false;
};

} // namespace kf::ref
