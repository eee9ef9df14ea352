#include "engine_jobs.h"

#include "eval/candidate_run.h"
#include "kernel/candidate.h"
#include "kernel/export.h"
#include "model/format.h"
#include "search/hand_edit.h"
#include "search/records.h"
#include "search/state.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <fstream>
#include <map>

namespace kf::ui {

namespace {

// "candidate.cu:4: @launch: ..." -> 4; 0 when the error names no line.
int lineOf(const Error &e)
{
    static const QRegularExpression re(QStringLiteral(":(\\d+)$"));
    const auto m = re.match(qs(e.where));
    return m.hasMatch() ? m.captured(1).toInt() : 0;
}

QString sassOf(const std::string &cubin)
{
    const QString tool = findCudaTool(QStringLiteral("cuobjdump"));
    if (tool.isEmpty() || cubin.empty())
        return {};
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("candidate.cubin")));
    if (!f.open(QIODevice::WriteOnly) || f.write(cubin.data(), qint64(cubin.size())) != qint64(cubin.size()))
        return {};
    f.close();
    QProcess p;
    p.start(tool, {QStringLiteral("-sass"), f.fileName()});
    if (!p.waitForFinished(60'000))
        return QObject::tr("cuobjdump did not finish within a minute");
    return QString::fromUtf8(p.readAllStandardOutput());
}

} // namespace

QString findCudaTool(const QString &name)
{
    QString path = QStandardPaths::findExecutable(name);
    if (path.isEmpty()) {
        const QString cuda = qEnvironmentVariable("CUDA_HOME", QStringLiteral("/usr/local/cuda"));
        path = QStandardPaths::findExecutable(name, {cuda + QStringLiteral("/bin")});
    }
    return path;
}

GpuStatus probeGpu(const EngineConfig &config)
{
    GpuStatus s;
    s.checked = true;
    WorkerConfig wc;
    wc.argv = config.workerArgv;
    WorkerClient w(wc);
    if (Status st = w.start(); !st) {
        s.reason = qs(st.error().text());
        return s;
    }
    const GpuInfo &g = w.info()->gpu;
    s.present = g.present;
    s.name = qs(g.name);
    s.arch = qs(g.arch);
    s.reason = qs(g.reason);
    s.workerVersion = qs(w.info()->worker);
    s.torch = qs(w.info()->torch);
    s.cudaRuntime = w.info()->cudaRuntime;
    s.cudaDriver = w.info()->cudaDriver;
    w.stop();
    return s;
}

CompileReport compileCheck(CompilePool &pool, const std::optional<Problem> &problem, const std::string &source,
                           const std::string &arch, std::int64_t node)
{
    CompileReport r;
    r.node = node;
    r.arch = qs(arch);
    auto cand = parseCandidate(source);
    if (!cand) {
        r.ran = true;
        r.diagnostics.push_back(Diagnostic{lineOf(cand.error()), "error", cand.error().message});
        r.log = qs(cand.error().text());
        return r;
    }
    if (problem)
        if (Status s = checkCandidate(*cand, *problem); !s) {
            r.ran = true;
            r.diagnostics.push_back(Diagnostic{lineOf(s.error()), "error", s.error().message});
            r.log = qs(s.error().text());
            return r;
        }
    auto out = pool.compile(CompileJob{source, kernelNames(*cand), arch});
    if (!out) {
        r.error = qs(out.error().text());
        return r;
    }
    r.ran = true;
    r.ok = out->ok;
    r.diagnostics = out->diagnostics;
    r.log = qs(out->log);
    r.ptx = qs(out->ptx);
    r.seconds = out->seconds;
    r.cached = out->cached;
    if (out->ok)
        r.sass = sassOf(out->cubin);
    return r;
}

RebenchResult rebenchmark(const std::string &sessionPath, std::int64_t parent, const std::string &title,
                          const std::string &source, const EngineConfig &config,
                          const std::function<void(WorkerClient *)> &client)
{
    RebenchResult out;
    auto store = SessionStore::open(sessionPath);
    if (!store) {
        out.error = qs(store.error().text());
        return out;
    }
    auto meta = store->sessionMeta();
    if (!meta) {
        out.error = qs(meta.error().text());
        return out;
    }
    auto problem = parseProblem(meta->problemText, meta->problemName + ".toml", meta->problemVariant);
    if (!problem) {
        out.error = qs(problem.error().text());
        return out;
    }
    SearchSettings settings;
    if (auto s = settingsFromJson(meta->settings))
        settings = *s;

    CandidateRunOptions o;
    o.worker.argv = config.workerArgv;
    o.policy = effectivePolicy(settings, *problem);
    o.trials = settings.trials;
    o.timingTrials = settings.timingTrials;
    o.baselineTrials = settings.timingTrials;
    if (const double eager = baselineMedianMs(meta->baseline); eager > 0)
        o.baseline =
            BaselineResult{(*meta->baseline)["timing"].get<Timing>(), meta->baseline->value("flags", nlohmann::json())};
    o.track = client;
    auto run = runCandidate(*problem, source, o);
    if (!run) {
        out.error = qs(run.error().text());
        return out;
    }
    if (!run->result) {
        out.error = QObject::tr("Re-benchmark needs an NVIDIA GPU: %1").arg(qs(run->hello.gpu.reason));
        return out;
    }
    if (run->baselineMeasured)
        (void)store->setBaseline(nlohmann::json{{"timing", run->baseline->timing}, {"flags", run->baseline->flags}});
    const EvalResult *r = &*run->result;
    auto id = recordHandEdited(*store, *problem, parent ? std::optional<std::int64_t>(parent) : std::nullopt, title,
                               source, *r);
    if (!id) {
        out.error = qs(id.error().text());
        return out;
    }
    out.node = *id;
    out.verdict = qs(toString(r->verdict));
    return out;
}

std::string exportWarning(const NodeView &n)
{
    const std::string status = n.record.status;
    if (status == "needs gpu")
        return "NOT VERIFIED: it compiled, but no GPU has run it yet (needs gpu); its results are unknown.";
    if (status == "queued" || status == "compiling" || !n.result)
        return "NOT VERIFIED: it was never evaluated (" + status + ").";
    if (status == "suspect") {
        std::string text = "SUSPECT: it passed verification, but its time is below what the GPU can do";
        if (!n.record.reason.empty())
            text += " (" + n.record.reason + ")";
        return text + "; its measurement is not trusted.";
    }
    if (status != "correct") {
        std::string text = "FAILED VERIFICATION (" + status + ")";
        if (!n.record.reason.empty())
            text += ": " + n.record.reason;
        return text + ". Do not rely on its results.";
    }
    if (n.sanitizerUnchecked) {
        std::string text = "compute-sanitizer could not check it (unchecked)";
        if (!n.result->sanitizer->note.empty())
            text += ": " + n.result->sanitizer->note;
        return text + ". It passed verification, but memory errors and races are not ruled out.";
    }
    return {};
}

Status exportCandidateFile(const SessionSnapshot &s, std::int64_t node, const std::string &file)
{
    const NodeView *n = s.node(node);
    if (!n || !n->isCandidate())
        return makeError(ErrorCode::NotFound, "node " + std::to_string(node) + " is not a candidate of this session");
    if (!s.problem)
        return makeError(ErrorCode::Parse, "the session's problem does not parse: " + s.problemError);
    auto cand = parseCandidate(n->record.text);
    if (!cand)
        return cand.error();
    ExportInfo info;
    info.gpu = s.meta.gpuName;
    if (n->speedup > 0)
        info.speedup = n->speedup;
    if (n->result && !n->result->trials.empty())
        info.maxError = n->result->maxScaledError;
    info.warning = exportWarning(*n);
    auto text = exportCandidate(*cand, *s.problem, info);
    if (!text)
        return text.error();
    std::ofstream f(file, std::ios::binary);
    if (!(f << *text) || !(f.flush()))
        return makeError(ErrorCode::Io, "cannot write " + file);
    return Ok{};
}

Result<std::vector<std::string>> exportBankFolder(const SessionSnapshot &s, const std::string &folder)
{
    std::vector<NodeRecord> records;
    records.reserve(s.nodes.size());
    for (const NodeView &n : s.nodes)
        records.push_back(n.record);
    const RestoredSearch restored = restoreSearch(records, s.settings.topK, s.settings.bankSize);
    const std::vector<KernelRecord> bank = restored.state.bank();
    if (bank.empty())
        return makeError(ErrorCode::Empty, "the session has no correct kernel to export");
    if (!QDir().mkpath(qs(folder)))
        return makeError(ErrorCode::Io, "cannot create the folder " + folder);
    std::vector<std::string> files;
    QString index = QStringLiteral("rank,node,idea,median_ms,speedup,file\n");
    int rank = 0;
    for (const KernelRecord &k : bank) {
        ++rank;
        QString idea = qs(k.ideaId).toLower();
        idea.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("_"));
        idea = idea.left(40);
        const QString name = QStringLiteral("%1_%2_node%3.cu").arg(rank, 2, 10, QLatin1Char('0')).arg(idea).arg(k.node);
        const std::string file = (QDir(qs(folder)).filePath(name)).toStdString();
        if (Status st = exportCandidateFile(s, k.node, file); !st)
            return st.error();
        files.push_back(file);
        const NodeView *n = s.node(k.node);
        index += QStringLiteral("%1,%2,\"%3\",%4,%5,%6\n")
                     .arg(rank)
                     .arg(k.node)
                     .arg(qs(k.ideaId).replace(QLatin1Char('"'), QStringLiteral("\"\"")))
                     .arg(n ? n->medianMs : 0.0, 0, 'f', 6)
                     .arg(n ? n->speedup : 0.0, 0, 'f', 4)
                     .arg(name);
    }
    const std::string indexFile = QDir(qs(folder)).filePath(QStringLiteral("bank.csv")).toStdString();
    std::ofstream f(indexFile, std::ios::binary);
    if (!(f << index.toStdString()))
        return makeError(ErrorCode::Io, "cannot write " + indexFile);
    files.push_back(indexFile);
    return files;
}

} // namespace kf::ui
