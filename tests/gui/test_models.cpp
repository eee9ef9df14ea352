// The workbench's models over the shipped example sessions: QAbstractItemModelTester on each, a
// golden text dump of the outline, incremental updates while a session grows, filtering and
// sorting, the small computations the views show (metrics, floors, occupancy, diff, ncu reports,
// status colours, the details that tell siblings apart, the progress estimate, a run's summary),
// and a node's model exchanges in a session written with the store's API.
#include "engine_jobs.h"
#include "llm_session.h"
#include "model/exchange_model.h"
#include "model/floors.h"
#include "model/line_diff.h"
#include "model/metrics_model.h"
#include "model/node_text.h"
#include "model/occupancy.h"
#include "model/outline_filter.h"
#include "model/outline_model.h"
#include "model/points_model.h"
#include "model/problem_model.h"
#include "model/progress_estimate.h"
#include "model/roles.h"
#include "model/search_summary.h"
#include "model/status_style.h"
#include "model/trajectory_model.h"
#include "search/hand_edit.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kf;
using namespace kf::ui;

namespace {

QString example(const QString &name)
{
    return QStringLiteral(KF_SOURCE_DIR "/resources/examples/%1.kfsession").arg(name);
}

SnapshotPtr load(const QString &path)
{
    auto s = readSnapshot(path.toStdString());
    if (!s)
        qFatal("cannot read %s: %s", qPrintable(path), s.error().text().c_str());
    return *s;
}

// One line per row: indentation by depth, then every column's text.
void dump(const QAbstractItemModel &m, const QModelIndex &parent, int depth, QString &out)
{
    for (int r = 0; r < m.rowCount(parent); ++r) {
        QStringList cells;
        for (int c = 0; c < m.columnCount(parent); ++c)
            cells << m.index(r, c, parent).data().toString();
        out += QString(depth * 2, QLatin1Char(' ')) + cells.join(QStringLiteral(" | ")) + QLatin1Char('\n');
        dump(m, m.index(r, 0, parent), depth + 1, out);
    }
}

const QStringList kExamples = {QStringLiteral("softmax"), QStringLiteral("layernorm"), QStringLiteral("relu"),
                               QStringLiteral("rmsnorm"), QStringLiteral("sum_dim")};

} // namespace

class TestGuiModels : public QObject {
    Q_OBJECT
private slots:
    void modelTester_data();
    void modelTester();
    void goldenOutline();
    void outlineGrowsWithTheSession();
    void filterAndSort();
    void problems();
    void trajectoryAndPoints();
    void metricsSideBySide();
    void floorsNameTheirSource();
    void statusStyles();
    void detailsTellSiblingsApart();
    void unjudgedAndUncheckedNodes();
    void progressEstimate();
    void runSummary();
    void occupancy_data();
    void occupancy();
    void diff();
    void ncuReport();
    void exchanges();
};

void TestGuiModels::modelTester_data()
{
    QTest::addColumn<QString>("session");
    for (const QString &e : kExamples)
        QTest::newRow(qPrintable(e)) << e;
}

