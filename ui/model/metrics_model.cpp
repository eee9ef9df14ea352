#include "model/metrics_model.h"

#include "gpu/physical_floor.h"
#include "kernel/candidate.h"
#include "model/floors.h"
#include "model/format.h"
#include "model/occupancy.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>
#include <map>

namespace kf::ui {

namespace {

struct LaunchShape {
    int threads = 0, dynamicSmem = 0;
};

// The kernels in the order the candidate launches them, with each one's block size and dynamic
// shared memory from the launch directives; kernels the directives do not name come last.
std::vector<std::pair<std::string, std::optional<LaunchShape>>> kernelsInOrder(const SessionSnapshot &s,
                                                                               const NodeView &n)
{
    std::vector<std::pair<std::string, std::optional<LaunchShape>>> out;
    auto add = [&](const std::string &kernel, std::optional<LaunchShape> shape) {
        if (std::none_of(out.begin(), out.end(), [&](const auto &k) { return k.first == kernel; }))
            out.emplace_back(kernel, shape);
    };
    if (s.problem)
        if (auto c = parseCandidate(n.record.text))
            if (auto plan = resolveCandidate(*c, *s.problem))
                for (const ResolvedLaunch &l : plan->launches)
                    add(l.kernel, LaunchShape{int(l.block[0] * l.block[1] * l.block[2]), int(l.smem)});
    if (n.result)
        for (const auto &[kernel, res] : n.result->resources)
            add(kernel, std::nullopt);
    return out;
}

QString sanitizerText(const SanitizerCheck &c)
{
    QString text = qs(c.outcome);
    if (!c.tools.empty()) {
        QStringList tools;
        for (const std::string &t : c.tools)
            tools << qs(t);
        text += QStringLiteral(" (%1)").arg(tools.join(QStringLiteral(", ")));
    }
    if (c.outcome == "unchecked")
        text = QObject::tr("unchecked: compute-sanitizer could not judge it");
    if (!c.note.empty())
        text += QStringLiteral(": ") + qs(c.note);
    return text;
}

QString signedNumber(double v, int decimals)
{
    // A real minus sign, and a plus, so that the column reads as differences.
    const QString n = QString::number(std::fabs(v), 'f', decimals);
    return (v < 0 ? QStringLiteral("−") : QStringLiteral("+")) + n;
}

} // namespace

MetricList candidateMetrics(const SessionSnapshot &s, const NodeView &n)
{
    using B = Metric::Better;
    MetricList m;
    auto text = [&](const QString &name, const QString &value) {
        m.push_back({name, value, std::nullopt, {}, B::Neither});
    };
    // Times, speedups and percentages of 0 are unknown; counts and bytes of 0 are zero.
    auto number = [&](const QString &name, const QString &value, double v, const QString &unit, B better) {
        const bool known = v > 0 || (unit != u"ms" && unit != u"×" && unit != u"%" && unit != u"s");
        m.push_back({name, value, known ? std::optional<double>(v) : std::nullopt, unit, better});
    };
    QString status = qs(n.record.status);
    if (!n.record.reason.empty())
        status += QStringLiteral(": ") + qs(n.record.reason);
    text(QObject::tr("Status"), status);
    text(QObject::tr("Hand-edited"), n.record.edited ? QObject::tr("yes") : QObject::tr("no"));
    if (!n.result)
        return m;
    const EvalResult &r = *n.result;
    if (r.sanitizer)
        text(QObject::tr("Sanitizer"), sanitizerText(*r.sanitizer));
    text(QObject::tr("Precision"), qs(toString(r.precision)));
    text(QObject::tr("Policy"),
         QStringLiteral("%1 (tolerance %2)").arg(qs(toString(r.policy))).arg(tolerance(r.policy), 0, 'g', 2));
    if (r.timing) {
        const Timing &t = *r.timing;
        number(QObject::tr("Time (median)"), formatMs(t.medianMs), t.medianMs, QStringLiteral("ms"), B::Lower);
        text(QObject::tr("Time (min / p10 / p90)"),
             QStringLiteral("%1 / %2 / %3").arg(formatMs(t.minMs), formatMs(t.p10Ms), formatMs(t.p90Ms)));
        text(QObject::tr("Timed runs"), QString::number(t.trials));
    }
    text(QObject::tr("Eager PyTorch"), formatMs(s.eagerMs));
    number(QObject::tr("Speedup"), formatSpeedup(n.speedup), n.speedup, QStringLiteral("×"), B::Higher);
    if (s.compiledMs > 0 && n.medianMs > 0)
        number(QObject::tr("Speedup over torch.compile"), formatSpeedup(s.compiledMs / n.medianMs),
               s.compiledMs / n.medianMs, QStringLiteral("×"), B::Higher);
    // Both floors, each with its precision and source: the verdicts use the measured one.
    const QString precision = qs(toString(r.precision));
    if (r.floorMs > 0) {
        QString source = s.meta.gpuName.empty() ? QObject::tr("measured ceilings")
                                                : QObject::tr("ceilings measured on %1").arg(qs(s.meta.gpuName));
        if (const QString rates = describeCeilings(s.ceilings); !rates.isEmpty())
            source += QStringLiteral(": ") + rates;
        number(QObject::tr("Roofline floor (measured)"),
               QStringLiteral("%1 (%2; %3)").arg(formatMs(r.floorMs), precision, source), r.floorMs,
               QStringLiteral("ms"), B::Neither);
    }
    if (s.problem && !s.meta.gpuName.empty()) {
        const Ceilings sheet = datasheetCeilings(s.meta.gpuName);
        const double ms = floorMs(s.problem->flops.value_or(0), s.problem->bytes(), r.precision, sheet);
        if (ms > 0)
            number(QObject::tr("Roofline floor (datasheet)"),
                   QStringLiteral("%1 (%2; %3 datasheet: %4)")
                       .arg(formatMs(ms), precision, qs(s.meta.gpuName), describeCeilings(sheet)),
                   ms, QStringLiteral("ms"), B::Neither);
    }
    number(QObject::tr("% of floor"), formatPercent(n.percentOfFloor), n.percentOfFloor, QStringLiteral("%"),
           B::Higher);
    number(QObject::tr("Max scaled error"), QString::number(r.maxScaledError, 'e', 2), r.maxScaledError, {}, B::Lower);
    int passed = 0;
    for (const TrialResult &t : r.trials)
        passed += t.passed ? 1 : 0;
    text(QObject::tr("Trials passed"), QStringLiteral("%1 of %2").arg(passed).arg(r.trials.size()));
    text(QObject::tr("KernelBench verdict"), r.kernelbenchPassed ? QObject::tr("pass") : QObject::tr("fail"));
    int index = 0;
    for (const auto &[kernel, shape] : kernelsInOrder(s, n)) {
        const QString k = QObject::tr("Kernel %1").arg(++index);
        text(k, qs(kernel));
        auto it = r.resources.find(kernel);
        if (it == r.resources.end())
            continue;
        const KernelResources &res = it->second;
        number(k + QObject::tr(" registers"), QString::number(res.registers), res.registers, {}, B::Neither);
        number(k + QObject::tr(" shared memory"), QStringLiteral("%1 B").arg(res.sharedBytes), res.sharedBytes,
               QStringLiteral("B"), B::Neither);
        number(k + QObject::tr(" spills (stores / loads)"),
               QStringLiteral("%1 / %2 B").arg(res.spillStores).arg(res.spillLoads),
               double(res.spillStores + res.spillLoads), QStringLiteral("B"), B::Lower);
        text(k + QObject::tr(" stack"), QStringLiteral("%1 B").arg(res.stackBytes));
        if (shape) {
            const double occ =
                theoreticalOccupancy(shape->threads, res.registers, res.sharedBytes + shape->dynamicSmem);
            number(k + QObject::tr(" occupancy (theoretical, sm_90)"),
                   QStringLiteral("%1 % at %2 threads").arg(occ * 100, 0, 'f', 0).arg(shape->threads), occ * 100,
                   QStringLiteral("%"), B::Higher);
        }
    }
    if (r.compileSeconds > 0)
        number(QObject::tr("Compile time"), QStringLiteral("%1 s").arg(r.compileSeconds, 0, 'f', 2), r.compileSeconds,
               QStringLiteral("s"), B::Lower);
    return m;
}

QString metricDelta(const Metric &a, const Metric &b)
{
    if (!a.value || !b.value)
        return {};
    const double d = *a.value - *b.value;
    if (d == 0)
        return QStringLiteral("=");
    const QString relative =
        *b.value != 0 ? QStringLiteral(" (%1 %)").arg(signedNumber(100 * d / *b.value, 1)) : QString();
    if (a.unit == u"ms")
        return signedNumber(d, 4) + QStringLiteral(" ms") + relative;
    if (a.unit == u"s")
        return signedNumber(d, 2) + QStringLiteral(" s") + relative;
    if (a.unit == u"×")
        return signedNumber(d, 2) + QStringLiteral("×");
    if (a.unit == u"%")
        return signedNumber(d, 1) + QObject::tr(" points");
    if (a.unit == u"B")
        return signedNumber(d, 0) + QStringLiteral(" B");
    return std::fabs(d) >= 1
        ? signedNumber(d, 0)
        : (d < 0 ? QStringLiteral("−") : QStringLiteral("+")) + QString::number(std::fabs(d), 'e', 2);
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
    for (const Metric &metric : ma)
        rows.push_back({metric.name, metric, std::nullopt});
    for (const Metric &metric : mb) {
        auto it = std::find_if(rows.begin(), rows.end(), [&](const Row &r) { return r.name == metric.name; });
        if (it == rows.end())
            rows.push_back({metric.name, std::nullopt, metric});
        else
            it->pinned = metric;
    }
    beginResetModel();
    m_rows = std::move(rows);
    m_selected = a && a->isCandidate() ? selected : 0;
    m_pinned = b && b->isCandidate() ? pinned : 0;
    endResetModel();
}

QString MetricsModel::valueOf(const QString &metric, Column c) const
{
    for (int r = 0; r < int(m_rows.size()); ++r)
        if (m_rows[std::size_t(r)].name == metric)
            return data(index(r, c)).toString();
    return {};
}

int MetricsModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int MetricsModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MetricsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_rows.size()))
        return {};
    const Row &r = m_rows[std::size_t(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case NameColumn:
            return r.name;
        case SelectedColumn:
            return r.selected ? r.selected->text : QString();
        case PinnedColumn:
            return r.pinned ? r.pinned->text : QString();
        case DeltaColumn:
            return r.selected && r.pinned ? metricDelta(*r.selected, *r.pinned) : QString();
        }
    } else if (role == Qt::ForegroundRole && index.column() == DeltaColumn && r.selected && r.pinned &&
               r.selected->value && r.pinned->value && r.selected->better != Metric::Better::Neither &&
               *r.selected->value != *r.pinned->value) {
        const bool higher = *r.selected->value > *r.pinned->value;
        const bool better = higher == (r.selected->better == Metric::Better::Higher);
        return QBrush(better ? QColor(0x1f, 0x7a, 0x3d) : QColor(0xb0, 0x1c, 0x1c));
    } else if (role == Qt::ToolTipRole && index.column() != DeltaColumn) {
        return data(index, Qt::DisplayRole); // long values (floors, statuses) in full
    }
    return {};
}

QVariant MetricsModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Metric");
    case SelectedColumn:
        return m_selected ? tr("Selected #%1").arg(m_selected) : tr("Selected");
    case PinnedColumn:
        return m_pinned ? tr("Baseline #%1").arg(m_pinned) : tr("Baseline (none pinned)");
    case DeltaColumn:
        return tr("Selected − baseline");
    }
    return {};
}

} // namespace kf::ui
