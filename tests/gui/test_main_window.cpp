// Drives the real main window with QTest: open a shipped example, follow one selection through
// the outline, graph, editor, metrics and chart; damaged and foreign files; a compile error marked
// in the editor; export a .cu and build it with nvcc; Save As; the no-GPU state; saved window state;
// the model exchanges behind a node; the trajectory table's idea column.
#include "candidate_pane.h"
#include "cuda_editor.h"
#include "exchange_view.h"
#include "graph_view.h"
#include "gui_support.h"
#include "llm_session.h"
#include "message_bar.h"
#include "model/format.h"
#include "model/exchange_model.h"
#include "model/metrics_model.h"
#include "model/outline_filter.h"
#include "model/trajectory_model.h"
#include "model/points_model.h"
#include "model/roles.h"
#include "round_chart.h"
#include "search/hand_edit.h"
#include "search_panel.h"
#include "trajectory_view.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QPushButton>
#include <QHeaderView>
#include <QScatterSeries>
#include <QTableView>
#include <QTabWidget>
#include <QToolButton>
#include <QTreeView>

#include <QChartView>
#include <QLineSeries>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void selectionFollowsEverywhere();
    void newerRequestSupersedes();
    void badFiles_data();
    void badFiles();
    void compileErrorIsMarked();
    void exportBuildsWithNvcc();
    void exportBankAndTrajectory();
    void exchangesTab();
    void saveAsMakesAWritableCopy();
    void followsAnotherWriter();
    void withoutGpu();
    void shortcutsAndFilter();
    void windowStateIsRestored();
};

void TestMainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestMainWindow::selectionFollowsEverywhere()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    const SnapshotPtr s = wb.engine->session();
    QVERIFY(s && s->readOnly);
    QCOMPARE(w.graph()->nodeCount(), int(s->nodes.size()));
    // Opening selects the best kernel.
    QTRY_COMPARE(w.selectedNode(), s->bestNode);

    // Click a candidate in the outline: node 9 ("BLOCK=256, VEC=4", round 1).
    const std::int64_t node = 9;
    QTreeView *tree = w.outline();
    tree->expandAll();
    const QModelIndex index = w.outlineFilter()->mapFromSource(w.outlineModel()->indexOf(node));
    QVERIFY(index.isValid());
    tree->scrollTo(index);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(index).center());
    QTRY_COMPARE(w.selectedNode(), node);
    QCOMPARE(w.graph()->selectedNode(), node);
    QCOMPARE(w.candidate()->node(), node);
    QCOMPARE(w.candidate()->source(), qs(s->node(node)->record.text));
    QCOMPARE(w.candidate()->metrics()->selected(), node);
    QCOMPARE(w.candidate()->metrics()->valueOf(QStringLiteral("Status")), QStringLiteral("correct"));
    QCOMPARE(w.chart()->pointSeries()->count(), w.pointsModel()->rowCount());
    QVERIFY(w.candidate()->ideaText().contains(QStringLiteral("Online max and sum")));
    QVERIFY(w.candidate()->diffText().contains(QStringLiteral("no parent kernel")));

    // Click another node in the graph: the outline and the editor follow.
    w.showView(MainWindow::GraphTab);
    GraphView *g = w.graph();
    const std::int64_t other = 16;
    g->selectNode(other);
    g->selectNode(0);
    const QPoint inGraph = g->mapFromScene(g->nodePosition(other) + QPointF(20, 13));
    QTest::mouseClick(g->viewport(), Qt::LeftButton, {}, inGraph);
    QTRY_COMPARE(w.selectedNode(), other);
    QCOMPARE(tree->currentIndex().data(NodeIdRole).toLongLong(), other);
    QCOMPARE(w.candidate()->source(), qs(s->node(other)->record.text));
    QVERIFY(g->isOnBestPath(other)); // node 16 is the best kernel
    QVERIFY(!g->isOnBestPath(node));

    // Click a point of the chart.
    w.showView(MainWindow::ChartTab);
    QCoreApplication::processEvents();
    const QPoint p = w.chart()->pointPosition(node);
    QVERIFY(!p.isNull());
    QTest::mouseClick(w.chart()->chartView()->viewport(), Qt::LeftButton, {}, p);
    QTRY_COMPARE(w.selectedNode(), node);

    // Pin a baseline and compare.
    w.action(QStringLiteral("actionPin"))->trigger();
    QCOMPARE(w.candidate()->pinned(), node);
    w.selectNode(other);
    QCOMPARE(w.candidate()->metrics()->pinned(), node);
    QVERIFY(!w.candidate()->metrics()->valueOf(QStringLiteral("Time (median)"), MetricsModel::PinnedColumn).isEmpty());
}

