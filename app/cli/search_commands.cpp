#include "search_commands.h"

#include "commands.h"
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "gen/factory.h"
#include "gen/llm/llm_generator.h"
#include "generator_options.h"
#include "search/search.h"
#include "search/session_setup.h"
#include "search/trajectory.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kf::cli {

namespace {

// Set by Ctrl-C: the search stops at once and leaves a consistent session. A second Ctrl-C
// falls through to the default action, for a search that does not stop.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void onInterrupt(int)
{
    g_interrupted = true;
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

void printError(const Error &e) { std::fprintf(stderr, "kernelforge-cli: %s\n", e.text().c_str()); }

} // namespace

// Integer options, checked here so that a typo is an error message, not an exception.
bool readInt(const Args &a, const std::string &name, int &out)
{
    auto v = a.option(name);
    if (!v)
        return true;
    try {
        std::size_t used = 0;
        out = std::stoi(*v, &used);
        if (used == v->size())
            return true;
    } catch (const std::exception &) {
    }
    std::fprintf(stderr, "kernelforge-cli: %s needs a whole number, not '%s'\n", name.c_str(), v->c_str());
    return false;
}

bool applySearchOptions(const Args &a, SearchSettings &s)
{
    const std::pair<const char *, int SearchSettings::*> ints[] = {
        {"--rounds", &SearchSettings::rounds},
        {"--ideas", &SearchSettings::ideasPerRound},
        {"--impls", &SearchSettings::implsPerIdea},
        {"--top-k", &SearchSettings::topK},
        {"--bank", &SearchSettings::bankSize},
        {"--trials", &SearchSettings::trials},
        {"--timing-trials", &SearchSettings::timingTrials},
        {"--repairs", &SearchSettings::repairs},
    };
    for (const auto &[name, field] : ints)
        if (!readInt(a, name, s.*field))
            return false;
    if (auto v = a.option("--policy")) {
        auto p = parsePolicy(*v);
        if (!p) {
            std::fprintf(stderr, "kernelforge-cli: --policy is strict or loose, not '%s'\n", v->c_str());
            return false;
        }
        s.policy = *p;
    }
    if (auto v = a.option("--token-budget")) {
        try {
            std::size_t used = 0;
            s.tokenBudget = std::stoll(*v, &used);
            if (used != v->size())
                throw std::invalid_argument("tokens");
        } catch (const std::exception &) {
            std::fprintf(stderr, "kernelforge-cli: --token-budget needs a number of tokens (0: none), not '%s'\n",
                         v->c_str());
            return false;
        }
    }
    if (auto v = a.option("--cost-budget")) {
        try {
            std::size_t used = 0;
            s.costBudget = std::stod(*v, &used);
            if (used != v->size())
                throw std::invalid_argument("cost");
        } catch (const std::exception &) {
            std::fprintf(stderr, "kernelforge-cli: --cost-budget needs an amount (0: none), not '%s'\n", v->c_str());
            return false;
        }
    }
    if (a.flag("--compile-only"))
        s.compileOnly = true;
    if (a.flag("--no-sanitize") && a.flag("--sanitize")) {
        std::fprintf(stderr, "kernelforge-cli: --sanitize and --no-sanitize contradict each other\n");
        return false;
    }
    if (a.flag("--no-sanitize"))
        s.sanitize = false;
    if (a.flag("--sanitize"))
        s.sanitize = true;
    if (auto v = a.option("--budget")) {
        try {
            std::size_t used = 0;
            s.timeBudgetSeconds = std::stod(*v, &used);
            if (used != v->size() || s.timeBudgetSeconds < 0)
                throw std::invalid_argument("budget");
        } catch (const std::exception &) {
            std::fprintf(stderr, "kernelforge-cli: --budget needs seconds (0: none), not '%s'\n", v->c_str());
            return false;
        }
    }
    if (Status ok = s.validate(); !ok) {
        printError(ok.error());
        return false;
    }
    return true;
}

bool parseGpus(const Args &a, std::vector<int> &gpus)
{
    auto v = a.option("--gpus");
    if (!v)
        return true;
    gpus.clear();
    std::stringstream in(*v);
    for (std::string item; std::getline(in, item, ',');) {
        try {
            gpus.push_back(std::stoi(item));
        } catch (const std::exception &) {
            std::fprintf(stderr, "kernelforge-cli: --gpus takes indices like 0,1, not '%s'\n", v->c_str());
            return false;
        }
    }
    return !gpus.empty();
}

namespace {

// One line per event, with the time since the start, so a long search can be followed or logged.
class Progress {
public:
    void operator()(const SearchEvent &e)
    {
        if (std::holds_alternative<BudgetStatus>(e))
            return; // for live views; the run's account is the last line
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
        const char *indent = "";
        if (std::holds_alternative<IdeaProposed>(e))
            indent = "  ";
        else if (std::holds_alternative<CandidateQueued>(e) || std::holds_alternative<CandidateCompiled>(e) ||
                 std::holds_alternative<CompileFailed>(e) || std::holds_alternative<CandidateVerified>(e) ||
                 std::holds_alternative<CandidateTimed>(e) || std::holds_alternative<CandidateSanitizing>(e) ||
                 std::holds_alternative<CandidateSanitized>(e))
            indent = "    ";
        std::printf("[%02d:%02d] %s%s\n", int(t) / 60, int(t) % 60, indent, describe(e).c_str());
        std::fflush(stdout);
    }

private:
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

} // namespace

int exitFor(const Error &e)
{
    if (e.code == ErrorCode::NoGpu)
        return NoGpu;
    if (e.code == ErrorCode::Worker || e.code == ErrorCode::WorkerStart || e.code == ErrorCode::Crashed ||
        e.code == ErrorCode::Timeout || e.code == ErrorCode::Protocol)
        return WorkerFailed;
    if (e.code == ErrorCode::Llm || e.code == ErrorCode::LlmAnswer)
        return GeneratorFailed;
    return BadInput;
}

const std::set<std::string> &searchValuedOptions()
{
    static const std::set<std::string> names{
        "--rounds",    "--ideas",    "--impls", "--top-k",           "--bank",      "--budget",       "--repairs",
        "--generator", "--compiler", "--gpus",  "--workers-per-gpu", "--compilers", "--token-budget", "--cost-budget"};
    return names;
}

namespace {

// The settings a search starts from: a resumed session's own (its store kept open here), then the
// options given now.
struct SearchStart {
    std::optional<SessionStore> store;
    SearchSettings settings;
    std::string generatorName;
    nlohmann::json storedGenerator; // a resumed session's generator settings
};

bool readResumedSession(const Args &a, const std::string &sessionPath, SearchStart &s)
{
    auto opened = SessionStore::open(sessionPath);
    if (!opened) {
        printError(opened.error());
        return false;
    }
    s.store.emplace(std::move(*opened));
    auto meta = s.store->sessionMeta();
    if (!meta) {
        printError(meta.error());
        return false;
    }
    if (!a.positional.empty() && a.positional[0] != meta->problemName) {
        std::fprintf(stderr, "kernelforge-cli: %s is a search of %s, not %s\n", sessionPath.c_str(),
                     meta->problemName.c_str(), a.positional[0].c_str());
        return false;
    }
    if (auto stored = settingsFromJson(meta->settings))
        s.settings = *stored;
    if (s.generatorName.empty() && meta->generator != "manual")
        s.generatorName = meta->generator;
    if (s.generatorName == meta->generator)
        if (auto gs = s.store->metaJson(session_meta::GeneratorSettings))
            s.storedGenerator = *gs;
    return true;
}

std::shared_ptr<Generator> searchGenerator(const Args &a, const SearchStart &s)
{
    nlohmann::json generatorOptions;
    if (!generatorSettings(a, s.storedGenerator, generatorOptions))
        return nullptr;
    std::string why;
    auto generator = makeGenerator(s.generatorName, generatorOptions, &why);
    if (!generator) {
        std::fprintf(stderr, "kernelforge-cli: %s\n", why.c_str());
        return nullptr;
    }
    // A cost budget counts nothing for a model the price table does not know: say so up front.
    if (auto *llm = dynamic_cast<llm::LlmGenerator *>(generator.get())) {
        printGeneratorWarnings(*llm);
        if (s.settings.costBudget > 0 && !llm->prices().find(llm->config().model))
            std::fprintf(stderr,
                         "kernelforge-cli: %s has no price for %s, so its cost counts as 0 against --cost-budget\n",
                         llm->prices().source.c_str(), llm->config().model.c_str());
    }
    return generator;
}

bool readPoolOptions(const Args &a, PoolConfig &pool, CompilePoolConfig &compile)
{
    if (auto w = a.option("--worker"))
        pool.worker.argv = splitCommandLine(*w);
    if (!parseGpus(a, pool.gpus) || !readInt(a, "--workers-per-gpu", pool.workersPerGpu))
        return false;
    if (auto c = a.option("--compiler"))
        compile.argv = splitCommandLine(*c);
    else
        compile.argv = pool.worker.argv; // empty: the local kernelforge-worker
    return readInt(a, "--compilers", compile.processes);
}

// After the search: its trajectory, what the language model cost, the session, the budget's split.
void printSearchSummary(const SessionStore &store, const Generator &generator, const std::string &sessionPath,
                        const Search &search)
{
    if (auto t = readTrajectory(store)) {
        t->budget.reset(); // printed as the last line instead
        std::printf("\n%s", trajectoryTable(*t).c_str());
    }
    if (auto exchanges = store.allExchanges(); exchanges && !exchanges->empty()) {
        std::int64_t prompt = 0, completion = 0, reasoning = 0;
        double cost = 0;
        int failed = 0;
        for (const ExchangeRecord &e : *exchanges) {
            prompt += e.promptTokens;
            completion += e.completionTokens;
            reasoning += e.reasoningTokens;
            cost += e.cost;
            failed += !e.error.empty();
        }
        auto *llm = dynamic_cast<const llm::LlmGenerator *>(&generator);
        std::printf(
            "language model: %zu requests (%d unusable), %lld prompt + %lld completion tokens (%lld reasoning), "
            "cost %.4f %s\n",
            exchanges->size(), failed, (long long)prompt, (long long)completion, (long long)reasoning, cost,
            llm ? llm->prices().currency.c_str() : "");
    }
    std::printf("session: %s\n", sessionPath.c_str());
    // The last line: where the budget went, and whether the best passed the sanitizer gate.
    std::printf("%s\n", describe(search.budget()).c_str());
}

} // namespace

int cmdSearch(const Args &a)
{
    const auto sessionPath = a.option("--session");
    if (!sessionPath) {
        std::fprintf(stderr, "kernelforge-cli: search needs --session FILE (the session it writes)\n");
        return BadInput;
    }
    const bool resume = a.flag("--resume");
    if (!resume && a.positional.empty()) {
        std::fprintf(stderr, "kernelforge-cli: name a problem to search (kernelforge-cli problems lists them)\n");
        return BadInput;
    }

    SearchStart start;
    start.generatorName = a.option("--generator").value_or("");
    if (resume && !readResumedSession(a, *sessionPath, start))
        return BadInput;
    if (!applySearchOptions(a, start.settings))
        return BadInput;
    if (start.generatorName.empty())
        start.generatorName = "builtin";
    auto generator = searchGenerator(a, start);
    if (!generator)
        return BadInput;
    PoolConfig poolConfig;
    CompilePoolConfig compileConfig;
    if (!readPoolOptions(a, poolConfig, compileConfig))
        return BadInput;

    std::optional<SessionStore> &store = start.store;
    const SearchSettings &settings = start.settings;
    std::unique_ptr<Search> search;
    WorkerPool pool(poolConfig);
    CompilePool compiler(compileConfig);
    if (resume) {
        auto r = Search::resume(*store, generator, pool, compiler, settings);
        if (!r) {
            printError(r.error());
            return BadInput;
        }
        search = std::move(*r);
    } else {
        auto problem = findProblem(a.positional[0], a.option("--variant").value_or(""));
        if (!problem) {
            printError(problem.error());
            return BadInput;
        }
        SessionMeta meta = sessionMetaFor(*problem, generator->name(), "kernelforge-cli");
        meta.settings = settings; // generator settings follow in meta generator_settings, without keys
        auto created = SessionStore::create(*sessionPath, meta);
        if (!created) {
            printError(created.error());
            if (created.error().code == ErrorCode::Exists)
                std::fprintf(stderr, "kernelforge-cli: add --resume to continue that session, or name a new file\n");
            return BadInput;
        }
        store.emplace(std::move(*created));
        search = std::make_unique<Search>(*problem, generator, settings, pool, compiler, *store);
    }

    Progress progress;
    search->setEventCallback(std::ref(progress));
    g_interrupted = false;
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    Status ran = search->run(g_interrupted);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!ran) {
        printError(ran.error());
        if (ran.error().code == ErrorCode::NoGpu)
            std::fprintf(stderr, "kernelforge-cli: add --compile-only to compile candidates without evaluating them\n");
        std::fprintf(stderr, "kernelforge-cli: the session %s keeps what was done\n", sessionPath->c_str());
        return exitFor(ran.error());
    }
    printSearchSummary(*store, *generator, *sessionPath, *search);
    return search->stopReason() == StopReason::Cancelled ? Interrupted : Success;
}

int cmdReport(const Args &a)
{
    if (a.positional.empty()) {
        std::fprintf(stderr, "kernelforge-cli: report needs a session FILE\n");
        return BadInput;
    }
    auto store = SessionStore::open(a.positional[0], true);
    if (!store) {
        printError(store.error());
        return BadInput;
    }
    auto t = readTrajectory(*store);
    if (!t) {
        printError(t.error());
        return BadInput;
    }
    const std::string text = a.flag("--csv") ? trajectoryCsv(*t) : trajectoryTable(*t);
    if (auto out = a.option("--output")) {
        std::ofstream f(*out, std::ios::binary);
        if (!(f << text)) {
            std::fprintf(stderr, "kernelforge-cli: cannot write %s\n", out->c_str());
            return BadInput;
        }
        return Success;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return Success;
}

int cmdExchanges(const Args &a)
{
    if (a.positional.empty()) {
        std::fprintf(stderr, "kernelforge-cli: exchanges needs a session FILE (and optionally a node id)\n");
        return BadInput;
    }
    auto store = SessionStore::open(a.positional[0], true);
    if (!store) {
        printError(store.error());
        return BadInput;
    }
    std::optional<std::int64_t> node;
    if (a.positional.size() > 1) {
        try {
            node = std::stoll(a.positional[1]);
        } catch (const std::exception &) {
            std::fprintf(stderr, "kernelforge-cli: a node is a number, not '%s'\n", a.positional[1].c_str());
            return BadInput;
        }
    }
    auto list = node ? store->exchanges(*node) : store->allExchanges();
    if (!list) {
        printError(list.error());
        return BadInput;
    }
    for (const ExchangeRecord &e : *list) {
        std::string nodes;
        for (auto n : e.nodes)
            nodes += (nodes.empty() ? "#" : ", #") + std::to_string(n);
        // How the answer ended, where it did not simply end: "; stopped: length (truncated)".
        const std::string stop = e.stopReason.empty() && e.ending.empty()
            ? std::string()
            : "; stopped: " + (e.stopReason.empty() ? std::string("-") : e.stopReason) +
                (e.ending.empty() || e.ending == "complete" ? "" : " (" + e.ending + ")");
        std::printf("exchange %lld, round %d, %s, %s at %s: HTTP %d, %d attempt(s), %.0f ms, %lld + %lld tokens, cost "
                    "%.4f; nodes %s%s%s%s\n",
                    (long long)e.id, e.round, e.purpose.c_str(), e.model.c_str(), e.endpoint.c_str(), e.httpStatus,
                    e.attempts, e.latencyMs, (long long)e.promptTokens, (long long)e.completionTokens, e.cost,
                    nodes.empty() ? "none" : nodes.c_str(), stop.c_str(),
                    e.error.empty() ? "" : "; failed: ", e.error.c_str());
        if (node)
            std::printf("\n--- prompt ---\n%s\n--- answer ---\n%s\n\n", e.prompt.c_str(),
                        e.answer.empty() ? e.response.c_str() : e.answer.c_str());
    }
    return Success;
}

} // namespace kf::cli
