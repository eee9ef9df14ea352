#pragma once
// A search through the replay server with the real kernelforge-worker (KERNELFORGE_WORKER, set
// by ctest): the worker loads the problem (on the CPU without a GPU) and NVRTC compiles every
// candidate. The replay answers depend only on what is asked, so the tree is the same each run.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "llm_support.h"
#include "search/search.h"

#include <QTemporaryDir>

#include <atomic>
#include <cstdlib>
#include <optional>

namespace kf::test {

// Two rounds: round 1 proposes "Block per row" and "Warp per row"; round 2 proposes "Vectorized
// float4 loads" and repeats "Block per row" (which the search skips). Variant 1 of each idea is a
// correct kernel; variant 2 is a compile error (repaired), no code at all, or an answer cut off.
class ScriptedServer {
public:
    explicit ScriptedServer(llm::Protocol p)
        : m_protocol(p), m_server([this](const ReplayRequest &r) { return reply(r); })
    {
    }
    std::string url() const { return m_server.url(); }
    ReplayServer &server() { return m_server; }
    int ideasAsked() const { return m_ideas; }
    int delayMs = 0;

private:
    ReplayReply reply(const ReplayRequest &r)
    {
        ReplayReply out = make(r);
        out.delayMs = delayMs;
        return out;
    }

    ReplayReply make(const ReplayRequest &r)
    {
        const std::string user = userMessage(r);
        switch (asked(r)) {
        case Asked::Ideas:
            return answer(m_protocol, dataFile(m_ideas++ == 0 ? "ideas_round1.md" : "ideas_round2_prose.md"));
        case Asked::Repair:
            return answer(m_protocol, dataFile("kernel_repaired.md"));
        case Asked::Implement: {
            const bool first = user.find("variant 1 of") != std::string::npos;
            if (user.find("## The idea: Block per row") != std::string::npos)
                return answer(m_protocol, dataFile(first ? "kernel_block_row.md" : "kernel_compile_error.md"));
            if (user.find("## The idea: Warp per row") != std::string::npos)
                return answer(m_protocol, dataFile(first ? "kernel_warp_row.md" : "no_code.md"));
            if (user.find("## The idea: Vectorized float4 loads") != std::string::npos)
                return first ? answer(m_protocol, dataFile("kernel_vec4.md"))
                             : answer(m_protocol, dataFile("truncated.md"), true);
            break;
        }
        case Asked::Other:
            break;
        }
        ReplayReply bad;
        bad.status = 400;
        bad.body = R"({"error": {"message": "the replay server has no answer for this request"}})";
        return bad;
    }

    llm::Protocol m_protocol;
    std::atomic<int> m_ideas{0};
    ReplayServer m_server;
};

inline bool haveWorker()
{
    const char *w = std::getenv("KERNELFORGE_WORKER");
    return w && *w;
}

struct LlmSearch {
    QTemporaryDir dir;
    Problem problem;
    std::unique_ptr<WorkerPool> pool;
    std::unique_ptr<CompilePool> compiler;
    std::optional<SessionStore> store;
    std::vector<SearchEvent> events;

    LlmSearch()
    {
        auto p = loadProblemFile(KF_SOURCE_DIR "/problems/seed/softmax.toml", "small");
        if (p)
            problem = *p;
        PoolConfig pc;
        pc.worker.argv = {std::getenv("KERNELFORGE_WORKER")};
        pc.workersPerGpu = 1;
        pool = std::make_unique<WorkerPool>(pc);
        CompilePoolConfig cc;
        cc.argv = {std::getenv("KERNELFORGE_WORKER")};
        cc.processes = 2;
        compiler = std::make_unique<CompilePool>(cc);
        SessionMeta m;
        m.problemName = problem.name;
        m.problemText = problem.text;
        m.problemVariant = problem.variant;
        m.writer = "test_llm_search";
        if (auto s = SessionStore::create(path(), m))
            store.emplace(std::move(*s));
    }

    std::string path() const { return dir.filePath("llm.kfsession").toStdString(); }

    std::unique_ptr<Search> search(std::shared_ptr<Generator> g, SearchSettings s)
    {
        auto out = std::make_unique<Search>(problem, std::move(g), s, *pool, *compiler, *store);
        out->setEventCallback([this](const SearchEvent &e) { events.push_back(e); });
        return out;
    }

    std::vector<NodeRecord> nodes(NodeKind kind) const
    {
        std::vector<NodeRecord> out;
        if (auto all = store->allNodes())
            for (auto &n : *all)
                if (n.kind == kind)
                    out.push_back(n);
        return out;
    }
};

inline SearchSettings llmSettings(int rounds, bool compileOnly)
{
    SearchSettings s;
    s.rounds = rounds;
    s.ideasPerRound = 2;
    s.implsPerIdea = 2;
    s.repairs = 1;
    s.trials = 2;
    s.timingTrials = 20;
    s.compileOnly = compileOnly;
    return s;
}

} // namespace kf::test
