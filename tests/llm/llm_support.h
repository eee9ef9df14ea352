#pragma once
// Shared by the LLM tests: a generator pointed at the replay server, a context for the small
// softmax problem, and a sink that keeps every exchange.
#include "gen/llm/llm_generator.h"
#include "problem/problem.h"
#include "replay_server.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

namespace kf::test {

// The key the tests "use"; openai_401.json echoes it, as OpenAI's API does.
inline constexpr const char *kTestKey = "sk-test-replay-0123456789abcdef";
inline constexpr const char *kKeyEnv = "KF_TEST_LLM_KEY";

inline nlohmann::json llmSettings(llm::Protocol p, const std::string &url, const nlohmann::json &extra = {})
{
    nlohmann::json s = {{"base_url", p == llm::Protocol::OpenAI ? url + "/v1" : url},
                        {"model", "replay-model"},
                        {"key_env", kKeyEnv},
                        {"prices", std::string(KF_SOURCE_DIR) + "/tests/data/llm/prices.json"},
                        {"timeout_s", 20},
                        {"retries", 2},
                        {"backoff_s", 0.05}};
    if (extra.is_object())
        s.update(extra);
    return s;
}

inline std::shared_ptr<llm::LlmGenerator> llmGenerator(llm::Protocol p, const std::string &url,
                                                       const nlohmann::json &extra = {})
{
    auto g = llm::LlmGenerator::make(p, llmSettings(p, url, extra));
    return g ? *g : nullptr;
}

// Answers by what is asked: the ideas, implement and repair prompts each start with their own title.
enum class Asked { Ideas, Implement, Repair, Other };
inline Asked asked(const ReplayRequest &r)
{
    const std::string user = userMessage(r);
    if (user.find("new optimization ideas") != std::string::npos)
        return Asked::Ideas;
    if (user.find("# Implement one idea") != std::string::npos)
        return Asked::Implement;
    if (user.find("# Repair a candidate") != std::string::npos)
        return Asked::Repair;
    return Asked::Other;
}

inline Problem smallSoftmax()
{
    auto p = loadProblemFile(KF_SOURCE_DIR "/problems/seed/softmax.toml", "small");
    return p ? *p : Problem{};
}

// A context as the search builds it, with a sink that keeps every exchange.
struct Context {
    GenContext ctx;
    std::vector<Exchange> exchanges;
    std::atomic<bool> cancel{false};

    Context()
    {
        ctx.problem = smallSoftmax();
        ctx.round = 1;
        ctx.gpu.reason = "no CUDA driver";
        ctx.cancel = &cancel;
        ctx.record = [this](const Exchange &e) {
            exchanges.push_back(e);
            return std::int64_t(exchanges.size());
        };
    }
};

inline Idea someIdea(std::int64_t node = 7)
{
    Idea i;
    i.id = "block-per-row";
    i.title = "Block per row";
    i.text = "One block per row.";
    i.node = node;
    return i;
}

// An environment variable set (or, with nullptr, unset) for a scope, then put back as it was.
class ScopedEnv {
public:
    ScopedEnv(const char *name, const char *value) : m_name(name)
    {
        if (const char *old = std::getenv(name))
            m_old = old;
        value ? ::setenv(name, value, 1) : ::unsetenv(name);
    }
    ~ScopedEnv() { m_old ? ::setenv(m_name.c_str(), m_old->c_str(), 1) : ::unsetenv(m_name.c_str()); }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

inline ReplayReply answer(llm::Protocol p, const std::string &text, bool truncated = false)
{
    ReplayReply r;
    r.body = p == llm::Protocol::OpenAI ? openaiAnswer(text, truncated ? "length" : "stop")
                                        : anthropicAnswer(text, truncated ? "max_tokens" : "end_turn");
    return r;
}

} // namespace kf::test