void TestMainWindow::newerRequestSupersedes()
{
    // Two opens in a row: the first is stale before it runs, and only the second arrives.
    Workbench wb;
    wb.window->show();
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    wb.engine->openSession(examplePath(QStringLiteral("relu")), false);
    wb.engine->openSession(examplePath(QStringLiteral("sum_dim")), false);
    QVERIFY(opened.wait(10000));
    QTest::qWait(300);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(qs(wb.engine->session()->meta.problemName), QStringLiteral("sum_dim"));
    QCOMPARE(qs(wb.window->outlineModel()->snapshot()->meta.problemName), QStringLiteral("sum_dim"));

    // A recent file that is gone is dropped from the list when it fails to open.
    const QString gone = wb.dir.filePath(QStringLiteral("gone.kfsession"));
    wb.settings->addRecentFile(gone);
    QSignalSpy failed(wb.engine.get(), &Engine::sessionFailed);
    wb.window->openSession(gone);
    QVERIFY(failed.wait(10000));
    QVERIFY(wb.window->messageBar()->text().contains(QStringLiteral("no such file")));
    QVERIFY(!wb.settings->recentFiles().contains(gone));
}

void TestMainWindow::badFiles_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("expected");
    QTest::newRow("foreign") << QByteArray("name = \"softmax\"\n") << QStringLiteral("not a KernelForge session");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("not a KernelForge session");
    QFile f(examplePath(QStringLiteral("relu")));
    f.open(QIODevice::ReadOnly);
    QTest::newRow("cut short") << f.read(3000) << QStringLiteral("damaged");
}

void TestMainWindow::badFiles()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, expected);
    Workbench wb;
    wb.window->show();
    QVERIFY(wb.open(examplePath(QStringLiteral("relu"))));
    const SnapshotPtr before = wb.engine->session();
    const QString bad = wb.dir.filePath(QStringLiteral("bad.kfsession"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
    f.close();
    QSignalSpy failed(wb.engine.get(), &Engine::sessionFailed);
    wb.window->openSession(bad);
    QVERIFY(failed.wait(10000));
    // Said inline, naming the file; the session on screen stays.
    const QString text = wb.window->messageBar()->text();
    QVERIFY2(text.contains(expected), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("bad.kfsession")), qPrintable(text));
    QCOMPARE(wb.engine->session(), before);
    QCOMPARE(wb.window->outlineModel()->snapshot(), before);
    QCOMPARE(f.size(), qint64(content.size())); // the file was not touched
}

void TestMainWindow::compileErrorIsMarked()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    QTRY_VERIFY(w.selectedNode() != 0);
    CandidatePane *pane = w.candidate();
    CudaEditor *editor = pane->editor();
    // Type a line that cannot compile at the top of the kernel body (after its opening brace).
    const QStringList lines = editor->text().split(QLatin1Char('\n'));
    const int kernel = lines.indexOf(QRegularExpression(QStringLiteral("^extern \"C\" __global__.*")));
    const int line = lines.indexOf(QStringLiteral("{"), kernel); // 0-based index of the brace
    QVERIFY(kernel > 0 && line > kernel);
    editor->setFocus();
    editor->setCursorPosition(line + 1, 0);
    QTest::keyClicks(editor, QStringLiteral("    int broken = undefined_name;"));
    QTest::keyClick(editor, Qt::Key_Return);
    QVERIFY(pane->edited());
    QVERIFY(pane->diffText().contains(QStringLiteral("+    int broken = undefined_name;")));
    QSignalSpy checked(wb.engine.get(), &Engine::compileChecked);
    QTest::keyClick(&w, Qt::Key_B, Qt::ControlModifier);
    QVERIFY(checked.wait(180000));
    const auto report = checked.takeFirst().at(0).value<CompileReport>();
    if (!report.ran)
        QSKIP(qPrintable(QStringLiteral("no NVRTC compile process could run here: ") + report.error));
    QVERIFY(!report.ok);
    QVERIFY2(editor->lineHasMarker(line + 2, CudaEditor::ErrorMarker), "no error marker on the edited line");
    QCOMPARE(editor->errorCount(), 1);
    QVERIFY(pane->logText().contains(QStringLiteral("undefined_name")));
    // Revert: the stored source and its markers come back.
    pane->revert();
    QVERIFY(!pane->edited());
    QVERIFY(!editor->lineHasMarker(line + 2, CudaEditor::ErrorMarker));
}