void TestGuiModels::modelTester()
{
    QFETCH(QString, session);
    const SnapshotPtr s = load(example(session));
    QVERIFY(s->readOnly);
    QVERIFY(s->problem);
    QVERIFY(s->bestNode != 0);

    OutlineModel outline;
    QAbstractItemModelTester t1(&outline, QAbstractItemModelTester::FailureReportingMode::QtTest);
    outline.setSnapshot(s);
    QVERIFY(outline.rowCount() > 0);
    OutlineFilter filter;
    filter.setSourceModel(&outline);
    QAbstractItemModelTester t2(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (auto show : {OutlineFilter::Show::Correct, OutlineFilter::Show::Failed, OutlineFilter::Show::HandEdited,
                      OutlineFilter::Show::NeedsGpu, OutlineFilter::Show::Unchecked, OutlineFilter::Show::All})
        filter.setShow(show);
    filter.setShow(OutlineFilter::Show::Status, QStringLiteral("inconsistent"));
    filter.setShow(OutlineFilter::Show::All);
    filter.sort(OutlineModel::SpeedupColumn, Qt::DescendingOrder);
    filter.setText(QStringLiteral("BLOCK"));
    filter.setText({});

    TrajectoryModel trajectory;
    QAbstractItemModelTester t3(&trajectory, QAbstractItemModelTester::FailureReportingMode::QtTest);
    trajectory.setSnapshot(s);
    QVERIFY(trajectory.rowCount() > 0);
    PointsModel points;
    QAbstractItemModelTester t4(&points, QAbstractItemModelTester::FailureReportingMode::QtTest);
    points.setSnapshot(s);
    QVERIFY(points.rowCount() > 0);
    MetricsModel metrics;
    QAbstractItemModelTester t5(&metrics, QAbstractItemModelTester::FailureReportingMode::QtTest);
    metrics.setNodes(s, s->bestNode, 0);
    QVERIFY(metrics.rowCount() > 5);
    // Another session resets every model.
    const SnapshotPtr other = load(example(session == kExamples[0] ? kExamples[1] : kExamples[0]));
    outline.setSnapshot(other);
    trajectory.setSnapshot(other);
    points.setSnapshot(other);
    metrics.setNodes(other, other->bestNode, other->bestNode);
}

void TestGuiModels::goldenOutline()
{
    OutlineModel outline;
    outline.setSnapshot(load(example(QStringLiteral("softmax"))));
    QString text;
    dump(outline, {}, 0, text);
    const QString golden = QStringLiteral(KF_GOLDEN_DIR "/softmax_outline.txt");
    if (qEnvironmentVariableIsSet("KF_UPDATE_GOLDEN")) {
        QFile f(golden);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text.toUtf8());
        QSKIP("golden file written");
    }
    QFile f(golden);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(golden));
    QCOMPARE(text, QString::fromUtf8(f.readAll()));
}

void TestGuiModels::outlineGrowsWithTheSession()
{
    // A writable copy of an example, then hand-edited children added as a search would add nodes.
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("grow.kfsession")).toStdString();
    QVERIFY(SessionStore::exportReadOnlyCopy(example(QStringLiteral("relu")).toStdString(), path));
    OutlineModel outline;
    QAbstractItemModelTester tester(&outline, QAbstractItemModelTester::FailureReportingMode::QtTest);
    SnapshotPtr before = *readSnapshot(path, true);
    outline.setSnapshot(before);
    const std::int64_t parent = before->bestNode;
    QPersistentModelIndex kept = outline.indexOf(parent);
    QVERIFY(kept.isValid());
    const int rowsBefore = outline.rowCount(kept);

    QSignalSpy inserted(&outline, &QAbstractItemModel::rowsInserted);
    QSignalSpy reset(&outline, &QAbstractItemModel::modelReset);
    {
        auto store = SessionStore::open(path);
        QVERIFY(store);
        EvalResult r;
        r.verdict = Verdict::Wrong;
        r.reason = "trial 1: 12 elements differ";
        QVERIFY(recordHandEdited(*store, *before->problem, parent, "edit one", "// one", r));
        QVERIFY(recordHandEdited(*store, *before->problem, parent, "edit two", "// two", r));
    }
    outline.setSnapshot(*readSnapshot(path, true));
    QCOMPARE(reset.count(), 0);
    QCOMPARE(inserted.count(), 2);
    QVERIFY(kept.isValid());
    QCOMPARE(outline.nodeAt(kept), parent);
    QCOMPARE(outline.rowCount(kept), rowsBefore + 2);
    const QModelIndex child = outline.index(rowsBefore + 1, OutlineModel::NameColumn, kept);
    QVERIFY(child.data().toString().contains(QStringLiteral("edit two")));
    QVERIFY(child.data().toString().contains(QStringLiteral("hand-edited")));
    QCOMPARE(child.data(StatusRole).toString(), QStringLiteral("wrong"));
    QCOMPARE(child.data(EditedRole).toBool(), true);
}

