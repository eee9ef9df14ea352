// Drives the real main window with QTest: open a shipped example, follow one selection through
// the outline, graph, editor, metrics and chart; damaged and foreign files; a compile error marked
// in the editor; export a .cu and build it with nvcc; Save As; the no-GPU state; saved window state;
// the model exchanges behind a node; the trajectory table's idea column. And what a person needs
// to see: a compile check's progress and result where they look, a click on a trajectory row or a
// compile-log line, chart tooltips, summaries of rounds and ideas, floors named by their source,
// unsaved edits never dropped without asking, exports that say what they hold, the Help menu, and
// the shipped problems found wherever the window starts.
#include "candidate_pane.h"
#include "cuda_editor.h"
#include "data_folders.h"
#include "exchange_view.h"
#include "graph_view.h"
#include "gui_support.h"
#include "llm_session.h"
#include "message_bar.h"
#include "model/exchange_model.h"
#include "model/format.h"
#include "model/metrics_model.h"
#include "model/outline_filter.h"
#include "model/points_model.h"
#include "model/problem_model.h"
#include "model/roles.h"
#include "model/trajectory_model.h"
#include "problem_page.h"
#include "round_chart.h"
#include "search/hand_edit.h"
#include "search_panel.h"
#include "trajectory_view.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QHelpEvent>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QTreeView>

#include <QChartView>
#include <QLineSeries>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

// Answers the modal dialogs the window opens, as a person would: `answer` gets each one once.
class Answerer : public QObject {
public:
    explicit Answerer(std::function<void(QWidget *)> answer) : m_answer(std::move(answer))
    {
        m_timer.setInterval(20);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            QWidget *w = QApplication::activeModalWidget();
            if (w && w != m_last) {
                m_last = w;
                ++count;
                m_answer(w);
            }
        });
        m_timer.start();
    }
    int count = 0;

private:
    QTimer m_timer;
    QPointer<QWidget> m_last;
    std::function<void(QWidget *)> m_answer;
};

// Clicks the button of a QMessageBox by its object name; a file dialog gets `file` (or is cancelled).
std::function<void(QWidget *)> answer(const QString &button, const QString &file = {})
{
    return [button, file](QWidget *w) {
        if (auto *box = qobject_cast<QMessageBox *>(w)) {
            if (auto *b = box->findChild<QAbstractButton *>(button))
                b->click();
        } else if (auto *dialog = qobject_cast<QFileDialog *>(w)) {
            if (file.isEmpty()) {
                dialog->reject();
            } else {
                // Typed in full into the name field, as a user would: selectFile() leaves the name
                // to be resolved in whatever folder the dialog's model has loaded by then.
                if (auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit")))
                    name->setText(file);
                else
                    dialog->selectFile(file);
                QMetaObject::invokeMethod(dialog, "accept"); // as its Save button does
            }
        }
    };
}

// Collects the files the window asks the desktop to open.
class Opened : public QObject {
    Q_OBJECT
public slots:
    void open(const QUrl &url) { urls << url; }

public:
    QList<QUrl> urls;
};

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
    void compileCheckFeedback();
    void trajectoryRowsAndChartTips();
    void roundAndIdeaSummaries();
    void floorsNameTheirSource();
    void unsavedEditsAreKept();
    void exportSaysWhatItHolds();
    void helpMenu();
    void problemsFromAnywhere();
};