void TestMainWindow::exportBuildsWithNvcc()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    QTRY_VERIFY(w.selectedNode() != 0);
    const QString file = wb.dir.filePath(QStringLiteral("softmax_best.cu"));
    QSignalSpy done(wb.engine.get(), &Engine::finished);
    w.exportBest(file);
    QVERIFY(done.wait(10000));
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY(text.contains(QStringLiteral("kf_launch_softmax")));
    QVERIFY(text.contains(QStringLiteral("NVIDIA H200")));
    QVERIFY(text.contains(QStringLiteral("1.76")));
    const QString nvcc = QStringLiteral(KF_NVCC);
    if (nvcc.isEmpty() || !QFile::exists(nvcc))
        QSKIP("nvcc is not installed");
    QProcess p;
    p.start(nvcc, {QStringLiteral("-gencode=arch=compute_90a,code=sm_90a"), QStringLiteral("-c"), file, QStringLiteral("-o"),
                   wb.dir.filePath(QStringLiteral("softmax_best.o"))});
    QVERIFY(p.waitForFinished(300000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
}

void TestMainWindow::exportBankAndTrajectory()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(wb.open(examplePath(QStringLiteral("layernorm"))));
    const QString folder = wb.dir.filePath(QStringLiteral("bank"));
    QSignalSpy done(wb.engine.get(), &Engine::finished);
    w.exportBank(folder);
    QVERIFY(done.wait(10000));
    const QStringList files = QDir(folder).entryList({QStringLiteral("*.cu")});
    QVERIFY(!files.isEmpty());
    QVERIFY(QFile::exists(QDir(folder).filePath(QStringLiteral("bank.csv"))));

    w.trajectory()->copy();
    QVERIFY(QApplication::clipboard()->text().startsWith(QStringLiteral("Round\tBest ms")));
    const QString csv = wb.dir.filePath(QStringLiteral("t.csv"));
    QVERIFY(w.trajectory()->writeCsv(csv));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readLine().startsWith("round,best_ms,percent_of_reference"));

    // The idea's title takes the width the numbers leave, and never less than its floor.
    w.showView(MainWindow::TrajectoryTab);
    QTableView *table = w.trajectory()->view();
    QHeaderView *header = table->horizontalHeader();
    auto others = [&] {
        int sum = 0;
        for (int c = 0; c < TrajectoryModel::ColumnCount; ++c)
            sum += c == TrajectoryModel::IdeaColumn ? 0 : header->sectionSize(c);
        return sum;
    };
    QTRY_VERIFY(header->sectionSize(TrajectoryModel::IdeaColumn) >= TrajectoryView::kIdeaMinWidth);
    w.resize(2600, 950);
    QTRY_COMPARE(header->sectionSize(TrajectoryModel::IdeaColumn), table->viewport()->width() - others());
    QVERIFY(header->sectionSize(TrajectoryModel::IdeaColumn) > TrajectoryView::kIdeaMinWidth);
    const QModelIndex idea = w.trajectoryModel()->index(0, TrajectoryModel::IdeaColumn);
    QCOMPARE(idea.data(Qt::ToolTipRole).toString(), idea.data().toString());

    const QString png = wb.dir.filePath(QStringLiteral("chart.png"));
    w.showView(MainWindow::ChartTab);
    QVERIFY(w.saveChart(png));
    QVERIFY(QImage(png).width() > 100);
}