void TestGuiModels::filterAndSort()
{
    OutlineModel outline;
    const SnapshotPtr s = load(example(QStringLiteral("softmax")));
    outline.setSnapshot(s);
    OutlineFilter filter;
    filter.setSourceModel(&outline);
    const int rounds = filter.rowCount();
    QVERIFY(rounds >= 3);
    filter.setShow(OutlineFilter::Show::Failed); // every candidate of this session is correct
    QCOMPARE(filter.rowCount(), 0);
    filter.setShow(OutlineFilter::Show::Correct);
    QCOMPARE(filter.rowCount(), rounds);
    filter.setShow(OutlineFilter::Show::All);

    // Sorted by speedup, fastest first, within each idea.
    filter.sort(OutlineModel::SpeedupColumn, Qt::DescendingOrder);
    const QModelIndex round = filter.index(0, 0);
    const QModelIndex idea = filter.index(0, 0, round);
    QVERIFY(filter.rowCount(idea) > 1);
    double last = 1e9;
    for (int r = 0; r < filter.rowCount(idea); ++r) {
        const double x = filter.index(r, 0, idea).data(SpeedupRole).toDouble();
        QVERIFY2(x <= last, "not sorted by speedup");
        last = x;
    }
    // The text filter keeps rounds and ideas above matching candidates only.
    filter.setText(QStringLiteral("CLUSTER=8"));
    int matches = 0;
    for (int r = 0; r < filter.rowCount(); ++r)
        for (int i = 0; i < filter.rowCount(filter.index(r, 0)); ++i)
            matches += filter.rowCount(filter.index(i, 0, filter.index(r, 0)));
    QCOMPARE(matches, 3);
}

void TestGuiModels::problems()
{
    ProblemModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto list = std::make_shared<ProblemList>(collectProblems(problemSearchPath(), {}));
    QVERIFY(list->problems.size() >= 5);
    model.setProblems(list);
    const int softmax = model.rowOf(QStringLiteral("softmax"));
    QVERIFY(softmax >= 0);
    QCOMPARE(model.index(softmax, ProblemModel::InputsColumn).data().toString(), QStringLiteral("x[4096 × 65536]"));
    QCOMPARE(model.index(softmax, ProblemModel::BytesColumn).data().toString(), QStringLiteral("2.15 GB"));
}

void TestGuiModels::trajectoryAndPoints()
{
    const SnapshotPtr s = load(example(QStringLiteral("softmax")));
    TrajectoryModel t;
    t.setSnapshot(s);
    QCOMPARE(t.rowCount(), int(s->trajectory.rows.size()));
    // Round 2 found 0.5970 ms (the session's best) against eager 1.0536 ms.
    const QModelIndex best = t.index(1, TrajectoryModel::BestMsColumn);
    QVERIFY(qAbs(best.data().toDouble() - 0.59704) < 1e-4);
    QVERIFY(qAbs(t.index(1, TrajectoryModel::PercentColumn).data().toDouble() - 176.5) < 0.2);
    QCOMPARE(best.data(NodeIdRole).toLongLong(), s->bestNode);
    const QString tsv = t.toTsv();
    QVERIFY(tsv.startsWith(QStringLiteral("Round\tBest ms\t% of reference")));
    QCOMPARE(tsv.count(QLatin1Char('\n')), t.rowCount() + 1);

    PointsModel p;
    p.setSnapshot(s);
    int candidates = 0;
    for (const NodeView &n : s->nodes)
        candidates += n.isCandidate() && n.speedup > 0 ? 1 : 0;
    QCOMPARE(p.rowCount(), candidates);
    const int row = p.rowOfNode(s->bestNode);
    QVERIFY(row >= 0);
    // Points of one round spread around the round number, never onto the next.
    for (int r = 0; r < p.rowCount(); ++r)
        QVERIFY(qAbs(p.index(r, PointsModel::XColumn).data().toDouble() -
                     p.index(r, PointsModel::RoundColumn).data().toInt()) <= 0.3 + 1e-9);
}

