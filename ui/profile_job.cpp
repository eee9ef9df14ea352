// Profile: the candidate runs once under Nsight Compute. ncu starts the worker itself (the worker
// command is prefixed with ncu), so the kernel runs through the same worker path as everywhere
// else; ncu writes its CSV report to a file, never to the worker's stdout, which carries the
// protocol.
#include "engine_jobs.h"

#include "eval/candidate_run.h"
#include "kernel/candidate.h"
#include "model/format.h"

#include <QFile>
#include <QLocale>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>
#include <map>

namespace kf::ui {

namespace {

const char *const kMetrics[] = {
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
};
const char *const kStallPrefix = "smsp__average_warps_issue_stalled_";
const char *const kStallSuffix = "_per_issue_active.ratio";
const char *const kStalls[] = {
    "barrier",         "branch_resolving",   "dispatch_stall",   "drain",        "imc_miss",     "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar",           "mio_throttle", "misc",         "no_instruction",
    "not_selected",    "selected",           "short_scoreboard", "sleeping",     "tex_throttle", "wait"};

QString label(const QString &metric)
{
    static const std::map<QString, QString> names = {
        {QStringLiteral("gpu__time_duration.sum"), QObject::tr("Duration")},
        {QStringLiteral("sm__throughput.avg.pct_of_peak_sustained_elapsed"), QObject::tr("SM throughput")},
        {QStringLiteral("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
         QObject::tr("Memory throughput")},
        {QStringLiteral("dram__throughput.avg.pct_of_peak_sustained_elapsed"), QObject::tr("DRAM throughput")},
        {QStringLiteral("sm__warps_active.avg.pct_of_peak_sustained_active"), QObject::tr("Achieved occupancy")},
    };
    auto it = names.find(metric);
    return it == names.end() ? metric : it->second;
}

// One CSV line with "..." fields, as ncu writes them.
QStringList csvFields(const QString &line)
{
    QStringList out;
    QString cur;
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == u'"' && i + 1 < line.size() && line[i + 1] == u'"') {
                cur += c;
                ++i;
            } else if (c == u'"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == u'"') {
            quoted = true;
        } else if (c == u',') {
            out << cur;
            cur.clear();
        } else {
            cur += c;
        }
    }
    out << cur;
    return out;
}

} // namespace

