#pragma once
// A search against the fake worker: a worker pool and a compile pool of fake processes (or real
// NVRTC through `kernelforge-worker --compile` when KERNELFORGE_WORKER is set), a new session in
// a temporary folder, and the small softmax problem. The sanitizer gate runs the stand-in
// compute-sanitizer (tests/eval/fake_sanitizer.cpp) where the test defines KF_FAKE_SANITIZER, so a
// machine with the real tool gives the same results as one without.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "scripted_generator.h"
#include "search/search.h"

#include <QTemporaryDir>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace kf::test {

inline Problem smallSoftmax()
{
    auto p = loadProblemFile(KF_SOURCE_DIR "/problems/seed/softmax.toml", "small");
    return p ? *p : Problem{};
}

inline SessionMeta metaFor(const Problem &p)
{
    SessionMeta m;
    m.problemName = p.name;
    m.problemText = p.text;
    m.problemVariant = p.variant;
    m.generator = "scripted";
    m.writer = "test_search";
    return m;
}

struct Fixture {
    QTemporaryDir dir;
    Problem problem = smallSoftmax();
    std::unique_ptr<WorkerPool> pool;
    std::unique_ptr<CompilePool> compiler;
    std::optional<SessionStore> store;
    std::vector<SearchEvent> events;

    static std::vector<std::string> fakeSanitizer()
    {
#ifdef KF_FAKE_SANITIZER
        return {KF_FAKE_SANITIZER};
#else
        return {};
#endif
    }

    explicit Fixture(std::vector<std::string> workerArgs = {"--time-ms", "2"}, int workers = 2,
                     std::vector<std::string> sanitizer = fakeSanitizer())
    {
        PoolConfig pc;
        pc.worker.argv = {KF_FAKE_WORKER};
        pc.worker.argv.insert(pc.worker.argv.end(), workerArgs.begin(), workerArgs.end());
        pc.sanitizer = std::move(sanitizer);
        pc.worker.handshakeTimeout = std::chrono::seconds(10);
        pc.worker.requestTimeout = std::chrono::seconds(10);
        pc.workersPerGpu = workers;
        pool = std::make_unique<WorkerPool>(pc);
        compiler = std::make_unique<CompilePool>(compilePoolConfig());
        auto s = SessionStore::create(path(), metaFor(problem));
        if (s)
            store.emplace(std::move(*s));
    }

    static CompilePoolConfig compilePoolConfig()
    {
        CompilePoolConfig c;
        const char *real = std::getenv("KERNELFORGE_WORKER");
        c.argv = real && *real ? splitCommandLine(real) : std::vector<std::string>{KF_FAKE_WORKER};
        c.processes = 2;
        return c;
    }

    static bool realCompiler()
    {
        const char *real = std::getenv("KERNELFORGE_WORKER");
        return real && *real;
    }

    std::string path() const { return dir.filePath("s.kfsession").toStdString(); }

    std::unique_ptr<Search> search(std::shared_ptr<Generator> g, SearchSettings s)
    {
        auto out = std::make_unique<Search>(problem, std::move(g), s, *pool, *compiler, *store);
        out->setEventCallback([this](const SearchEvent &e) { events.push_back(e); });
        return out;
    }

    template <typename T>
    std::vector<T> eventsOf() const
    {
        std::vector<T> out;
        for (const auto &e : events)
            if (auto *x = std::get_if<T>(&e))
                out.push_back(*x);
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

inline SearchSettings quickSettings(int rounds = 3, int ideas = 2, int impls = 2)
{
    SearchSettings s;
    s.rounds = rounds;
    s.ideasPerRound = ideas;
    s.implsPerIdea = impls;
    s.topK = 2;
    s.bankSize = 3;
    s.trials = 2;
    s.timingTrials = 10;
    return s;
}

} // namespace kf::test