void TestGuiModels::metricsSideBySide()
{
    const SnapshotPtr s = load(example(QStringLiteral("softmax")));
    MetricsModel m;
    m.setNodes(s, s->bestNode, 5);
    QCOMPARE(m.selected(), s->bestNode);
    QCOMPARE(m.pinned(), std::int64_t(5));
    QCOMPARE(m.valueOf(QStringLiteral("Speedup")), QStringLiteral("1.76×"));
    QCOMPARE(m.valueOf(QStringLiteral("Status")), QStringLiteral("correct"));
    QCOMPARE(m.valueOf(QStringLiteral("Precision")), QStringLiteral("fp32"));
    QCOMPARE(m.valueOf(QStringLiteral("Kernel 1")), QStringLiteral("softmax_cluster"));
    QCOMPARE(m.valueOf(QStringLiteral("Kernel 1 registers")), QStringLiteral("48"));
    QVERIFY(m.valueOf(QStringLiteral("Kernel 1 occupancy (theoretical, sm_90)"))
                .endsWith(QStringLiteral("at 256 threads")));
    QVERIFY(!m.valueOf(QStringLiteral("Time (median)"), MetricsModel::PinnedColumn).isEmpty());
    QVERIFY(m.headerData(MetricsModel::PinnedColumn, Qt::Horizontal).toString().contains(QStringLiteral("#5")));
    // Rows align by meaning, not by kernel name: the first kernel of each candidate faces the other.
    const QString pinnedKernel = m.valueOf(QStringLiteral("Kernel 1"), MetricsModel::PinnedColumn);
    QVERIFY(!pinnedKernel.isEmpty() && pinnedKernel != QStringLiteral("softmax_cluster"));
    QVERIFY(!m.valueOf(QStringLiteral("Kernel 1 registers"), MetricsModel::PinnedColumn).isEmpty());
    // The difference column: #16 (0.59704 ms) against #5 (1.04656 ms) is faster, in green.
    const QString delta = m.valueOf(QStringLiteral("Time (median)"), MetricsModel::DeltaColumn);
    QCOMPARE(delta, QStringLiteral("−0.4495 ms (−43.0 %)"));
    int timeRow = -1;
    for (int r = 0; r < m.rowCount(); ++r)
        if (m.index(r, MetricsModel::NameColumn).data().toString() == QStringLiteral("Time (median)"))
            timeRow = r;
    QCOMPARE(m.index(timeRow, MetricsModel::DeltaColumn).data(Qt::ForegroundRole).value<QBrush>().color(),
             QColor(0x1f, 0x7a, 0x3d));
    QVERIFY(m.valueOf(QStringLiteral("Speedup"), MetricsModel::DeltaColumn).startsWith(QStringLiteral("+")));
    QVERIFY(m.valueOf(QStringLiteral("Status"), MetricsModel::DeltaColumn).isEmpty()); // no number, no difference
    // Rounds and ideas have no metrics.
    m.setNodes(s, *s->rootId() + 1, 0);
    QCOMPARE(m.rowCount(), 0);
}

void TestGuiModels::floorsNameTheirSource()
{
    // softmax moves 2.15 GB: the H200's datasheet 4.8 TB/s gives 0.4474 ms at every precision, the
    // 4.25 TB/s the worker measured gives the session's 0.5055 ms. Both are shown, each named.
    const SnapshotPtr s = load(example(QStringLiteral("softmax")));
    const Ceilings sheet = datasheetCeilings("NVIDIA H200");
    const QString floors = describeFloors(s->problem->flops.value_or(0), s->problem->bytes(), sheet);
    QVERIFY2(floors.startsWith(QStringLiteral("0.4474 ms at every precision (memory-bound)")), qPrintable(floors));
    MetricsModel m;
    m.setNodes(s, s->bestNode, 0);
    const QString measured = m.valueOf(QStringLiteral("Roofline floor (measured)"));
    QVERIFY2(measured.startsWith(QStringLiteral("0.5055 ms (fp32; ceilings measured on NVIDIA H200")),
             qPrintable(measured));
    const QString datasheet = m.valueOf(QStringLiteral("Roofline floor (datasheet)"));
    QVERIFY2(datasheet.startsWith(QStringLiteral("0.4474 ms (fp32; NVIDIA H200 datasheet")), qPrintable(datasheet));
    const QString session = sessionFloorsText(*s);
    QVERIFY2(session.startsWith(QStringLiteral("Ceilings measured on NVIDIA H200")) &&
                 session.endsWith(QStringLiteral("fp32 0.5055 ms")),
             qPrintable(session));
    // A compute-bound problem has a floor per precision.
    Ceilings c;
    c.bandwidthGBs = 1000;
    c.tflops = {{"fp32", 50}, {"tf32", 400}, {"fp16", 800}, {"bf16", 800}};
    const auto byPrecision = floorsByPrecision(1e12, 1e6, c);
    QCOMPARE(byPrecision.size(), std::size_t(5)); // fp32, tf32x3, bf16x3, tf32, fp16 and bf16 together
    QCOMPARE(byPrecision[2].precisions, QStringList({QStringLiteral("bf16x3")}));
    QVERIFY(qFuzzyCompare(byPrecision[2].ms, 1e12 / (800e12 / 3) * 1e3));
    QCOMPARE(byPrecision.back().precisions, QStringList({QStringLiteral("fp16"), QStringLiteral("bf16")}));
    QCOMPARE(describeFloors(1e12, 1e6, c).section(QStringLiteral(" · "), 0, 0), QStringLiteral("fp32 20.00 ms"));
}

