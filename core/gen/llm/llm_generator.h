#pragma once
// The LLM generators ("openai", "anthropic"): the CRFM loop with a language model. Ideas come in
// plain language as JSON, conditioned on the best kernels and every idea tried; each idea gets
// several implementations, asked concurrently; a failed candidate gets a repair request with its
// compiler log or error figures. Every exchange goes to the search's sink as it ends.
#include "gen/generator.h"
#include "gen/llm/backend.h"
#include "gen/llm/config.h"
#include "gen/llm/prices.h"
#include "gen/llm/prompts.h"

#include <memory>

namespace kf::llm {

class LlmGenerator : public Generator {
public:
    // Settings as in config.h; an error names the bad setting. The price table is read here, so a
    // broken one is reported before any request is made.
    static Result<std::shared_ptr<LlmGenerator>> make(Protocol, const nlohmann::json &settings);

    std::string name() const override { return toString(m_config.protocol); }
    Status supports(const GenContext &) const override;
    Result<std::vector<Idea>> proposeIdeas(const GenContext &, int count, Usage *usage = nullptr) override;
    Result<std::vector<Draft>> implement(const GenContext &, const Idea &, int count, Usage *usage = nullptr) override;
    Result<std::optional<Draft>> repair(const GenContext &, const Idea &, const KernelRecord &failed,
                                        Usage *usage = nullptr) override;
    std::vector<Result<std::vector<Draft>>> implementAll(const GenContext &, const std::vector<Idea> &, int count,
                                                         Usage *usage = nullptr) override;
    std::vector<Result<std::optional<Draft>>> repairAll(const GenContext &, const std::vector<RepairJob> &,
                                                        Usage *usage = nullptr) override;
    nlohmann::json settings() const override { return toJson(m_config); }

    // The models the server offers ({base}/models), where it offers a list.
    Result<std::vector<std::string>> listModels(const std::atomic<bool> *cancel = nullptr) const;

    const LlmConfig &config() const { return m_config; }
    const PriceTable &prices() const { return m_prices; }

private:
    LlmGenerator(LlmConfig, PriceTable);

    struct Job {
        std::string purpose;   // "ideas", "implement", "repair"
        std::int64_t node = 0; // the node it is for
        Prompt prompt;
    };
    // Reads one usable answer; returns "" or why the answer cannot be used.
    using Check = std::function<std::string(std::size_t job, const Reply &)>;
    // Asks every job (concurrently, within the concurrency limit), records each exchange through
    // the context's sink as it ends, and calls `check` on each usable answer before it is recorded,
    // so the stored exchange says whether its answer was used. Returns each job's error ("" when
    // its answer was used).
    std::vector<std::string> ask(const GenContext &, const std::vector<Job> &, const Check &, Usage *usage,
                                 std::vector<std::int64_t> *exchangeIds = nullptr) const;
    Result<Prompt> prompt(const std::string &name, const PromptValues &values) const;
    PromptValues common(const GenContext &) const;
    PromptValues ideaValues(const GenContext &, int count) const;
    std::vector<KernelRecord> parentsOf(const GenContext &, const Idea &) const;

    LlmConfig m_config;
    PriceTable m_prices;
    std::unique_ptr<Backend> m_backend;
};

} // namespace kf::llm