void TestMainWindow::initTestCase() { QStandardPaths::setTestModeEnabled(true); }

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
    // Opening selects the best kernel; the graph shows it, and collapses what the outline collapses.
    QTRY_COMPARE(w.selectedNode(), s->bestNode);
    QTRY_VERIFY(w.graph()->isShown(s->bestNode));
    QVERIFY(w.graph()->nodeCount() < int(s->nodes.size()));

    // Click a candidate in the outline: node 9 ("BLOCK=256, VEC=4", round 1).
    const std::int64_t node = 9;
    QTreeView *tree = w.outline();
    tree->expandAll();
    w.syncGraphExpansion();
    QCOMPARE(w.graph()->nodeCount(), int(s->nodes.size()));
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
    p.start(nvcc,
            {QStringLiteral("-gencode=arch=compute_90a,code=sm_90a"), QStringLiteral("-c"), file, QStringLiteral("-o"),
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
    QVERIFY(idea.data(Qt::ToolTipRole).toString().startsWith(idea.data().toString() + QLatin1Char('\n')));

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
    // The Profile tab says what it needs.
    w.candidate()->tabs()->setCurrentIndex(CandidatePane::ProfileTab);
    QVERIFY(w.candidate()->profileHint().contains(QStringLiteral("needs an NVIDIA GPU and Nsight Compute")));
    QVERIFY2(w.candidate()->profileHint().contains(QStringLiteral("Running kernels is unavailable")),
             qPrintable(w.candidate()->profileHint()));
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
    show->setCurrentIndex(show->findText(QStringLiteral("Failed (any)")));
    QCOMPARE(w.outline()->model()->rowCount(), 0);
    // Every status has an entry of its own.
    for (const QString &status :
         {QStringLiteral("needs gpu"), QStringLiteral("inconsistent"), QStringLiteral("compile error")})
        QVERIFY2(show->findText(QStringLiteral("Only: ") + status) >= 0, qPrintable(status));
    QVERIFY(show->findText(QStringLiteral("Needs GPU")) >= 0);
    QVERIFY(show->findText(QStringLiteral("Sanitizer unchecked")) >= 0);
    show->setCurrentIndex(show->findText(QStringLiteral("Only: correct")));
    QVERIFY(w.outline()->model()->rowCount() > 0);
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

void TestMainWindow::compileCheckFeedback()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    QVERIFY(wb.showExample(QStringLiteral("softmax"), QSize(1400, 900)));
    QCOMPARE(w.selectedNode(), std::int64_t(16));
    CandidatePane *pane = w.candidate();
    CudaEditor *editor = pane->editor();
    // An error far below the lines the editor shows.
    editor->append(QStringLiteral("\n__device__ int broken() { return undefined_name; }\n"));
    const int broken =
        editor->text().split(QLatin1Char('\n')).indexOf(QRegularExpression(QStringLiteral(".*undefined_name.*")));
    QVERIFY(broken > 40);
    editor->setCursorPosition(0, 0);
    QSignalSpy checked(wb.engine.get(), &Engine::compileChecked);
    QTest::keyClick(&w, Qt::Key_B, Qt::ControlModifier);
    // Said at once where people look: the status bar and the log.
    QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("Compiling #16 with NVRTC…"));
    QVERIFY(w.console()->toPlainText().contains(QStringLiteral("Compile check of #16…")));
    QVERIFY(checked.wait(180000));
    if (!checked.first().at(0).value<CompileReport>().ran)
        QSKIP("no NVRTC compile process could run here");
    const QRegularExpression result(
        QStringLiteral("^Compile check of #16: 1 error, \\d+ warnings?, \\d+\\.\\d\\d s( \\(cached\\))?$"));
    QTRY_VERIFY2(result.match(w.statusBar()->currentMessage()).hasMatch(), qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(w.console()->toPlainText().contains(w.statusBar()->currentMessage()));
    // The editor shows the first error's line.
    int line = 0, index = 0;
    editor->getCursorPosition(&line, &index);
    QCOMPARE(line, broken);
    QCOMPARE(pane->tabs()->currentIndex(), int(CandidatePane::SourceTab));
    const int first = int(editor->SendScintilla(QsciScintilla::SCI_GETFIRSTVISIBLELINE));
    QVERIFY2(first <= broken && broken < first + int(editor->SendScintilla(QsciScintilla::SCI_LINESONSCREEN)),
             "the error's line is not in view");

    // A click on the log's line of the error shows that line too.
    editor->setCursorPosition(0, 0);
    pane->tabs()->setCurrentIndex(CandidatePane::LogTab);
    QsciScintilla *log = pane->log();
    const int logLine =
        log->text()
            .split(QLatin1Char('\n'))
            .indexOf(QRegularExpression(QStringLiteral("^candidate\\.cu\\(\\d+\\): error.*undefined_name.*")));
    QVERIFY2(logLine >= 0, qPrintable(log->text()));
    log->ensureLineVisible(logLine);
    QCoreApplication::processEvents();
    const long pos = log->positionFromLineIndex(logLine, 4);
    const QPoint at(int(log->SendScintilla(QsciScintilla::SCI_POINTXFROMPOSITION, 0UL, pos)),
                    int(log->SendScintilla(QsciScintilla::SCI_POINTYFROMPOSITION, 0UL, pos)) + 3);
    QTest::mouseClick(log->viewport(), Qt::LeftButton, {}, at);
    QTRY_COMPARE(pane->tabs()->currentIndex(), int(CandidatePane::SourceTab));
    editor->getCursorPosition(&line, &index);
    QCOMPARE(line, broken);

    // A clean check says so just as plainly.
    pane->revert();
    checked.clear();
    QTest::keyClick(&w, Qt::Key_B, Qt::ControlModifier);
    QVERIFY(checked.wait(180000));
    QTRY_VERIFY2(w.statusBar()->currentMessage().startsWith(QStringLiteral("Compile check of #16: 0 errors")),
                 qPrintable(w.statusBar()->currentMessage()));
}

void TestMainWindow::trajectoryRowsAndChartTips()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    QVERIFY(wb.showExample(QStringLiteral("softmax"), QSize(1400, 900)));
    // One click on a row selects that round's fastest kernel: #10 in round 1, #16 in round 2.
    w.showView(MainWindow::TrajectoryTab);
    QTableView *table = w.trajectory()->view();
    w.selectNode(5);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(table->model()->index(0, 0)).center());
    QTRY_COMPARE(w.selectedNode(), std::int64_t(10));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(table->model()->index(1, 0)).center());
    QTRY_COMPARE(w.selectedNode(), std::int64_t(16));
    QVERIFY(table->model()->index(0, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("#10")));

    // Every point of the chart has a tooltip, and so has the line of the best so far.
    w.showView(MainWindow::ChartTab);
    QCoreApplication::processEvents();
    RoundChart *chart = w.chart();
    const QPoint p = chart->pointPosition(9);
    QVERIFY(!p.isNull());
    QVERIFY2(chart->toolTipAt(p).startsWith(QStringLiteral("#9 ")), qPrintable(chart->toolTipAt(p)));
    QVERIFY(chart->toolTipAt(p + QPoint(3, -2)).startsWith(QStringLiteral("#9 ")));
    QVERIFY(chart->toolTipAt(QPoint(2, 2)).isEmpty());
    QWidget *viewport = chart->chartView()->viewport();
    QHelpEvent help(QEvent::ToolTip, p, viewport->mapToGlobal(p));
    QCoreApplication::sendEvent(viewport, &help);
    QTRY_VERIFY2(QToolTip::text().startsWith(QStringLiteral("#9 ")), qPrintable(QToolTip::text()));
}