void TestGuiModels::statusStyles()
{
    // Every status has a colour of its own, "inconsistent" too (keyed by its string).
    const QStringList all = candidateStatuses() +
        QStringList{QStringLiteral("finished"), QStringLiteral("failed"), QStringLiteral("running"),
                    QStringLiteral("stopped"), QStringLiteral("interrupted")};
    QVERIFY(all.contains(QStringLiteral("inconsistent")));
    QVERIFY(all.contains(QStringLiteral("needs gpu")));
    QSet<QRgb> colours;
    for (const QString &s : all)
        colours.insert(statusColor(s).rgb());
    QCOMPARE(colours.size(), int(QSet<QString>(all.begin(), all.end()).size()));
    QCOMPARE(statusGroup(QStringLiteral("inconsistent")), StatusGroup::Failed);
    QCOMPARE(statusGroup(QStringLiteral("needs gpu")), StatusGroup::Unjudged);
    QCOMPARE(statusGroup(QStringLiteral("finished")), StatusGroup::Good);
    // An unchecked kernel's icon differs from a checked one's.
    QVERIFY(statusIcon(QStringLiteral("correct"), true).pixmap(16).toImage() !=
            statusIcon(QStringLiteral("correct")).pixmap(16).toImage());
}

void TestGuiModels::detailsTellSiblingsApart()
{
    // softmax: candidates are named by number, their parameters in a column of their own.
    const SnapshotPtr softmax = load(example(QStringLiteral("softmax")));
    OutlineModel outline;
    outline.setSnapshot(softmax);
    const QModelIndex best = outline.indexOf(16);
    QCOMPARE(best.data().toString(), QStringLiteral("#16"));
    QCOMPARE(best.siblingAtColumn(OutlineModel::DetailsColumn).data().toString(),
             QStringLiteral("BLOCK=256 · CLUSTER=8 · ELEMS=32"));
    QVERIFY(best.data(Qt::ToolTipRole).toString().contains(QStringLiteral("BLOCK=256 · CLUSTER=8 · ELEMS=32")));
    QCOMPARE(outline.index(0, OutlineModel::DetailsColumn).data().toString(),
             QStringLiteral("7 candidates · 7 correct"));
    // layernorm round 4: four ideas share one title; each says what sets it apart.
    const SnapshotPtr layernorm = load(example(QStringLiteral("layernorm")));
    outline.setSnapshot(layernorm);
    const QModelIndex round = outline.indexOf(33);
    QCOMPARE(outline.rowCount(round), 4);
    QSet<QString> seen;
    for (int r = 0; r < 4; ++r) {
        const QModelIndex idea = outline.index(r, OutlineModel::DetailsColumn, round);
        QCOMPARE(outline.index(r, 0, round).data().toString(), outline.index(0, 0, round).data().toString());
        const QString d = idea.data().toString();
        QVERIFY2(d.startsWith(QStringLiteral("near ")), qPrintable(d));
        QVERIFY2(!d.contains(QStringLiteral("VEC=")), qPrintable(d)); // the same in all four: no news
        seen.insert(d);
    }
    QCOMPARE(seen.size(), 4);
    QCOMPARE(nodeDetails(*layernorm, *layernorm->node(34)), QStringLiteral("near BLOCK=1024 · SPLIT=32"));
}

