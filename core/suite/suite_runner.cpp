#include "suite/suite_runner.h"

#include "gen/factory.h"
#include "search/records.h"
#include "search/search.h"
#include "search/trajectory.h"
#include "suite/suite_report.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace kf {

namespace {

// level1/19_ReLU.toml -> sessions/level1__19_ReLU.kfsession: one flat folder, names kept readable.
std::string sessionFor(const std::string &file)
{
    std::string s = fs::path(file).replace_extension().generic_string();
    std::string out;
    for (char c : s)
        out += c == '/' ? std::string("__") : std::string(1, c);
    return "sessions/" + out + ".kfsession";
}

// level1/2_gelu before level1/10_layernorm, as KernelBench numbers its problems.
bool naturalLess(const std::string &a, const std::string &b)
{
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit((unsigned char)a[i]) && std::isdigit((unsigned char)b[j])) {
            std::size_t ei = i, ej = j;
            while (ei < a.size() && std::isdigit((unsigned char)a[ei]))
                ++ei;
            while (ej < b.size() && std::isdigit((unsigned char)b[ej]))
                ++ej;
            const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
            if (na.size() != nb.size() || na != nb)
                return na.size() != nb.size() ? na.size() < nb.size() : na < nb;
            i = ei, j = ej;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i, ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

// The file an error from listProblems() is about: its `where` starts with the path.
std::string fileOf(const Error &e)
{
    const std::string &w = e.where;
    std::size_t toml = w.find(".toml");
    return toml == std::string::npos ? w : w.substr(0, toml + 5);
}

std::string printed(const char *format, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

std::string msText(double ms) { return printed("%.4f ms", ms); }

double secondsSince(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Best time, counts, precision and KernelBench's check of a session, as its trajectory has them.
void fillFromSession(SuiteEntry &e, const SessionStore &store)
{
    auto t = readTrajectory(store);
    if (!t)
        return;
    e.eagerMs = t->eagerMs;
    e.gpu = t->gpu;
    e.rounds = int(t->rows.size());
    e.candidates = e.correct = 0;
    for (const TrajectoryRow &r : t->rows) {
        e.candidates += r.candidates;
        e.correct += r.correct;
    }
    e.bestMs = 0;
    e.precision.clear();
    e.kernelbenchPassed = false;
    if (t->rows.empty() || !(t->rows.back().bestMs > 0))
        return;
    e.bestMs = t->rows.back().bestMs;
    if (auto node = store.node(t->rows.back().bestNode))
        if (auto reading = readCandidate(*node)) {
            e.precision = toString(reading->result.precision);
            e.kernelbenchPassed = reading->result.kernelbenchPassed;
        }
}

// The lines worth printing while several problems run at once.
std::optional<std::string> progressLine(const SearchEvent &event)
{
    if (std::holds_alternative<SearchStarted>(event) || std::holds_alternative<RoundFinished>(event) ||
        std::holds_alternative<SearchFinished>(event) || std::holds_alternative<SearchMessage>(event))
        return describe(event);
    return std::nullopt;
}

// A session of an earlier run goes on after its rounds; a new one keeps the problem.
Result<SessionStore> openSession(const std::string &path, const Problem &problem, const Generator *generator,
                                 const SearchSettings &settings, const std::string &noGenerator)
{
    if (!generator)
        return makeError(ErrorCode::Suite, noGenerator);
    SessionMeta meta = sessionMetaFor(problem, generator->name(), "kernelforge-cli suite");
    meta.settings = settings;
    return openOrCreateSession(path, meta);
}

} // namespace

SuiteRunner::SuiteRunner(SuiteOptions options) : m_options(std::move(options)) {}

std::string SuiteRunner::statePath() const { return (fs::path(m_options.out) / "suite.json").string(); }

std::string SuiteRunner::reportPath(const std::string &extension) const
{
    return (fs::path(m_options.out) / ("report." + extension)).string();
}

void SuiteRunner::say(const std::string &problem, const std::string &line)
{
    static std::mutex printing;
    std::lock_guard lock(printing);
    if (m_progress)
        m_progress(problem, line);
}

Status SuiteRunner::prepare()
{
    std::error_code ec;
    fs::create_directories(fs::path(m_options.out) / "sessions", ec);
    if (ec)
        return makeError(ErrorCode::Io, "cannot make the folder: " + ec.message(), m_options.out);
    if (!fs::is_directory(m_options.folder, ec))
        return makeError(ErrorCode::Io, "not a folder of problem files", m_options.folder);
    std::string why;
    if (!makeGenerator(m_options.generator, m_options.generatorSettings, &why))
        return makeError(ErrorCode::Generator, why);

    if (fs::exists(statePath(), ec)) {
        auto read = readSuiteState(statePath());
        if (!read)
            return read.error();
        m_state = std::move(*read);
    }
    m_state.folder = m_options.folder;
    m_state.generator = m_options.generator;
    m_state.settings = m_options.settings;
    m_state.budgetPerProblem = m_options.settings.timeBudgetSeconds;

    // The folder as it is now: new files join, files that are gone leave the report. Modules are
    // read when their problems run.
    ProblemListing listing = listProblems(m_options.folder, false);
    std::vector<SuiteEntry> entries;
    auto entryFor = [&](const std::string &path) -> SuiteEntry & {
        const std::string rel = fs::path(path).lexically_relative(m_options.folder).generic_string();
        SuiteEntry fresh;
        fresh.file = rel;
        fresh.session = sessionFor(rel);
        const SuiteEntry *old = m_state.find(rel);
        entries.push_back(old ? *old : fresh);
        return entries.back();
    };
    for (const Problem &p : listing.problems) {
        SuiteEntry &e = entryFor(p.path);
        if (e.status == suite_status::Failed && e.name.empty()) { // it did not parse before; now it does
            e.status = suite_status::Pending;
            e.reason.clear();
        }
        e.name = p.name;
    }
    for (const Error &e : listing.errors) {
        if (fileOf(e) == m_options.folder)
            return e; // the folder itself could not be listed
        SuiteEntry &entry = entryFor(fileOf(e));
        entry.status = suite_status::Failed;
        entry.reason = e.text();
    }
    std::sort(entries.begin(), entries.end(),
              [](const SuiteEntry &a, const SuiteEntry &b) { return naturalLess(a.file, b.file); });
    m_state.problems = std::move(entries);
    if (m_state.problems.empty())
        return makeError(ErrorCode::Io, "no problem files (*.toml) in the folder", m_options.folder);

    m_queue.clear();
    for (SuiteEntry &e : m_state.problems) {
        if (e.status == suite_status::Failed && m_options.retryFailed && !e.name.empty()) {
            e.status = suite_status::Pending;
            e.reason.clear();
        }
        if (e.status == suite_status::Pending || e.status == suite_status::Running)
            m_queue.push_back(e.file);
    }
    return save();
}

Status SuiteRunner::save()
{
    if (Status s = writeSuiteState(statePath(), m_state); !s)
        return s;
    if (Status s = writeFileAtomically(reportPath("md"), suiteMarkdown(m_state)); !s)
        return s;
    return writeFileAtomically(reportPath("json"), suiteReportJson(m_state).dump(2) + "\n");
}

void SuiteRunner::update(const SuiteEntry &entry)
{
    std::lock_guard lock(m_mutex);
    if (SuiteEntry *e = m_state.find(entry.file))
        *e = entry;
    if (Status s = save(); !s && !m_error) {
        m_error = s.error();
        m_abort = true;
    }
}

Status SuiteRunner::run(const std::atomic<bool> &cancel, SuiteProgress progress)
{
    m_progress = std::move(progress);
    if (Status s = prepare(); !s)
        return s;
    if (m_queue.empty()) {
        say("", "every problem is done already (" + statePath() + "); --retry-failed searches the failed ones again");
        return Ok{};
    }
    // Every search watches one flag: Ctrl-C, or a reason to stop them all (no GPU, a failed write).
    std::atomic<bool> stop{false};
    std::atomic<bool> finished{false};
    std::thread watcher([&] {
        while (!finished) {
            if (cancel || m_abort)
                stop = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    std::vector<int> gpus = m_options.pool.gpus.empty() ? std::vector<int>{0} : m_options.pool.gpus;
    std::vector<std::thread> threads;
    for (int gpu : gpus)
        threads.emplace_back([this, gpu, &stop, n = gpus.size()] {
            CompilePoolConfig c = m_options.compiler;
            const int total = c.processes > 0 ? c.processes : int(std::thread::hardware_concurrency());
            c.processes = std::max(1, total / int(n));
            CompilePool compiler(c);
            PoolConfig pc = m_options.pool;
            pc.gpus = {gpu};
            WorkerPool workers(pc); // kept warm for the next search, unless torch.compile is timed first
            std::optional<CompileTimer> timer;
            if (!m_options.compileBaseline.empty())
                timer.emplace(m_options.compileBaseline, gpu, m_options.pool.setVisibleDevices);
            Lane lane{compiler, workers, timer ? &*timer : nullptr};
            for (;;) {
                SuiteEntry entry;
                {
                    std::lock_guard lock(m_mutex);
                    // m_abort too: the watcher passes it on to `stop` only on its next poll.
                    if (stop || m_abort || m_next >= m_queue.size())
                        return;
                    entry = *m_state.find(m_queue[m_next++]);
                }
                runOne(entry, lane, stop);
            }
        });
    for (auto &t : threads)
        t.join();
    finished = true;
    watcher.join();
    std::lock_guard lock(m_mutex);
    if (Status s = save(); !s && !m_error)
        m_error = s.error();
    if (m_error)
        return *m_error;
    return Ok{};
}

void SuiteRunner::measureCompile(SuiteEntry &e, const std::string &file, Lane &lane, const std::atomic<bool> &stop)
{
    say(e.name, "timing torch.compile (tools/compile-baseline.py)");
    // torch.compile takes tens of seconds to compile a problem; a hung one must not hold the suite.
    const CompileTime t = lane.timer->measure(file, std::chrono::minutes(15), stop);
    e.compileMs = t.ms;
    e.compileNote = t.note;
    e.compileTried = t.answered;
    if (t.ms > 0)
        say(e.name, "torch.compile: " + msText(t.ms));
}

bool SuiteRunner::readyToSearch(SuiteEntry &e, const Problem &problem, SearchSettings &settings,
                                const std::string &file, Lane &lane, const std::atomic<bool> &stop)
{
    e.policy = toString(effectivePolicy(settings, problem));
    if (settings.timeBudgetSeconds > 0) {
        const double left = settings.timeBudgetSeconds - e.seconds;
        if (left < 1) {
            e.status = suite_status::Done;
            e.reason = "its time budget was spent in earlier runs";
            update(e);
            return false;
        }
        settings.timeBudgetSeconds = left;
    }
    if (!lane.timer) {
        if (e.compileMs <= 0)
            e.compileNote = m_options.compileNote;
    } else if (!e.compileTried && !settings.compileOnly) {
        measureCompile(e, file, lane, stop); // a resumed problem keeps what it has
        if (stop) {
            update(e); // not started: it stays as it was
            return false;
        }
    }
    return true;
}

double SuiteRunner::runSearch(SuiteEntry &e, const Problem &problem, const std::shared_ptr<Generator> &generator,
                              const SearchSettings &settings, Lane &lane, SessionStore &store,
                              const std::atomic<bool> &stop)
{
    auto search = std::make_unique<Search>(problem, generator, settings, lane.workers, lane.compiler, store);
    if (e.compileMs > 0) // the workbench's chart draws it
        (void)store.setMetaJson("torch_compile", {{"median_ms", e.compileMs}});

    std::optional<std::chrono::steady_clock::time_point> budgetFrom; // when the search's budget started
    search->setEventCallback([&](const SearchEvent &event) {
        // The budget counts from the start of the search's setup, which the event reports.
        if (auto *started = std::get_if<SearchStarted>(&event))
            budgetFrom = std::chrono::steady_clock::now() -
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(started->setupSeconds));
        if (auto line = progressLine(event))
            say(e.name, *line);
    });
    const auto started = std::chrono::steady_clock::now();
    Status ran = search->run(stop);
    e.seconds += secondsSince(started);
    // The part of this call the budget accounts for; the rest is what the problem cost beyond it.
    double budgeted = budgetFrom ? secondsSince(*budgetFrom) : 0;
    if (settings.timeBudgetSeconds > 0)
        budgeted = std::min(budgeted, settings.timeBudgetSeconds);
    const bool cancelled = stop && (!ran || search->stopReason() == StopReason::Cancelled);
    if (!ran && ran.error().code == ErrorCode::NoGpu) {
        // Nothing else can run either: the whole suite stops here, and this problem waits.
        e.status = suite_status::Pending;
        e.reason.clear();
        {
            std::lock_guard lock(m_mutex);
            if (!m_error)
                m_error = ran.error();
        }
        m_abort = true;
    } else if (cancelled) {
        e.status = suite_status::Running;
        e.reason = "interrupted; the next run resumes its session";
    } else if (!ran) {
        e.status = suite_status::Failed;
        e.reason = ran.error().text();
    } else {
        e.status = suite_status::Done;
        e.reason = "stopped: " + toString(search->stopReason()) +
            (search->stopDetail().empty() ? "" : " (" + search->stopDetail() + ")");
    }
    return budgeted;
}

void SuiteRunner::finish(SuiteEntry &e, const SessionStore &store, const SearchSettings &settings,
                         const std::string &label, std::chrono::steady_clock::time_point began, double budgeted)
{
    fillFromSession(e, store);
    if (settings.compileOnly && e.status == suite_status::Done)
        e.reason = "compile only: " + std::to_string(e.candidates) + " candidates, none timed; " + e.reason;
    std::string outcome = e.bestMs > 0 ? "best " + msText(e.bestMs) : std::string("no correct kernel");
    if (settings.compileOnly)
        outcome = "compiled";
    const double beyond = std::max(0.0, secondsSince(began) - budgeted);
    e.overheadSeconds += beyond;
    say(label,
        (e.status == suite_status::Done ? outcome + " (" + e.reason + ")" : e.status + ": " + e.reason) + "; " +
            secondsText(beyond) + " beyond the search budget");
    update(e);
}

void SuiteRunner::runOne(SuiteEntry e, Lane &lane, const std::atomic<bool> &stop)
{
    const auto began = std::chrono::steady_clock::now();
    // The workers start (or, after a search that ended by killing them, start again) while this
    // problem's file and module are read and torch.compile is timed, not after. (The future
    // waits for the start on every return below.)
    // A warm worker still holds the last problem's inputs (as many input sets as fit the GPU), and
    // torch.compile, timed beside it, ran out of memory on a 4 GB input: the workers end first.
    if (lane.timer && !e.compileTried && !m_options.settings.compileOnly)
        lane.workers.stop();
    std::future<Status> warm = std::async(std::launch::async, [&lane] { return lane.workers.start(); });
    const std::string file = (fs::path(m_options.folder) / e.file).string();
    const std::string label = e.name.empty() ? e.file : e.name;
    auto problem = loadProblemFile(file);
    if (!problem) {
        e.status = suite_status::Failed;
        e.reason = problem.error().text();
        update(e);
        return;
    }
    e.name = problem->name;
    SearchSettings settings = m_options.settings;
    if (!readyToSearch(e, *problem, settings, file, lane, stop))
        return;
    e.status = suite_status::Running;
    e.reason = "searching";
    update(e);

    std::string why;
    auto generator = makeGenerator(m_options.generator, m_options.generatorSettings, &why);
    const std::string sessionPath = (fs::path(m_options.out) / e.session).string();
    auto store = openSession(sessionPath, *problem, generator.get(), settings, why);
    if (!store) {
        e.status = suite_status::Failed;
        e.reason = store.error().text();
        update(e);
        return;
    }
    // The problem searched is the file's, also when a session goes on: a session whose problem
    // has a large module holds only the file's text (sessionProblemText).
    warm.wait(); // a worker that did not start is the search's to report
    const double budgeted = runSearch(e, *problem, generator, settings, lane, *store, stop);
    finish(e, *store, settings, label, began, budgeted);
}

} // namespace kf