void TestMainWindow::roundAndIdeaSummaries()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    QVERIFY(wb.showExample(QStringLiteral("softmax")));
    CandidatePane *pane = w.candidate();
    QVERIFY(!pane->showsSummary());
    w.selectNode(2); // Round 1
    QVERIFY(pane->showsSummary());
    QVERIFY(!pane->editor()->isVisible());
    const QString round = pane->summaryText();
    for (const QString &part :
         {QStringLiteral("Round 1"), QStringLiteral("7 candidates, 7 correct"),
          QStringLiteral("Best of this round: #10"), QStringLiteral("Block per row, three passes"),
          QStringLiteral("Online max and sum in one read")})
        QVERIFY2(round.contains(part), qPrintable(part + QStringLiteral(" is not in:\n") + round));
    w.selectNode(4); // its second idea
    const QString idea = pane->summaryText();
    for (const QString &part :
         {QStringLiteral("Online max and sum in one read"), QStringLiteral("Why:"),
          QStringLiteral("4 candidates, 4 correct; best #10 0.7779 ms (1.35×)"), QStringLiteral("BLOCK=1024 · VEC=4")})
        QVERIFY2(idea.contains(part), qPrintable(part + QStringLiteral(" is not in:\n") + idea));
    w.selectNode(9);
    QVERIFY(!pane->showsSummary());
    QVERIFY(pane->editor()->isVisible());
}