void TestGuiModels::unjudgedAndUncheckedNodes()
{
    // A finished round whose candidates only compiled is not green: it waits for a GPU. A kernel
    // that compute-sanitizer could not judge is marked where it is shown.
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("marks.kfsession")).toStdString();
    QVERIFY(SessionStore::exportReadOnlyCopy(example(QStringLiteral("relu")).toStdString(), path));
    const SnapshotPtr before = *readSnapshot(path, true);
    std::int64_t round = 0, unchecked = 0;
    {
        auto store = SessionStore::open(path);
        QVERIFY(store);
        NodeRecord r;
        r.parent = before->rootId();
        r.kind = NodeKind::Round;
        r.round = 9;
        r.title = "Round 9";
        r.status = "finished";
        auto roundId = store->addNode(r);
        QVERIFY(roundId);
        round = *roundId;
        r.parent = round;
        r.kind = NodeKind::Idea;
        r.title = "Compiled only";
        r.status = "needs gpu";
        auto idea = store->addNode(r);
        QVERIFY(idea);
        EvalResult waiting;
        waiting.verdict = Verdict::NeedsGpu;
        QVERIFY(recordHandEdited(*store, *before->problem, *idea, "waits", before->node(before->bestNode)->record.text,
                                 waiting));
        EvalResult judged = *before->node(before->bestNode)->result;
        judged.sanitizer = SanitizerCheck{"unchecked", {"memcheck"}, 1.5, "the tool timed out", 0};
        auto id = recordHandEdited(*store, *before->problem, before->bestNode, "unchecked",
                                   before->node(before->bestNode)->record.text, judged);
        QVERIFY(id);
        unchecked = *id;
    }
    const SnapshotPtr s = *readSnapshot(path, true);
    QCOMPARE(s->node(round)->record.status, std::string("finished"));
    QCOMPARE(s->node(round)->shownStatus, std::string("needs gpu"));
    QVERIFY(s->node(unchecked)->sanitizerUnchecked);
    OutlineModel outline;
    outline.setSnapshot(s);
    QCOMPARE(outline.indexOf(round).data(StatusRole).toString(), QStringLiteral("needs gpu"));
    QVERIFY(outline.indexOf(round).data(Qt::ToolTipRole).toString().contains(QStringLiteral("no correct kernel")));
    const QModelIndex u = outline.indexOf(unchecked);
    QVERIFY(u.data(SanitizerUncheckedRole).toBool());
    QVERIFY(u.data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("could not check it (unchecked): the tool timed out")));
    // And both have a filter of their own.
    OutlineFilter filter;
    filter.setSourceModel(&outline);
    auto shown = [&](std::int64_t node) { return filter.mapFromSource(outline.indexOf(node)).isValid(); };
    filter.setShow(OutlineFilter::Show::NeedsGpu);
    QVERIFY(shown(round) && !shown(unchecked));
    filter.setShow(OutlineFilter::Show::Unchecked);
    QVERIFY(shown(unchecked) && !shown(round));
    filter.setShow(OutlineFilter::Show::Status, QStringLiteral("needs gpu"));
    QVERIFY(shown(round));
    filter.setShow(OutlineFilter::Show::Status, QStringLiteral("inconsistent"));
    QCOMPARE(filter.rowCount(), 0);
    // The metrics say it too.
    MetricsModel m;
    m.setNodes(s, unchecked, 0);
    QVERIFY(m.valueOf(QStringLiteral("Sanitizer")).startsWith(QStringLiteral("unchecked")));
}