void TestMainWindow::exchangesTab()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.resize(1400, 900);
    w.show();
    const QString file = wb.dir.filePath(QStringLiteral("llm.kfsession"));
    auto written = writeLlmSession(file.toStdString());
    QVERIFY2(written, written ? "" : written.error().text().c_str());
    QVERIFY(wb.open(file));
    CandidatePane *pane = w.candidate();
    ExchangeView *view = pane->exchanges();
    QCOMPARE(pane->tabs()->tabText(CandidatePane::ExchangesTab), QStringLiteral("Exchanges"));
    // The search panel takes the session's generator, server and model, so Start continues with them.
    const GeneratorChoice choice = w.searchPanel()->generatorChoice();
    QCOMPARE(choice.name, QStringLiteral("openai"));
    QCOMPARE(choice.baseUrl, QStringLiteral("http://127.0.0.1:8000/v1"));
    QCOMPARE(choice.model, QStringLiteral("test-model"));
    QVERIFY(choice.keySource == KeySource::None);
    QVERIFY(w.searchPanel()->problem().isEmpty());

    // Read on the I/O thread: the tab says so until the answer comes.
    w.selectNode(written->candidate);
    pane->tabs()->setCurrentIndex(CandidatePane::ExchangesTab);
    QCOMPARE(view->message(), QStringLiteral("Reading the exchanges…"));
    QTRY_VERIFY(view->text().contains(QString::fromUtf8(kTestPrompt)));
    QVERIFY(view->text().contains(QString::fromUtf8(kTestAnswer)));
    QCOMPARE(view->model()->rowCount(), 1);
    QCOMPARE(view->model()->index(0, ExchangeModel::ModelColumn).data().toString(), QStringLiteral("test-model"));
    QCOMPARE(view->model()->index(0, ExchangeModel::PurposeColumn).data().toString(), QStringLiteral("implement"));
    QCOMPARE(view->model()->index(0, ExchangeModel::CostColumn).data().toString(), QStringLiteral("0.0112"));
    QVERIFY(view->find(QStringLiteral("shared memory")));
    QVERIFY(view->find(QStringLiteral("shared memory"))); // the next one, or the first again
    QVERIFY(!view->find(QStringLiteral("not in this exchange")));

    // The idea shows the answer that proposed it; a round has none to show.
    w.selectNode(written->idea);
    QTRY_COMPARE(view->model()->index(0, ExchangeModel::PurposeColumn).data().toString(), QStringLiteral("ideas"));
    QVERIFY(view->text().contains(QStringLiteral("Propose 1 new idea")));
    w.selectNode(written->round);
    QVERIFY(view->showsMessage());
    QVERIFY(view->message().startsWith(QStringLiteral("Select an idea or a candidate")));

    // A node of the built-in generator.
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    QTRY_VERIFY(w.selectedNode() != 0);
    QCOMPARE(pane->tabs()->currentIndex(), int(CandidatePane::ExchangesTab));
    QTRY_COMPARE(view->message(),
                 QStringLiteral("This node was produced by the built-in generator; it has no model exchanges."));
}

void TestMainWindow::saveAsMakesAWritableCopy()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(wb.open(examplePath(QStringLiteral("rmsnorm"))));
    QVERIFY(wb.engine->session()->readOnly);
    const QString copy = wb.dir.filePath(QStringLiteral("mine.kfsession"));
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.saveSessionAs(copy);
    QVERIFY(opened.wait(10000));
    const SnapshotPtr s = wb.engine->session();
    QCOMPARE(qs(s->path), copy);
    QVERIFY(!s->readOnly);
    QCOMPARE(s->nodes.size(), std::size_t(20)); // as in the example
    QVERIFY(wb.settings->recentFiles().contains(copy));

    // A torch.compile time from tools/compile-baseline.py --json: the chart draws its line.
    QVERIFY(!w.chart()->compileSeries()->isVisible() || w.chart()->compileSeries()->count() == 0);
    const QString json = wb.dir.filePath(QStringLiteral("compile.json"));
    QFile j(json);
    QVERIFY(j.open(QIODevice::WriteOnly));
    j.write(QByteArray("{\"problem\": \"rmsnorm\", \"eager_ms\": 1.2, \"compile_ms\": 0.8}"));
    j.close();
    QSignalSpy updated(wb.engine.get(), &Engine::sessionUpdated);
    wb.engine->importCompileTime(json);
    QVERIFY(updated.wait(10000));
    QCOMPARE(wb.engine->session()->compiledMs, 0.8);
    QCOMPARE(w.chart()->compileSeries()->count(), 2);
    QCOMPARE(w.chart()->compileSeries()->at(0).y(), wb.engine->session()->eagerMs / 0.8);
}

