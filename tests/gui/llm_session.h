#pragma once
// A small session as an LLM search leaves it, written with the store's own API: a round, an idea
// proposed by one exchange and a candidate written by another, so the workbench's exchange views
// can be tested without a server.
#include "search/records.h"
#include "store/session_store.h"

#include <QFile>
#include <QString>

#include <cstdint>
#include <string>

namespace kf::ui::test {

struct LlmSession {
    std::int64_t round = 0, idea = 0, candidate = 0;
    std::int64_t ideasExchange = 0, implementExchange = 0;
};

inline constexpr const char *kTestPrompt = "Write one CUDA kernel for the softmax below, one block per row.";
// The answer is tests/data/llm/kernel_block_row.md, which begins so; its code block is the candidate.
inline constexpr const char *kTestAnswer = "This kernel gives each row one block of 256 threads";

// Writes the session to `path`; a failure names what failed.
inline Result<LlmSession> writeLlmSession(const std::string &path)
{
    QFile problem(QStringLiteral(KF_SOURCE_DIR "/problems/seed/softmax.toml"));
    if (!problem.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::Io, "cannot read the softmax problem");
    QFile answerFile(QStringLiteral(KF_SOURCE_DIR "/tests/data/llm/kernel_block_row.md"));
    if (!answerFile.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::Io, "cannot read tests/data/llm/kernel_block_row.md");
    const std::string answer = answerFile.readAll().toStdString();
    const std::size_t from = answer.find("```cuda\n"), to = answer.rfind("```");
    if (from == std::string::npos || to <= from)
        return makeError(ErrorCode::Parse, "kernel_block_row.md holds no cuda block");
    const std::string kernel = answer.substr(from + 8, to - from - 8);
    SessionMeta meta;
    meta.problemName = "softmax";
    meta.problemText = problem.readAll().toStdString();
    meta.generator = "openai";
    meta.writer = "workbench test";
    auto store = SessionStore::create(path, meta);
    if (!store)
        return store.error();
    // As the generator keeps them: a local server that wants no key.
    if (Status st =
            store->setMetaJson(session_meta::GeneratorSettings,
                               {{"base_url", "http://127.0.0.1:8000/v1"}, {"model", "test-model"}, {"key_env", ""}});
        !st)
        return st.error();
    LlmSession s;
    auto add = [&](std::optional<std::int64_t> parent, NodeKind kind, std::string title, std::string text,
                   std::string status, std::optional<std::string> result = std::nullopt) {
        NodeRecord r;
        r.parent = parent;
        r.kind = kind;
        r.round = kind == NodeKind::Root ? 0 : 1;
        r.title = std::move(title);
        r.text = std::move(text);
        r.status = std::move(status);
        r.resultJson = std::move(result);
        return store->addNode(r);
    };
    auto root = add(std::nullopt, NodeKind::Root, "softmax", "", "");
    if (!root)
        return root.error();
    auto round = add(*root, NodeKind::Round, "Round 1", "", "finished");
    if (!round)
        return round.error();
    Idea idea;
    idea.id = "block-per-row";
    idea.title = "Block per row";
    idea.text = "One thread block reduces each row in shared memory.";
    idea.why = "Rows are long enough to keep a block busy.";
    auto ideaNode = add(*round, NodeKind::Idea, idea.title, idea.text, "queued", ideaInfoJson(idea, "openai").dump());
    if (!ideaNode)
        return ideaNode.error();
    auto candidate = add(*ideaNode, NodeKind::Candidate, "Block per row #1", kernel, "queued");
    if (!candidate)
        return candidate.error();
    s.round = *round;
    s.idea = *ideaNode;
    s.candidate = *candidate;

    ExchangeRecord e;
    e.round = 1;
    e.generator = "openai";
    e.model = "test-model";
    e.endpoint = "http://127.0.0.1:8000/v1";
    e.httpStatus = 200;
    e.attempts = 1;
    e.latencyMs = 2300;
    e.purpose = "ideas";
    e.prompt = "Propose 1 new idea for the softmax below.";
    e.answer = R"([{"title": "Block per row", "description": "One thread block reduces each row."}])";
    e.promptTokens = 1200;
    e.completionTokens = 90;
    e.cost = 0.0031;
    e.stopReason = "stop";
    e.ending = "complete";
    auto ideas = store->addExchange(e, {s.idea});
    if (!ideas)
        return ideas.error();
    e.purpose = "implement";
    e.prompt = kTestPrompt;
    e.answer = answer;
    e.reasoning = "A block per row keeps the reduction in shared memory.";
    e.promptTokens = 2400;
    e.completionTokens = 800;
    e.reasoningTokens = 120;
    e.cost = 0.0112;
    e.stopReason = "length"; // cut off after its code block closed: used all the same
    e.ending = "truncated";
    auto implement = store->addExchange(e, {s.candidate});
    if (!implement)
        return implement.error();
    s.ideasExchange = *ideas;
    s.implementExchange = *implement;
    if (Status closed = store->close(); !closed)
        return closed.error();
    return s;
}

} // namespace kf::ui::test
