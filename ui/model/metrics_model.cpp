#include "model/metrics_model.h"

#include "kernel/candidate.h"
#include "model/format.h"
#include "model/occupancy.h"

#include <algorithm>
#include <map>

namespace kf::ui {

namespace {

// Threads per block and dynamic shared memory of each kernel, from the launch directives.
std::map<std::string, std::pair<int, int>> launchShapes(const SessionSnapshot &s, const NodeView &n)
{
    std::map<std::string, std::pair<int, int>> out;
    if (!s.problem)
        return out;
    auto c = parseCandidate(n.record.text);
    if (!c)
        return out;
    auto plan = resolveCandidate(*c, *s.problem);
    if (!plan)
        return out;
    for (const ResolvedLaunch &l : plan->launches)
        out[l.kernel] = {int(l.block[0] * l.block[1] * l.block[2]), int(l.smem)};
    return out;
}

} // namespace

MetricList candidateMetrics(const SessionSnapshot &s, const NodeView &n)
{
    MetricList m;
    QString status = qs(n.record.status);
    if (!n.record.reason.empty())
        status += QStringLiteral(": ") + qs(n.record.reason);
    m.emplace_back(QObject::tr("Status"), status);
    m.emplace_back(QObject::tr("Hand-edited"), n.record.edited ? QObject::tr("yes") : QObject::tr("no"));
    if (!n.result)
        return m;
    const EvalResult &r = *n.result;
    m.emplace_back(QObject::tr("Precision"), qs(toString(r.precision)));
    m.emplace_back(QObject::tr("Policy"), QStringLiteral("%1 (tolerance %2)").arg(qs(toString(r.policy))).arg(tolerance(r.policy), 0, 'g', 2));
    if (r.timing) {
        const Timing &t = *r.timing;
        m.emplace_back(QObject::tr("Time (median)"), formatMs(t.medianMs));
        m.emplace_back(QObject::tr("Time (min / p10 / p90)"),
                       QStringLiteral("%1 / %2 / %3").arg(formatMs(t.minMs), formatMs(t.p10Ms), formatMs(t.p90Ms)));
        m.emplace_back(QObject::tr("Timed runs"), QString::number(t.trials));
    }
    m.emplace_back(QObject::tr("Eager PyTorch"), formatMs(s.eagerMs));
    m.emplace_back(QObject::tr("Speedup"), formatSpeedup(n.speedup));
    if (s.compiledMs > 0 && n.medianMs > 0)
        m.emplace_back(QObject::tr("Speedup over torch.compile"), formatSpeedup(s.compiledMs / n.medianMs));
    m.emplace_back(QObject::tr("Roofline floor"), formatMs(r.floorMs));
    m.emplace_back(QObject::tr("% of floor"), formatPercent(n.percentOfFloor));
    m.emplace_back(QObject::tr("Max scaled error"), QString::number(r.maxScaledError, 'e', 2));
    int passed = 0;
    for (const TrialResult &t : r.trials)
        passed += t.passed ? 1 : 0;
    m.emplace_back(QObject::tr("Trials passed"), QStringLiteral("%1 of %2").arg(passed).arg(r.trials.size()));
    m.emplace_back(QObject::tr("KernelBench verdict"), r.kernelbenchPassed ? QObject::tr("pass") : QObject::tr("fail"));
    const auto shapes = launchShapes(s, n);
    for (const auto &[kernel, res] : r.resources) {
        const QString k = qs(kernel) + QStringLiteral(": ");
        m.emplace_back(k + QObject::tr("registers"), QString::number(res.registers));
        m.emplace_back(k + QObject::tr("shared memory"), QStringLiteral("%1 B").arg(res.sharedBytes));
        m.emplace_back(k + QObject::tr("spills (stores / loads)"),
                       QStringLiteral("%1 / %2 B").arg(res.spillStores).arg(res.spillLoads));
        m.emplace_back(k + QObject::tr("stack"), QStringLiteral("%1 B").arg(res.stackBytes));
        if (auto it = shapes.find(kernel); it != shapes.end()) {
            const double occ = theoreticalOccupancy(it->second.first, res.registers, res.sharedBytes + it->second.second);
            m.emplace_back(k + QObject::tr("occupancy (theoretical, sm_90)"),
                           QStringLiteral("%1 % at %2 threads").arg(occ * 100, 0, 'f', 0).arg(it->second.first));
        }
    }
    if (r.compileSeconds > 0)
        m.emplace_back(QObject::tr("Compile time"), QStringLiteral("%1 s").arg(r.compileSeconds, 0, 'f', 2));
    return m;
}

MetricsModel::MetricsModel(QObject *parent) : QAbstractTableModel(parent) {}

void MetricsModel::setNodes(SnapshotPtr s, std::int64_t selected, std::int64_t pinned)
{
    const NodeView *a = s ? s->node(selected) : nullptr;
    const NodeView *b = s ? s->node(pinned) : nullptr;
    MetricList ma, mb;
    if (a && a->isCandidate())
        ma = candidateMetrics(*s, *a);
    if (b && b->isCandidate())
        mb = candidateMetrics(*s, *b);
    std::vector<Row> rows;
    for (const auto &[name, value] : ma)
        rows.push_back({name, value, {}});
    for (const auto &[name, value] : mb) {
        auto it = std::find_if(rows.begin(), rows.end(), [&](const Row &r) { return r.name == name; });
        if (it == rows.end())
            rows.push_back({name, {}, value});
        else
            it->pinned = value;
    }
    beginResetModel();
    m_rows = std::move(rows);
    m_selected = a && a->isCandidate() ? selected : 0;
    m_pinned = b && b->isCandidate() ? pinned : 0;
    endResetModel();
}

QString MetricsModel::valueOf(const QString &metric, Column c) const
{
    for (const Row &r : m_rows)
        if (r.name == metric)
            return c == PinnedColumn ? r.pinned : c == NameColumn ? r.name : r.selected;
    return {};
}

int MetricsModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int MetricsModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MetricsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_rows.size()) || role != Qt::DisplayRole)
        return {};
    const Row &r = m_rows[std::size_t(index.row())];
    switch (index.column()) {
    case NameColumn: return r.name;
    case SelectedColumn: return r.selected;
    case PinnedColumn: return r.pinned;
    }
    return {};
}

QVariant MetricsModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn: return tr("Metric");
    case SelectedColumn: return m_selected ? tr("Selected #%1").arg(m_selected) : tr("Selected");
    case PinnedColumn: return m_pinned ? tr("Baseline #%1").arg(m_pinned) : tr("Baseline (none pinned)");
    }
    return {};
}

} // namespace kf::ui