void TestMainWindow::floorsNameTheirSource()
{
    // The Problems page and the Metrics tab show the same two floors of softmax, each named.
    Workbench wb;
    MainWindow &w = *wb.window;
    QVERIFY(wb.showExample(QStringLiteral("softmax")));
    MetricsModel *m = w.candidate()->metrics();
    QVERIFY(m->valueOf(QStringLiteral("Roofline floor (measured)"))
                .startsWith(QStringLiteral("0.5055 ms (fp32; ceilings measured on NVIDIA H200")));
    QVERIFY(m->valueOf(QStringLiteral("Roofline floor (datasheet)"))
                .startsWith(QStringLiteral("0.4474 ms (fp32; NVIDIA H200 datasheet")));
    w.showView(MainWindow::ProblemsTab);
    QVERIFY(w.problems()->selectProblem(QStringLiteral("softmax")));
    w.problems()->findChild<QComboBox *>()->setCurrentText(QStringLiteral("H200"));
    const QString floor = w.problems()->floorText();
    QVERIFY2(floor.contains(QStringLiteral("Datasheet rates")) &&
                 floor.contains(QStringLiteral("0.4474 ms at every precision")),
             qPrintable(floor));
    QVERIFY2(floor.contains(QStringLiteral("Ceilings measured on NVIDIA H200")) &&
                 floor.contains(QStringLiteral("fp32 0.5055 ms")),
             qPrintable(floor));
    // Another problem's page does not claim the session's floors.
    QVERIFY(w.problems()->selectProblem(QStringLiteral("relu")));
    QVERIFY(!w.problems()->floorText().contains(QStringLiteral("Ceilings measured")));
}

void TestMainWindow::unsavedEditsAreKept()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    QVERIFY(wb.showExample(QStringLiteral("softmax")));
    QCOMPARE(w.selectedNode(), std::int64_t(16));
    CandidatePane *pane = w.candidate();
    pane->editor()->setCursorPosition(0, 0);
    QTest::keyClicks(pane->editor(), QStringLiteral("// kept"));
    QVERIFY(pane->edited());
    QCOMPARE(pane->draftNodes(), QList<qint64>{16});

    // Closing the session, quitting, opening another: each asks; "Cancel" keeps everything.
    {
        Answerer a(answer(QStringLiteral("keepEditing")));
        w.action(QStringLiteral("actionClose"))->trigger();
        QCOMPARE(a.count, 1);
        QVERIFY(!w.close());
        QCOMPARE(a.count, 2);
        w.openSession(examplePath(QStringLiteral("relu")));
        QCOMPARE(a.count, 3);
    }
    QTest::qWait(100);
    QVERIFY(w.isVisible());
    QCOMPARE(qs(wb.engine->session()->meta.problemName), QStringLiteral("softmax"));
    QVERIFY(pane->source().startsWith(QStringLiteral("// kept")));

    // Save As keeps the edit: the copy has the same nodes.
    const QString copy = wb.dir.filePath(QStringLiteral("mine.kfsession"));
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.saveSessionAs(copy);
    QVERIFY(opened.wait(10000));
    QCOMPARE(qs(wb.engine->session()->path), copy);
    QTRY_COMPARE(pane->node(), std::int64_t(16));
    QVERIFY(pane->edited());
    QVERIFY(pane->source().startsWith(QStringLiteral("// kept")));

    // "Save edited source as .cu…" from the question writes the edit, then the session closes.
    const QString file = wb.dir.filePath(QStringLiteral("softmax_16_edited.cu"));
    {
        Answerer a(answer(QStringLiteral("saveEdits"), file));
        w.action(QStringLiteral("actionClose"))->trigger();
        QCOMPARE(a.count, 2); // the question, then the file dialog
    }
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().startsWith("// kept"));
    QVERIFY(!wb.engine->session());

    // Kernel ▸ Save edited source as .cu… writes what the editor holds, edits included.
    QVERIFY(wb.open(examplePath(QStringLiteral("relu"))));
    QTRY_VERIFY(w.selectedNode() != 0);
    QCOMPARE(w.action(QStringLiteral("actionSaveSource"))->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_S));
    QTest::keyClicks(pane->editor(), QStringLiteral("// mine "));
    const QString source = wb.dir.filePath(QStringLiteral("relu.cu"));
    QVERIFY(w.saveSource(w.selectedNode(), source));
    QFile g(source);
    QVERIFY(g.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(g.readAll()), pane->source());
    // "Discard edits" drops them and goes on.
    {
        Answerer a(answer(QStringLiteral("discardEdits")));
        w.action(QStringLiteral("actionClose"))->trigger();
        QCOMPARE(a.count, 1);
    }
    QVERIFY(!wb.engine->session());
}

