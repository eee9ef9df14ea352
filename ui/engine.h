#pragma once
// The workbench's facade over the engine. It lives on the GUI thread and never blocks it: every
// request runs on one of two threads it owns and comes back as a queued signal carrying an
// immutable value.
//   the GPU thread   searches, re-benchmarks, profiles and the GPU probe: everything that talks
//                    to kernelforge-worker, one job at a time, as one GPU is one resource;
//   the I/O thread   session readings, problem listings, a node's model exchanges, compile
//                    checks, exports.
// Each kind of I/O request carries an id; a newer request of the same kind makes an older one
// stale: a queued stale job is skipped and a stale result is dropped. Cancel sets the search's
// flag and interrupts the worker directly, so it works while the GPU thread is busy.
#include "engine_jobs.h"
#include "generator_choice.h"
#include "model/exchange_model.h"
#include "model/problem_model.h"
#include "model/progress_estimate.h"
#include "model/session_snapshot.h"
#include "search/events.h"

#include <QElapsedTimer>
#include <QFileSystemWatcher>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

class QThread;

namespace kf {
class Generator;
}

namespace kf::ui {

struct SearchProgress {
    int done = 0, total = 0; // candidates judged and expected in this run
    double fraction = 0;     // of the run, by candidates or by the time budget, whichever is further
    double etaSeconds = -1;  // -1 while unknown
    // From the search's BudgetStatus and gate events (docs/search.md): the time budget left (-1:
    // none), the end of it kept for the final gate, the kernel under compute-sanitizer now (0:
    // none), the best's gate ("pending", "clean", ...), and all of it in one line for the chart.
    double budgetLeftSeconds = -1, reserveSeconds = 0;
    std::int64_t gating = 0;
    bool finalGate = false;
    QString bestGate, live;
};

class Engine : public QObject {
    Q_OBJECT
public:
    // As makeGenerator(name, settings, error) of core/gen/factory.h.
    using GeneratorFactory = std::function<std::shared_ptr<Generator>(
        const std::string &name, const nlohmann::json &settings, std::string *error)>;

    explicit Engine(QObject *parent = nullptr);
    ~Engine() override; // cancels what runs and waits for both threads

    void setConfig(const EngineConfig &c) { m_config = c; }
    const EngineConfig &config() const { return m_config; }
    // Tests hand in their own generators; the default is makeGenerator() (core/gen/factory.h).
    void setGeneratorFactory(GeneratorFactory f) { m_factory = std::move(f); }

    const SnapshotPtr &session() const { return m_session; }
    const GpuStatus &gpu() const { return m_gpu; }
    bool searching() const { return m_searching; }
    bool gpuBusy() const { return m_gpuJobs > 0; }

    void probeGpu();
    void listProblems(const QStringList &extraFolders);
    void openSession(const QString &path, bool writable);
    // A new session file for `problem`, then opened. Fails when the file exists.
    void createSession(const QString &path, const Problem &problem, const SearchSettings &, const QString &generator);
    void saveSessionAs(const QString &path);
    void closeSession();
    // Reads the current session again. Called as a search reports results, and when the file
    // changes on disk (kernelforge-cli search writing it, say).
    void refresh();

    // The model exchanges behind a node of the current session (exchangesLoaded).
    void loadExchanges(std::int64_t node);
    void compileCheck(const std::string &source, std::int64_t node);
    // Continues the current session with `generator`: its settings go over those the session
    // keeps for the same generator, as kernelforge-cli --resume does with its options.
    void startSearch(const SearchSettings &, const GeneratorChoice &generator);
    void cancel();
    void rebenchmark(std::int64_t parent, const std::string &source, const QString &title);
    // Records a torch.compile time measured elsewhere (the JSON of tools/compile-baseline.py
    // --json) in the session's meta "torch_compile", for the chart's line.
    void importCompileTime(const QString &jsonFile);
    // `note` ends the message that says it was exported (what the file holds and what it does not).
    void exportCandidate(std::int64_t node, const QString &file, const QString &note = {});
    void exportBank(const QString &folder);
    void profile(std::int64_t node);

signals:
    void gpuChecked(const kf::ui::GpuStatus &);
    void problemsListed(const kf::ui::ProblemListPtr &);
    void sessionOpened(const kf::ui::SnapshotPtr &);  // another session is current
    void sessionUpdated(const kf::ui::SnapshotPtr &); // a newer reading of the current one
    void sessionClosed();
    void sessionFailed(const QString &path, const QString &message);
    void exchangesLoaded(const kf::ui::ExchangesPtr &);
    void compileChecked(const kf::ui::CompileReport &);
    void searchStarted();
    void searchEvent(const QString &line, std::int64_t node);
    void searchProgress(const kf::ui::SearchProgress &);
    // `failed`: the search could not run, or stopped with an error (a generator that failed to
    // propose ideas, such as a server that cannot be reached); `reason` then says what.
    // `summary` says how it ended and what it found (model/search_summary.h), or why it failed.
    void searchFinished(const QString &reason, bool failed, const QString &summary);
    void rebenchmarked(std::int64_t node, const QString &verdict);
    void profiled(const kf::ui::ProfileReport &);
    void finished(const QString &message); // an export or save that worked
    void failed(const QString &what, const QString &message);
    void busyChanged(bool gpuBusy);

private:
    enum Tag { SessionTag, ProblemsTag, CompileTag, ExchangesTag, TagCount };
    struct IoState; // lives on the I/O thread: the compile pool

    // Runs `job` on a thread; `done` gets its result on the GUI thread unless the Engine is gone.
    template <typename R>
    void post(QObject *threadContext, std::function<R()> job, std::function<void(const R &)> done);
    quint64 nextId(Tag t) { return ++m_latest[t]; }
    bool isLatest(Tag t, quint64 id) const { return m_latest[t].load() == id; }
    void gpuJob(bool started);
    void onSearchEvent(const SearchEvent &);
    bool noteGate(const SearchEvent &);
    void scheduleRefresh();
    void watch(); // follows the current session's file and its -wal, which other processes may write

    QThread *m_gpuThread = nullptr, *m_ioThread = nullptr;
    QObject *m_gpuContext = nullptr, *m_ioContext = nullptr;
    std::shared_ptr<IoState> m_io;
    std::atomic<quint64> m_latest[TagCount] = {};
    EngineConfig m_config;
    GeneratorFactory m_factory;
    SnapshotPtr m_session;
    GpuStatus m_gpu;

    // Search state, on the GUI thread except for the flag and the worker pointer.
    bool m_searching = false;
    int m_gpuJobs = 0;
    std::atomic<bool> m_cancel{false};
    std::mutex m_clientMutex;
    WorkerClient *m_client = nullptr; // the worker of a re-benchmark or profile, for cancel()
    QElapsedTimer m_searchClock;
    ProgressEstimate m_estimate;
    SearchProgress m_progress; // the gate and budget fields; the counts come from m_estimate
    SearchProgress progressNow(double elapsed) const;
    QTimer m_refreshTimer;
    QFileSystemWatcher m_watcher;
};

} // namespace kf::ui

Q_DECLARE_METATYPE(kf::ui::SearchProgress)
