#include "engine.h"

#include "data_folders.h"
#include "gen/factory.h"
#include "gen/llm/llm_generator.h"
#include "model/format.h"
#include "model/search_summary.h"
#include "search/search.h"
#include "search/session_setup.h"

#include <QFile>
#include <QFileInfo>
#include <QThread>

#include <type_traits>

namespace kf::ui {

struct Engine::IoState {
    std::unique_ptr<CompilePool> compiler; // started on the first compile check, kept for the next
};

namespace {

struct Outcome {
    Outcome(QString message = {}, bool failed = false, QString summary = {})
        : message(std::move(message)), failed(failed), summary(std::move(summary))
    {
    }
    QString message;
    bool failed = false;
    QString summary; // a search's: what it found
};

struct Opened {
    SnapshotPtr snapshot;
    QString path, error;
};

QObject *contextOn(QThread *thread)
{
    auto *o = new QObject;
    o->moveToThread(thread);
    return o;
}

std::int64_t nodeOf(const SearchEvent &e)
{
    return std::visit(
        [](const auto &v) -> std::int64_t {
            if constexpr (requires { v.node; })
                return v.node;
            else
                return 0;
        },
        e);
}

} // namespace

Engine::Engine(QObject *parent) : QObject(parent), m_io(std::make_shared<IoState>())
{
    m_factory = [](const std::string &name, const nlohmann::json &settings, std::string *error) {
        return makeGenerator(name, settings, error);
    };
    m_gpuThread = new QThread(this);
    m_gpuThread->setObjectName(QStringLiteral("kf-gpu"));
    m_ioThread = new QThread(this);
    m_ioThread->setObjectName(QStringLiteral("kf-io"));
    m_gpuContext = contextOn(m_gpuThread);
    m_ioContext = contextOn(m_ioThread);
    m_gpuThread->start();
    m_ioThread->start();
    // A search writes many results a second; the views follow at most a few times a second.
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(250);
    connect(&m_refreshTimer, &QTimer::timeout, this, &Engine::refresh);
    connect(&m_watcher, &QFileSystemWatcher::fileChanged, this, &Engine::scheduleRefresh);
}

void Engine::watch()
{
    if (!m_watcher.files().isEmpty())
        m_watcher.removePaths(m_watcher.files());
    if (!m_session)
        return;
    // The -wal file comes and goes with writers; it is looked for again at every reading.
    for (const QString &f : {qs(m_session->path), qs(m_session->path) + QStringLiteral("-wal")})
        if (QFileInfo::exists(f))
            m_watcher.addPath(f);
}

Engine::~Engine()
{
    cancel();
    for (QThread *t : {m_gpuThread, m_ioThread}) {
        t->quit();
        t->wait();
    }
    // Both threads have finished: their contexts and the compile pool (its processes end with it)
    // can go from here.
    delete m_gpuContext;
    delete m_ioContext;
    m_io.reset();
}

template <typename R>
void Engine::post(QObject *context, std::function<R()> job, std::function<void(const R &)> done)
{
    // The Engine outlives every job (its destructor waits for both threads), so `this` is valid
    // when the result is queued; Qt drops the queued call if the Engine is gone by then.
    QMetaObject::invokeMethod(
        context,
        [this, job = std::move(job), done = std::move(done)] {
            R result = job();
            QMetaObject::invokeMethod(
                this, [result = std::move(result), done] { done(result); }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void Engine::gpuJob(bool started)
{
    m_gpuJobs += started ? 1 : -1;
    if (m_gpuJobs == (started ? 1 : 0))
        emit busyChanged(m_gpuJobs > 0);
}

void Engine::probeGpu()
{
    const EngineConfig config = m_config;
    gpuJob(true);
    post<GpuStatus>(
        m_gpuContext, [config] { return kf::ui::probeGpu(config); },
        [this](const GpuStatus &s) {
            gpuJob(false);
            m_gpu = s;
            emit gpuChecked(s);
        });
}

void Engine::listProblems(const QStringList &extraFolders)
{
    const quint64 id = nextId(ProblemsTag);
    std::vector<std::string> folders;
    for (const QString &f : extraFolders)
        folders.push_back(f.toStdString());
    const std::vector<std::string> shipped = shippedProblemFolders();
    post<ProblemListPtr>(
        m_ioContext,
        [this, id, shipped, folders] {
            if (!isLatest(ProblemsTag, id))
                return ProblemListPtr();
            return ProblemListPtr(std::make_shared<ProblemList>(collectProblems(shipped, folders)));
        },
        [this, id](const ProblemListPtr &list) {
            if (isLatest(ProblemsTag, id) && list)
                emit problemsListed(list);
        });
}

void Engine::openSession(const QString &path, bool writable)
{
    const quint64 id = nextId(SessionTag);
    post<Opened>(
        m_ioContext,
        [this, id, path, writable] {
            Opened o{nullptr, path, {}};
            if (!isLatest(SessionTag, id))
                return o;
            auto s = readSnapshot(path.toStdString(), writable);
            if (s)
                o.snapshot = *s;
            else
                o.error = qs(s.error().text());
            return o;
        },
        [this, id](const Opened &o) {
            if (!isLatest(SessionTag, id))
                return;
            if (!o.snapshot) {
                emit sessionFailed(o.path, o.error);
                return;
            }
            m_session = o.snapshot;
            watch();
            emit sessionOpened(m_session);
        });
}

void Engine::refresh()
{
    if (!m_session)
        return;
    const quint64 id = nextId(SessionTag);
    const std::string path = m_session->path;
    const bool writable = !m_session->readOnly;
    post<Opened>(
        m_ioContext,
        [this, id, path, writable] {
            Opened o{nullptr, qs(path), {}};
            if (!isLatest(SessionTag, id))
                return o;
            auto s = readSnapshot(path, writable);
            if (s)
                o.snapshot = *s;
            else
                o.error = qs(s.error().text());
            return o;
        },
        [this, id](const Opened &o) {
            if (!isLatest(SessionTag, id) || !m_session || qs(m_session->path) != o.path)
                return;
            if (o.snapshot && o.snapshot->version == m_session->version)
                return; // nothing new: the views keep what they show
            if (!o.snapshot) {
                // The file stays as it was; the views keep the last good reading.
                emit failed(tr("Reading %1").arg(o.path), o.error);
                return;
            }
            m_session = o.snapshot;
            watch();
            emit sessionUpdated(m_session);
        });
}

void Engine::closeSession()
{
    nextId(SessionTag); // whatever reading is in flight is stale now
    m_session.reset();
    watch();
    emit sessionClosed();
}

void Engine::createSession(const QString &path, const Problem &problem, const SearchSettings &settings,
                           const QString &generator)
{
    const quint64 id = nextId(SessionTag);
    SessionMeta meta = sessionMetaFor(problem, generator.toStdString(), "KernelForge workbench " KF_VERSION);
    meta.settings = settings;
    post<Opened>(
        m_ioContext,
        [path, meta] {
            Opened o{nullptr, path, {}};
            auto store = SessionStore::create(path.toStdString(), meta);
            if (!store) {
                o.error = qs(store.error().text());
                return o;
            }
            auto s = readSnapshot(*store);
            if (!s) {
                o.error = qs(s.error().text());
                return o;
            }
            o.snapshot = *s;
            return o;
        },
        [this, id](const Opened &o) {
            if (!isLatest(SessionTag, id))
                return;
            if (!o.snapshot) {
                emit sessionFailed(o.path, o.error);
                return;
            }
            m_session = o.snapshot;
            watch();
            emit sessionOpened(m_session);
        });
}

void Engine::saveSessionAs(const QString &path)
{
    if (!m_session)
        return;
    const std::string from = m_session->path;
    post<Outcome>(
        m_ioContext,
        [from, path] {
            // A compact, consistent copy that any folder can hold; it becomes the session in use.
            Status s = SessionStore::exportReadOnlyCopy(from, path.toStdString(), true);
            return s ? Outcome{path, false} : Outcome{qs(s.error().text()), true};
        },
        [this, path](const Outcome &o) {
            if (o.failed) {
                emit failed(tr("Save As %1").arg(path), o.message);
                return;
            }
            emit finished(tr("Saved the session as %1").arg(path));
            openSession(path, true);
        });
}

void Engine::compileCheck(const std::string &source, std::int64_t node)
{
    const quint64 id = nextId(CompileTag);
    const std::optional<Problem> problem = m_session ? m_session->problem : std::nullopt;
    const std::string arch = m_gpu.present && !m_gpu.arch.isEmpty() ? m_gpu.arch.toStdString() : m_config.arch;
    const EngineConfig config = m_config;
    auto io = m_io;
    post<CompileReport>(
        m_ioContext,
        [this, id, problem, source, arch, config, io, node] {
            if (!isLatest(CompileTag, id))
                return CompileReport{};
            if (!io->compiler) {
                CompilePoolConfig c;
                c.argv = config.workerArgv;
                c.processes = 1; // one check at a time; newer requests supersede older ones
                io->compiler = std::make_unique<CompilePool>(c);
            }
            return kf::ui::compileCheck(*io->compiler, problem, source, arch, node);
        },
        [this, id](const CompileReport &r) {
            if (isLatest(CompileTag, id))
                emit compileChecked(r);
        });
}

void Engine::loadExchanges(std::int64_t node)
{
    if (!m_session)
        return;
    const quint64 id = nextId(ExchangesTag);
    const std::string path = m_session->path;
    post<ExchangesPtr>(
        m_ioContext,
        [this, id, path, node]() -> ExchangesPtr {
            if (!isLatest(ExchangesTag, id))
                return nullptr;
            return readExchanges(path, node);
        },
        [this, id](const ExchangesPtr &e) {
            if (e && isLatest(ExchangesTag, id))
                emit exchangesLoaded(e);
        });
}

void Engine::startSearch(const SearchSettings &settings, const GeneratorChoice &choice)
{
    if (!m_session || m_session->readOnly) {
        emit failed(tr("Start"), tr("this session is read-only; use Save As to continue it in a file of your own"));
        return;
    }
    if (gpuBusy()) {
        emit failed(tr("Start"), tr("the GPU is busy with another job"));
        return;
    }
    const std::string path = m_session->path;
    int lastRound = 0;
    for (const NodeView &n : m_session->nodes)
        lastRound = std::max(lastRound, n.record.round);
    // What the run adds has larger ids: the summary counts those.
    const std::int64_t newestBefore = m_session->nodes.empty() ? 0 : m_session->nodes.back().id();
    m_estimate.start((settings.rounds - lastRound) * settings.ideasPerRound * settings.implsPerIdea,
                     settings.timeBudgetSeconds);
    m_cancel = false;
    m_searching = true;
    m_searchClock.start();
    gpuJob(true);
    emit searchStarted();
    m_progress = SearchProgress{};
    emit searchProgress(progressNow(0));

    const EngineConfig config = m_config;
    const GeneratorFactory factory = m_factory;
    const GeneratorRequest request = toRequest(choice);
    post<Outcome>(
        m_gpuContext,
        [this, path, settings, config, factory, request, newestBefore] {
            auto store = SessionStore::open(path);
            if (!store)
                return Outcome{qs(store.error().text()), true};
            auto meta = store->sessionMeta();
            if (!meta)
                return Outcome{qs(meta.error().text()), true};
            auto stored = store->metaJson(session_meta::GeneratorSettings);
            auto genSettings = kf::ui::generatorSettings(request, meta->generator, stored ? *stored : nlohmann::json());
            if (!genSettings)
                return Outcome{qs(genSettings.error().text()), true};
            std::string why;
            auto gen = factory(request.name, *genSettings, &why);
            if (!gen)
                return Outcome{qs(why), true};
            // A cost budget counts nothing for a model the price table does not know: say so now.
            if (auto *llm = dynamic_cast<llm::LlmGenerator *>(gen.get());
                llm && settings.costBudget > 0 && !llm->prices().find(llm->config().model)) {
                const QString line = tr("%1 has no price for %2, so its cost counts as 0 against the cost budget")
                                         .arg(qs(llm->prices().source), qs(llm->config().model));
                QMetaObject::invokeMethod(
                    this, [this, line] { emit searchEvent(line, 0); }, Qt::QueuedConnection);
            }
            PoolConfig pc;
            pc.worker.argv = config.workerArgv;
            CompilePoolConfig cc;
            cc.argv = config.workerArgv;
            WorkerPool pool(pc);
            CompilePool compiler(cc);
            // The session's own problem: a search continues what the file holds.
            auto search = Search::resume(*store, gen, pool, compiler, settings);
            if (!search)
                return Outcome{qs(search.error().text()), true};
            (*search)->setEventCallback([this](const SearchEvent &e) {
                QMetaObject::invokeMethod(
                    this, [this, e] { onSearchEvent(e); }, Qt::QueuedConnection);
            });
            Status ran = (*search)->run(m_cancel);
            if (!ran)
                return Outcome{qs(ran.error().text()), true};
            QString reason = qs(toString((*search)->stopReason()));
            if (!(*search)->stopDetail().empty())
                reason += QStringLiteral(" (%1)").arg(qs((*search)->stopDetail()));
            // A search that stops with an error (the generator could not propose ideas: a server
            // that cannot be reached, a key it refused) failed, even though the session is sound.
            const bool failed = (*search)->stopReason() == StopReason::Error;
            QString summary = reason;
            if (!failed)
                if (auto after = readSnapshot(*store))
                    summary = searchSummary(**after, newestBefore, reason);
            return Outcome{reason, failed, summary};
        },
        [this](const Outcome &o) {
            m_searching = false;
            gpuJob(false);
            emit searchFinished(o.message, o.failed, o.summary.isEmpty() ? o.message : o.summary);
            refresh();
        });
}

void Engine::cancel()
{
    m_cancel = true;
    std::lock_guard lock(m_clientMutex);
    if (m_client)
        m_client->interrupt();
}

void Engine::onSearchEvent(const SearchEvent &e)
{
    const double elapsed = m_searchClock.elapsed() / 1000.0;
    if (noteGate(e))
        return; // a status for the chart, not a line for the log
    const QString line = QStringLiteral("[%1:%2] %3")
                             .arg(int(elapsed) / 60, 2, 10, QLatin1Char('0'))
                             .arg(int(elapsed) % 60, 2, 10, QLatin1Char('0'))
                             .arg(qs(describe(e)));
    emit searchEvent(line, nodeOf(e));
    if (std::holds_alternative<CandidateQueued>(e))
        m_estimate.queued();
    if (std::holds_alternative<CandidateVerified>(e) || std::holds_alternative<CompileFailed>(e))
        m_estimate.judged(elapsed);
    if (!std::holds_alternative<SearchMessage>(e))
        emit searchProgress(progressNow(elapsed));
    if (nodeOf(e) != 0 || std::holds_alternative<SearchFinished>(e))
        scheduleRefresh();
}

SearchProgress Engine::progressNow(double elapsed) const
{
    SearchProgress p = m_progress;
    p.done = m_estimate.done();
    p.total = m_estimate.total();
    p.fraction = m_estimate.fraction(elapsed);
    p.etaSeconds = m_estimate.etaSeconds(elapsed);
    return p;
}

// The budget and the sanitizer gate as the search reports them, for the chart's live line.
// Returns true for a BudgetStatus, which is for views, not the log.
bool Engine::noteGate(const SearchEvent &e)
{
    SearchProgress &p = m_progress;
    if (const auto *s = std::get_if<CandidateSanitizing>(&e)) {
        p.gating = s->node;
        p.finalGate = !s->background;
    } else if (const auto *s = std::get_if<CandidateSanitized>(&e); s && s->node == p.gating) {
        p.gating = 0;
    } else if (const auto *s = std::get_if<BudgetStatus>(&e)) {
        p.budgetLeftSeconds =
            s->budget.budgetSeconds > 0 ? std::max(0.0, s->budget.budgetSeconds - s->budget.elapsedSeconds) : -1;
        p.reserveSeconds = s->reserveSeconds;
        p.gating = s->gating;
        p.finalGate = s->finalGate;
        p.bestGate = qs(s->budget.bestGate);
    } else {
        return false;
    }
    QStringList parts;
    if (p.budgetLeftSeconds >= 0)
        parts << tr("%1 s of the budget left").arg(p.budgetLeftSeconds, 0, 'f', 0);
    if (p.reserveSeconds > 0)
        parts << tr("its last %1 s kept for the sanitizer gate").arg(p.reserveSeconds, 0, 'f', 0);
    if (p.gating != 0)
        parts << (p.finalGate ? tr("compute-sanitizer is checking the best, #%1").arg(p.gating)
                              : tr("compute-sanitizer is checking #%1 while the GPU waits").arg(p.gating));
    if (p.bestGate == QLatin1String("clean"))
        parts << tr("the best passed compute-sanitizer");
    else if (p.bestGate == QLatin1String("pending"))
        parts << tr("the best is not checked yet");
    p.live = parts.join(QStringLiteral(" · "));
    emit searchProgress(progressNow(m_searchClock.elapsed() / 1000.0));
    return std::holds_alternative<BudgetStatus>(e);
}

void Engine::scheduleRefresh()
{
    if (!m_refreshTimer.isActive())
        m_refreshTimer.start();
}

void Engine::rebenchmark(std::int64_t parent, const std::string &source, const QString &title)
{
    if (!m_session || m_session->readOnly) {
        emit failed(tr("Re-benchmark"),
                    tr("this session is read-only; use Save As to continue it in a file of your own"));
        return;
    }
    if (gpuBusy()) {
        emit failed(tr("Re-benchmark"), tr("the GPU is busy with another job"));
        return;
    }
    gpuJob(true);
    const std::string path = m_session->path;
    const EngineConfig config = m_config;
    const std::string name = title.toStdString();
    post<RebenchResult>(
        m_gpuContext,
        [this, path, parent, name, source, config] {
            return kf::ui::rebenchmark(path, parent, name, source, config, [this](WorkerClient *c) {
                std::lock_guard lock(m_clientMutex);
                m_client = c;
            });
        },
        [this](const RebenchResult &r) {
            gpuJob(false);
            if (!r.error.isEmpty())
                emit failed(tr("Re-benchmark"), r.error);
            if (r.node)
                emit rebenchmarked(r.node, r.verdict);
            refresh();
        });
}

void Engine::importCompileTime(const QString &jsonFile)
{
    if (!m_session || m_session->readOnly) {
        emit failed(tr("Import torch.compile time"),
                    tr("this session is read-only; use Save As to continue it in a file of your own"));
        return;
    }
    const std::string path = m_session->path;
    post<Outcome>(
        m_ioContext,
        [path, jsonFile] {
            QFile f(jsonFile);
            if (!f.open(QIODevice::ReadOnly))
                return Outcome{tr("cannot read %1").arg(jsonFile), true};
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(f.readAll().toStdString());
            } catch (const std::exception &) {
                return Outcome{
                    tr("%1 is not JSON (expected the output of tools/compile-baseline.py --json)").arg(jsonFile), true};
            }
            const double ms = j.is_object() ? j.value("compile_ms", 0.0) : 0.0;
            if (!(ms > 0))
                return Outcome{tr("%1 holds no \"compile_ms\" time").arg(jsonFile), true};
            auto store = SessionStore::open(path);
            if (!store)
                return Outcome{qs(store.error().text()), true};
            nlohmann::json value{{"median_ms", ms}, {"source", QFileInfo(jsonFile).fileName().toStdString()}};
            if (j.contains("eager_ms"))
                value["eager_ms"] = j["eager_ms"];
            if (Status s = store->setMetaJson(kTorchCompileMeta, value); !s)
                return Outcome{qs(s.error().text()), true};
            return Outcome{tr("torch.compile time %1 recorded in the session").arg(formatMs(ms)), false};
        },
        [this](const Outcome &o) {
            if (o.failed) {
                emit failed(tr("Import torch.compile time"), o.message);
                return;
            }
            emit finished(o.message);
            refresh();
        });
}

void Engine::exportCandidate(std::int64_t node, const QString &file, const QString &note)
{
    if (!m_session)
        return;
    SnapshotPtr s = m_session;
    post<Outcome>(
        m_ioContext,
        [s, node, file] {
            Status st = exportCandidateFile(*s, node, file.toStdString());
            return st ? Outcome{file, false} : Outcome{qs(st.error().text()), true};
        },
        [this, node, note](const Outcome &o) {
            if (o.failed)
                emit failed(tr("Export"), o.message);
            else
                emit finished(tr("Exported #%1 to %2").arg(node).arg(o.message) +
                              (note.isEmpty() ? QString() : QStringLiteral(". ") + note));
        });
}

void Engine::exportBank(const QString &folder)
{
    if (!m_session)
        return;
    SnapshotPtr s = m_session;
    post<Outcome>(
        m_ioContext,
        [s, folder] {
            auto files = exportBankFolder(*s, folder.toStdString());
            if (!files)
                return Outcome{qs(files.error().text()), true};
            return Outcome{tr("Exported %1 files of the bank to %2").arg(files->size()).arg(folder), false};
        },
        [this](const Outcome &o) {
            if (o.failed)
                emit failed(tr("Export bank"), o.message);
            else
                emit finished(o.message);
        });
}

void Engine::profile(std::int64_t node)
{
    if (!m_session || gpuBusy())
        return;
    gpuJob(true);
    SnapshotPtr s = m_session;
    const EngineConfig config = m_config;
    post<ProfileReport>(
        m_gpuContext,
        [this, s, node, config] {
            return profileCandidate(*s, node, config, [this](WorkerClient *c) {
                std::lock_guard lock(m_clientMutex);
                m_client = c;
            });
        },
        [this](const ProfileReport &r) {
            gpuJob(false);
            emit profiled(r);
        });
}

} // namespace kf::ui