ProfileReport parseNcuCsv(const QString &csv, const QStringList &kernels)
{
    ProfileReport r;
    QStringList header, units;
    std::map<QString, QStringList> lastRow; // kernel -> its last launch (warm caches)
    for (const QString &raw : csv.split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (!line.startsWith(QLatin1Char('"')))
            continue; // ==PROF== lines and blank ones
        const QStringList f = csvFields(line);
        if (header.isEmpty()) {
            header = f;
            continue;
        }
        const int nameCol = header.indexOf(QStringLiteral("Kernel Name"));
        const int idCol = header.indexOf(QStringLiteral("ID"));
        if (units.isEmpty() && idCol >= 0 && idCol < f.size() && f[idCol].isEmpty()) {
            units = f;
            continue;
        }
        if (nameCol < 0 || nameCol >= f.size())
            continue;
        QString name = f[nameCol];
        name = name.left(name.indexOf(QLatin1Char('('))).trimmed(); // "softmax_rows(const float *, ...)"
        if (kernels.isEmpty() || kernels.contains(name))
            lastRow[name] = f;
    }
    if (header.isEmpty() || lastRow.empty()) {
        r.error = QObject::tr("Nsight Compute reported no launch of the candidate's kernels");
        return r;
    }
    std::map<QString, double> stallSum;
    for (const auto &[kernel, row] : lastRow) {
        for (const char *m : kMetrics) {
            const int c = header.indexOf(QLatin1String(m));
            if (c < 0 || c >= row.size())
                continue;
            QString unit = c < units.size() ? units[c] : QString();
            const QString value = row[c].trimmed() + (unit.isEmpty() ? QString() : QLatin1Char(' ') + unit);
            r.metrics.emplace_back(lastRow.size() > 1 ? kernel + QStringLiteral(": ") + label(QLatin1String(m))
                                                      : label(QLatin1String(m)),
                                   value);
        }
        for (int c = 0; c < header.size() && c < row.size(); ++c)
            if (header[c].startsWith(QLatin1String(kStallPrefix)) && header[c].endsWith(QLatin1String(kStallSuffix))) {
                QString reason = header[c].mid(int(qstrlen(kStallPrefix)));
                reason.chop(int(qstrlen(kStallSuffix)));
                stallSum[reason] += QLocale::c().toDouble(QString(row[c]).remove(QLatin1Char(',')));
            }
    }
    std::vector<std::pair<double, QString>> stalls;
    for (const auto &[reason, v] : stallSum)
        if (v > 0)
            stalls.emplace_back(v, reason);
    std::sort(stalls.begin(), stalls.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    for (std::size_t i = 0; i < stalls.size() && i < 4; ++i)
        r.stalls << QStringLiteral("%1 (%2 cycles per issue)")
                        .arg(stalls[i].second.replace(QLatin1Char('_'), QLatin1Char(' ')))
                        .arg(stalls[i].first, 0, 'f', 2);
    r.ok = true;
    return r;
}

ProfileReport profileCandidate(const SessionSnapshot &s, std::int64_t node, const EngineConfig &config,
                               const std::function<void(WorkerClient *)> &client)
{
    ProfileReport r;
    r.node = node;
    const QString ncu = findCudaTool(QStringLiteral("ncu"));
    const NodeView *n = s.node(node);
    if (ncu.isEmpty()) {
        r.error = QObject::tr("Nsight Compute (ncu) is not installed");
        return r;
    }
    if (!n || !n->isCandidate() || !s.problem) {
        r.error = QObject::tr("select a candidate of a session whose problem parses");
        return r;
    }
    auto cand = parseCandidate(n->record.text);
    if (!cand) {
        r.error = qs(cand.error().text());
        return r;
    }
    QStringList kernels;
    for (const LaunchDecl &l : cand->launches)
        kernels << qs(l.kernel);
    QTemporaryDir dir;
    const QString report = dir.filePath(QStringLiteral("profile.csv"));
    QStringList metrics;
    for (const char *m : kMetrics)
        metrics << QLatin1String(m);
    for (const char *m : kStalls)
        metrics << QLatin1String(kStallPrefix) + QLatin1String(m) + QLatin1String(kStallSuffix);

    CandidateRunOptions o;
    o.worker.argv = {ncu.toStdString(),
                     "--target-processes",
                     "all",
                     "--kernel-name-base",
                     "function",
                     "--kernel-name",
                     ("regex:^(" + kernels.join(QLatin1Char('|')) + ")$").toStdString(),
                     "--launch-count",
                     "4",
                     "--metrics",
                     metrics.join(QLatin1Char(',')).toStdString(),
                     "--csv",
                     "--page",
                     "raw",
                     "--log-file",
                     report.toStdString()};
    const std::vector<std::string> worker = config.workerArgv.empty() ? defaultWorkerArgv() : config.workerArgv;
    o.worker.argv.insert(o.worker.argv.end(), worker.begin(), worker.end());
    // Kernels run tens of times slower under ncu's replay.
    o.worker.handshakeTimeout = o.worker.loadTimeout = milliseconds(900'000);
    o.timeout = milliseconds(900'000);
    o.policy = effectivePolicy(s.settings, *s.problem);
    o.trials = 1;
    o.timingTrials = 0; // verified once: what ncu needs to see
    o.track = client;
    auto run = runCandidate(*s.problem, n->record.text, o);
    if (!run) {
        r.error = qs(run.error().text());
        return r;
    }
    if (!run->result) {
        r.error = QObject::tr("Profiling needs an NVIDIA GPU: %1").arg(qs(run->hello.gpu.reason));
        return r;
    }
    QFile f(report);
    if (!f.open(QIODevice::ReadOnly)) {
        r.error = QObject::tr("Nsight Compute wrote no report (%1)").arg(qs(run->stderrTail).right(300));
        return r;
    }
    ProfileReport parsed = parseNcuCsv(QString::fromUtf8(f.readAll()), kernels);
    parsed.node = node;
    return parsed;
}

} // namespace kf::ui