void TestMainWindow::followsAnotherWriter()
{
    // A session that another process writes (kernelforge-cli search, say) shows what it adds.
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    const QString file = wb.dir.filePath(QStringLiteral("live.kfsession"));
    QVERIFY(SessionStore::exportReadOnlyCopy(examplePath(QStringLiteral("relu")).toStdString(), file.toStdString()));
    auto writer = SessionStore::open(file.toStdString()); // WAL from here on, as a writer leaves it
    QVERIFY(writer);
    QVERIFY(wb.open(file));
    const std::size_t before = wb.engine->session()->nodes.size();
    const std::int64_t best = wb.engine->session()->bestNode;
    EvalResult r;
    r.verdict = Verdict::CompileError;
    r.reason = "candidate.cu(3): error: expected a ';'";
    QVERIFY(recordHandEdited(*writer, *wb.engine->session()->problem, best, "written elsewhere", "// x", r));
    QTRY_COMPARE_WITH_TIMEOUT(wb.engine->session()->nodes.size(), before + 1, 10000);
    const QModelIndex added = w.outlineModel()->indexOf(std::int64_t(wb.engine->session()->nodes.back().id()));
    QVERIFY(added.isValid());
    QVERIFY(added.data().toString().contains(QStringLiteral("written elsewhere")));
}

void TestMainWindow::withoutGpu()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(wb.waitForGpuProbe());
    if (wb.engine->gpu().present)
        QSKIP("this machine has a GPU; the no-GPU state is not shown");
    QVERIFY(w.gpuBanner()->isVisible());
    QVERIFY(w.gpuBanner()->text().contains(QStringLiteral("No NVIDIA GPU")));
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    QTRY_VERIFY(w.selectedNode() != 0);
    // Start and Re-benchmark say why they are unavailable.
    QVERIFY(!w.searchPanel()->startButton()->isEnabled());
    QVERIFY(w.searchPanel()->startButton()->toolTip().contains(QStringLiteral("read-only")) ||
            w.searchPanel()->startButton()->toolTip().contains(QStringLiteral("GPU")));
    auto *rebench = w.candidate()->findChild<QToolButton *>(QStringLiteral("rebenchmark"));
    QVERIFY(rebench && !rebench->isEnabled());
    QVERIFY2(rebench->toolTip().contains(QStringLiteral("NVIDIA GPU")), qPrintable(rebench->toolTip()));
    QVERIFY(!w.action(QStringLiteral("actionStart"))->isEnabled());
    // A writable copy still cannot start without a GPU, and says that.
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.saveSessionAs(wb.dir.filePath(QStringLiteral("copy.kfsession")));
    QVERIFY(opened.wait(10000));
    QVERIFY(w.searchPanel()->startButton()->toolTip().contains(QStringLiteral("NVIDIA GPU")));
    // A compile-only search needs a worker, not a GPU.
    w.searchPanel()->findChild<QCheckBox *>(QStringLiteral("compileOnly"))->setChecked(true);
    QVERIFY2(w.searchPanel()->startButton()->isEnabled(), qPrintable(w.searchPanel()->startButton()->toolTip()));
    QVERIFY(w.action(QStringLiteral("actionStart"))->isEnabled());
}

void TestMainWindow::shortcutsAndFilter()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    QTest::keyClick(&w, Qt::Key_3, Qt::ControlModifier);
    QCOMPARE(w.views()->currentIndex(), int(MainWindow::ChartTab));
    QTest::keyClick(&w, Qt::Key_4, Qt::ControlModifier);
    QCOMPARE(w.views()->currentIndex(), int(MainWindow::TrajectoryTab));
    QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
    QCOMPARE(w.views()->currentIndex(), int(MainWindow::GraphTab));
    w.selectNode(5);
    QTest::keyClick(&w, Qt::Key_G, Qt::ControlModifier); // select the best kernel
    QCOMPARE(w.selectedNode(), wb.engine->session()->bestNode);

    auto *show = w.findChild<QComboBox *>(QStringLiteral("statusFilter"));
    QVERIFY(show);
    show->setCurrentIndex(show->findText(QStringLiteral("Failed")));
    QCOMPARE(w.outline()->model()->rowCount(), 0);
    show->setCurrentIndex(show->findText(QStringLiteral("All")));
    QVERIFY(w.outline()->model()->rowCount() > 0);
}

void TestMainWindow::windowStateIsRestored()
{
    QTemporaryDir dir;
    const QString ini = dir.filePath(QStringLiteral("s.ini"));
    {
        Settings settings(ini, nullptr);
        Engine engine;
        MainWindow w(&settings, &engine);
        w.show();
        w.resize(1500, 901);
        QCoreApplication::processEvents();
        w.close();
    }
    Settings settings(ini, nullptr);
    QVERIFY(!settings.windowGeometry().isEmpty());
    QVERIFY(!settings.windowState().isEmpty());
    Engine engine;
    MainWindow w(&settings, &engine);
    w.show();
    QCOMPARE(w.size(), QSize(1500, 901));
}

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
