#pragma once
// Shared by the LLM tests: a generator pointed at the replay server, a context for the small
// softmax problem, and a sink that keeps every exchange.
#include "gen/llm/llm_generator.h"
#include "problem/problem.h"
#include "replay_server.h"

#include <memory>
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

inline ReplayReply answer(llm::Protocol p, const std::string &text, bool truncated = false)
{
    ReplayReply r;
    r.body = p == llm::Protocol::OpenAI ? openaiAnswer(text, truncated ? "length" : "stop")
                                        : anthropicAnswer(text, truncated ? "max_tokens" : "end_turn");
    return r;
}

} // namespace kf::test