void TestMainWindow::exportSaysWhatItHolds()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    // Kernels that were never verified, in a copy of an example.
    const QString path = wb.dir.filePath(QStringLiteral("unverified.kfsession"));
    QVERIFY(SessionStore::exportReadOnlyCopy(examplePath(QStringLiteral("softmax")).toStdString(), path.toStdString()));
    std::int64_t waiting = 0, wrong = 0, suspect = 0, unchecked = 0;
    {
        const SnapshotPtr s = *readSnapshot(path.toStdString(), true);
        auto store = SessionStore::open(path.toStdString());
        QVERIFY(store);
        const std::string text = s->node(16)->record.text;
        EvalResult r;
        r.verdict = Verdict::NeedsGpu;
        r.reason = "compiled for sm_90a; not evaluated (no GPU)";
        waiting = *recordHandEdited(*store, *s->problem, 16, "waiting", text, r);
        r.verdict = Verdict::Wrong;
        r.reason = "trial 2: 4096 elements differ";
        wrong = *recordHandEdited(*store, *s->problem, 16, "wrong", text, r);
        r = *s->node(16)->result;
        r.verdict = Verdict::Suspect;
        r.reason = "0.2 ms is below the roofline floor";
        suspect = *recordHandEdited(*store, *s->problem, 16, "suspect", text, r);
        EvalResult judged = *s->node(16)->result;
        judged.sanitizer = SanitizerCheck{"unchecked", {"memcheck"}, 2.0, "the tool timed out", 0};
        unchecked = *recordHandEdited(*store, *s->problem, 16, "unchecked", text, judged);
    }
    QVERIFY(wb.open(path));
    QTRY_VERIFY(w.selectedNode() != 0);
    QSignalSpy done(wb.engine.get(), &Engine::finished);
    auto exportNode = [&](std::int64_t node) {
        w.selectNode(node);
        const QString file = wb.dir.filePath(QStringLiteral("node%1.cu").arg(node));
        done.clear();
        w.exportSelected(file);
        if (!done.wait(10000))
            return QString();
        QFile f(file);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.read(2000)) : QString();
    };
    QVERIFY(exportNode(waiting).contains(QStringLiteral("!!! NOT VERIFIED: it compiled, but no GPU has run it yet")));
    QVERIFY(done.first().at(0).toString().contains(QStringLiteral("Its header warns")));
    QVERIFY(
        exportNode(wrong).contains(QStringLiteral("!!! FAILED VERIFICATION (wrong): trial 2: 4096 elements differ")));
    QVERIFY(exportNode(suspect).contains(
        QStringLiteral("!!! SUSPECT: it passed verification, but its time is below what the GPU can do")));
    QVERIFY(exportNode(unchecked).contains(
        QStringLiteral("!!! compute-sanitizer could not check it (unchecked): the tool timed out")));
    QVERIFY(!exportNode(16).contains(QStringLiteral("!!!")));
    // Where a node is shown, the sanitizer's "unchecked" is marked.
    w.selectNode(unchecked);
    QVERIFY(w.candidate()->headerText().contains(QStringLiteral("unchecked")));
    QVERIFY(w.graph()->toolTipOf(unchecked).contains(QStringLiteral("could not check it (unchecked)")));
    QVERIFY(w.outlineModel()->indexOf(unchecked).data(SanitizerUncheckedRole).toBool());

    // The editor's edits are not in an export, and the message says so.
    w.selectNode(16);
    w.candidate()->editor()->setCursorPosition(0, 0);
    QTest::keyClicks(w.candidate()->editor(), QStringLiteral("// only in the editor"));
    const QString exported = exportNode(16);
    QVERIFY(!exported.contains(QStringLiteral("only in the editor")));
    QVERIFY2(done.first().at(0).toString().contains(QStringLiteral("not the editor's unsaved edits")),
             qPrintable(done.first().at(0).toString()));
    w.candidate()->revert();
}