void TestGuiModels::progressEstimate()
{
    ProgressEstimate e;
    e.start(12, 0);
    QCOMPARE(e.etaSeconds(0.5), -1.0);
    // The first results come 5 s in (the workers started, the baseline was measured): that is no
    // time per candidate. Two judged at once are one step.
    e.judged(5.0);
    e.judged(5.01);
    QCOMPARE(e.etaSeconds(5.02), -1.0);
    e.judged(6.0);
    e.judged(7.0);
    QCOMPARE(e.done(), 4);
    QCOMPARE(e.etaSeconds(7.0), (7.0 - 5.0) / 2 * 8); // 1 s per candidate, 8 left
    QCOMPARE(e.fraction(7.0), 4.0 / 12);
    // A budget caps it.
    e.start(12, 8.0);
    QCOMPARE(e.etaSeconds(1.0), 7.0);
    e.judged(2.0);
    e.judged(3.0);
    QCOMPARE(e.etaSeconds(3.0), 5.0);
    QCOMPARE(e.fraction(4.0), 0.5);
    // More work than expected raises the total.
    e.start(1, 0);
    e.judged(1.0);
    e.queued();
    QCOMPARE(e.total(), 2);
}

void TestGuiModels::runSummary()
{
    const SnapshotPtr s = load(example(QStringLiteral("softmax")));
    int candidates = 0;
    for (const NodeView &n : s->nodes)
        candidates += n.isCandidate() ? 1 : 0;
    QCOMPARE(
        searchSummary(*s, 0, QStringLiteral("rounds")),
        QStringLiteral("Finished (rounds): %1 candidates — %1 correct. Best: #16, 0.5970 ms, 1.76×.").arg(candidates));
    const std::int64_t last = s->nodes.back().id();
    QCOMPARE(searchSummary(*s, last, QStringLiteral("cancelled")),
             QStringLiteral(
                 "Finished (cancelled): no candidate was judged. Best: #16, 0.5970 ms, 1.76× (from before this run)."));
}

void TestGuiModels::occupancy_data()
{
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("registers");
    QTest::addColumn<int>("shared");
    QTest::addColumn<double>("expected");
    QTest::newRow("light") << 256 << 32 << 0 << 1.0;
    QTest::newRow("registers") << 1024 << 64 << 0 << 0.5;        // 64 × 32 × 32 warps = all 65536 registers
    QTest::newRow("shared") << 128 << 16 << 100 * 1024 << 0.125; // two blocks of 4 warps fit in 228 KB
    QTest::newRow("too many registers") << 1024 << 255 << 0 << 0.0;
}

void TestGuiModels::occupancy()
{
    QFETCH(int, threads);
    QFETCH(int, registers);
    QFETCH(int, shared);
    QFETCH(double, expected);
    QCOMPARE(theoreticalOccupancy(threads, registers, shared), expected);
}

void TestGuiModels::diff()
{
    const QString a = QStringLiteral("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n");
    QString b = a;
    b.replace(QStringLiteral("e\n"), QStringLiteral("E\nE2\n"));
    const QString d = unifiedDiff(a, b, QStringLiteral("old"), QStringLiteral("new"));
    QCOMPARE(d, QStringLiteral("--- old\n+++ new\n@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n+E\n+E2\n f\n g\n h\n"));
    QCOMPARE(unifiedDiff(a, a, QStringLiteral("x"), QStringLiteral("y")), QString());
}

void TestGuiModels::ncuReport()
{
    // The shape of `ncu --csv --page raw`: a header, a units row, one row per profiled launch.
    const QString csv = QStringLiteral(
        "==PROF== Connected to process 123\n"
        "\"ID\",\"Process ID\",\"Kernel "
        "Name\",\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
        "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"sm__warps_active.avg.pct_of_peak_sustained_active\","
        "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
        "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\"\n"
        "\"\",\"\",\"\",\"usecond\",\"%\",\"%\",\"%\",\"inst\",\"inst\"\n"
        "\"0\",\"123\",\"at::native::elementwise_kernel(int)\",\"5.0\",\"10\",\"20\",\"30\",\"1\",\"1\"\n"
        "\"1\",\"123\",\"softmax_rows(const float *, float *, "
        "int)\",\"612.5\",\"41.2\",\"88.9\",\"93.1\",\"7.5\",\"2.25\"\n");
    const ProfileReport r = parseNcuCsv(csv, {QStringLiteral("softmax_rows")});
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.metrics.size(), std::size_t(4));
    QCOMPARE(r.metrics[0].first, QStringLiteral("Duration"));
    QCOMPARE(r.metrics[0].second, QStringLiteral("612.5 usecond"));
    QCOMPARE(r.metrics[2].second, QStringLiteral("88.9 %"));
    QCOMPARE(r.stalls.size(), 2);
    QVERIFY(r.stalls[0].startsWith(QStringLiteral("long scoreboard")));
    QVERIFY(!parseNcuCsv(csv, {QStringLiteral("other")}).ok);
}