void TestMainWindow::helpMenu()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(wb.waitForGpuProbe());
    // Ctrl+Shift+S is Save As, the File menu shows it, and the keys work.
    QAction *saveAs = w.action(QStringLiteral("actionSaveAs"));
    QCOMPARE(saveAs->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    QStringList menus;
    bool inFileMenu = false;
    for (QAction *m : w.menuBar()->actions()) {
        menus << m->text();
        if (m->menu() && m->text() == QStringLiteral("&File"))
            inFileMenu = m->menu()->actions().contains(saveAs);
    }
    QVERIFY(inFileMenu);
    QVERIFY(menus.contains(QStringLiteral("&Help")));
    QVERIFY(wb.open(examplePath(QStringLiteral("relu"))));
    {
        Answerer a(answer({})); // the file dialog, cancelled
        QTest::keyClick(&w, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(a.count, 1);
    }
    // Keyboard shortcuts, read from the actions themselves.
    w.action(QStringLiteral("actionShortcuts"))->trigger();
    QVERIFY(w.shortcutsDialog() && w.shortcutsDialog()->isVisible());
    const QString keys = w.shortcutsDialog()->findChild<QTextBrowser *>()->toPlainText();
    QVERIFY2(keys.contains(QStringLiteral("Ctrl+Shift+S")) && keys.contains(QStringLiteral("Save session as")),
             qPrintable(keys));
    QVERIFY(keys.contains(QStringLiteral("Compile check")));
    // About: Qt's version here, the worker's CUDA and libtorch.
    w.action(QStringLiteral("actionAbout"))->trigger();
    QVERIFY(w.aboutDialog() && w.aboutDialog()->isVisible());
    const QString about = w.aboutDialog()->findChild<QTextBrowser *>()->toPlainText();
    QVERIFY(about.contains(QString::fromLatin1(qVersion())));
    if (!wb.engine->gpu().workerVersion.isEmpty())
        QVERIFY2(about.contains(QStringLiteral("libtorch (worker)")) && about.contains(QStringLiteral("CUDA (worker)")),
                 qPrintable(about));
    if (!wb.engine->gpu().torch.isEmpty())
        QVERIFY2(about.contains(wb.engine->gpu().torch), qPrintable(about));
    // The documentation opens in the desktop's viewer.
    Opened opened;
    QDesktopServices::setUrlHandler(QStringLiteral("file"), &opened, "open");
    w.action(QStringLiteral("actionDocs"))->trigger();
    w.action(QStringLiteral("actionGuide"))->trigger();
    QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
    QCOMPARE(opened.urls.size(), 2);
    QVERIFY(opened.urls[0].toLocalFile().endsWith(QStringLiteral("README.md")));
    QVERIFY(opened.urls[1].toLocalFile().endsWith(QStringLiteral("gui.md")));
}

void TestMainWindow::problemsFromAnywhere()
{
    // Started from another folder, without KERNELFORGE_PROBLEMS: the source tree's problems.
    QTemporaryDir elsewhere;
    const QByteArray env = qgetenv("KERNELFORGE_PROBLEMS");
    const QString cwd = QDir::currentPath();
    qunsetenv("KERNELFORGE_PROBLEMS");
    QDir::setCurrent(elsewhere.path());
    const std::vector<std::string> folders = shippedProblemFolders();
    const ProblemList list = collectProblems(folders, {});
    QDir::setCurrent(cwd);
    qputenv("KERNELFORGE_PROBLEMS", env);
    const std::string source = QFileInfo(QStringLiteral(KF_SOURCE_DIR "/problems")).canonicalFilePath().toStdString();
    QVERIFY(std::find(folders.begin(), folders.end(), source) != folders.end());
    QVERIFY(list.problems.size() >= 5);

    // Where none is found, the page says where it looked and points to Add folder….
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QTRY_VERIFY(w.problems()->currentProblem() != nullptr);
    QVERIFY(!w.problems()->showsEmptyState());
    auto none = std::make_shared<ProblemList>();
    none->searched = {"/nowhere/share/kernelforge/problems"};
    w.problems()->setProblems(none);
    QVERIFY(w.problems()->showsEmptyState());
    auto *empty = w.problems()->findChild<QLabel *>(QStringLiteral("problemsEmpty"));
    QVERIFY(empty && empty->isVisibleTo(w.problems()));
    QVERIFY(empty->text().contains(QStringLiteral("/nowhere/share/kernelforge/problems")));
    QVERIFY(empty->text().contains(QStringLiteral("Add folder…")));
}

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