void TestGuiModels::exchanges()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("llm.kfsession")).toStdString();
    auto written = test::writeLlmSession(path);
    QVERIFY2(written, written ? "" : written.error().text().c_str());

    const ExchangesPtr forCandidate = readExchanges(path, written->candidate);
    QVERIFY2(forCandidate->error.empty(), forCandidate->error.c_str());
    QCOMPARE(forCandidate->records.size(), std::size_t(1));
    ExchangeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setExchanges(forCandidate);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, ExchangeModel::IdColumn).data().toString(),
             QStringLiteral("#%1").arg(written->implementExchange));
    QCOMPARE(model.index(0, ExchangeModel::PurposeColumn).data().toString(), QStringLiteral("implement"));
    QCOMPARE(model.index(0, ExchangeModel::ModelColumn).data().toString(), QStringLiteral("test-model"));
    QCOMPARE(model.index(0, ExchangeModel::PromptTokensColumn).data(SortRole).toLongLong(), 2400);
    QCOMPARE(model.index(0, ExchangeModel::CompletionTokensColumn).data(SortRole).toLongLong(), 800);
    QCOMPARE(model.index(0, ExchangeModel::CostColumn).data().toString(), QStringLiteral("0.0112"));
    QCOMPARE(model.index(0, ExchangeModel::OutcomeColumn).data().toString(), QStringLiteral("used"));
    QCOMPARE(model.index(0, ExchangeModel::StopColumn).data().toString(), QStringLiteral("length · cut off"));
    QVERIFY(model.index(0, ExchangeModel::StopColumn).data(Qt::ToolTipRole).toString().contains("cut off"));
    QCOMPARE(model.headerData(ExchangeModel::StopColumn, Qt::Horizontal).toString(), QStringLiteral("Stop"));
    QCOMPARE(model.index(0, 0).data(NodeIdRole).toLongLong(), written->candidate);

    const QString text = exchangeText(*model.record(0));
    for (const QString &part : {QString::fromUtf8(test::kTestPrompt), QString::fromUtf8(test::kTestAnswer),
                                QStringLiteral("test-model"), QStringLiteral("=== Thinking ==="),
                                QStringLiteral("cost 0.0112"), QStringLiteral("stopped: length · cut off")})
        QVERIFY2(text.contains(part), qPrintable(part));
    QVERIFY(text.indexOf(QStringLiteral("=== Prompt ===")) < text.indexOf(QStringLiteral("=== Answer ===")));

    // The idea has its own exchange; a round has none; a file that is not there says so.
    model.setExchanges(readExchanges(path, written->idea));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, ExchangeModel::PurposeColumn).data().toString(), QStringLiteral("ideas"));
    QCOMPARE(model.index(0, ExchangeModel::StopColumn).data().toString(), QStringLiteral("stop")); // ended in full
    model.setExchanges(readExchanges(path, written->round));
    QCOMPARE(model.rowCount(), 0);
    model.setExchanges(nullptr);
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(!readExchanges(dir.filePath(QStringLiteral("none.kfsession")).toStdString(), 1)->error.empty());

    // The shipped examples were made by the built-in generator: no exchanges at all.
    const SnapshotPtr softmax = load(example(QStringLiteral("softmax")));
    const ExchangesPtr builtin = readExchanges(softmax->path, softmax->bestNode);
    QVERIFY2(builtin->error.empty(), builtin->error.c_str());
    QVERIFY(builtin->records.empty());
}

QTEST_MAIN(TestGuiModels)
#include "test_models.moc"
