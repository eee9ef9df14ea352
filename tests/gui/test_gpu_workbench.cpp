// On a GPU: start a short search from the window, watch the tree and chart fill, cancel it,
// re-benchmark a hand-edited candidate, reopen the session and find everything. Skips without a GPU.
#include "candidate_pane.h"
#include "cuda_editor.h"
#include "gpu_gate.h"
#include "gui_support.h"
#include "model/format.h"
#include "model/points_model.h"
#include "problem_page.h"
#include "search_panel.h"

#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

class TestGpuWorkbench : public QObject {
    Q_OBJECT
private slots:
    void searchCancelRebenchmarkReopen();
};

void TestGpuWorkbench::searchCancelRebenchmarkReopen()
{
    KF_REQUIRE_GPU();
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(wb.waitForGpuProbe(120000));
    if (!wb.engine->gpu().present)
        QSKIP(qPrintable(QStringLiteral("needs an NVIDIA GPU: ") + wb.engine->gpu().reason));

    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->selectProblem(QStringLiteral("softmax")), 20000);
    SearchSettings s;
    s.rounds = 3;
    s.ideasPerRound = 2;
    s.implsPerIdea = 2;
    s.timingTrials = 20;
    s.timeBudgetSeconds = 300;
    w.searchPanel()->setSettings(s);
    const QString file = wb.dir.filePath(QStringLiteral("softmax.kfsession"));
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.newSession(QStringLiteral("softmax"), file);
    QVERIFY(opened.wait(20000));
    QVERIFY(!wb.engine->session()->readOnly);

    // Start from the window; the tree and the chart fill while it runs.
    QTRY_VERIFY(w.searchPanel()->startButton()->isEnabled());
    QSignalSpy finished(wb.engine.get(), &Engine::searchFinished);
    QTest::mouseClick(w.searchPanel()->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(w.pointsModel()->rowCount() > 0, 600000);
    QVERIFY(w.outlineModel()->rowCount() > 0);
    QVERIFY(w.searchPanel()->progressBar()->value() > 0);
    QTest::mouseClick(w.searchPanel()->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000) || finished.count() > 0);
    QVERIFY2(!finished.first().at(1).toBool(), qPrintable(finished.first().at(0).toString()));
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->session()->bestNode != 0, 10000);

    // Hand-edit the best kernel and re-benchmark it: a new child marked hand-edited.
    const std::int64_t best = wb.engine->session()->bestNode;
    w.selectNode(best);
    CudaEditor *editor = w.candidate()->editor();
    editor->setCursorPosition(0, 0);
    QTest::keyClicks(editor, QStringLiteral("// edited by hand in the test"));
    QTest::keyClick(editor, Qt::Key_Return);
    QSignalSpy rebenched(wb.engine.get(), &Engine::rebenchmarked);
    auto *button = w.candidate()->findChild<QToolButton *>(QStringLiteral("rebenchmark"));
    QVERIFY(button && button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(rebenched.wait(600000));
    const std::int64_t edited = rebenched.first().at(0).toLongLong();
    QCOMPARE(rebenched.first().at(1).toString(), QStringLiteral("correct"));
    QTRY_COMPARE_WITH_TIMEOUT(w.selectedNode(), edited, 10000);

    // Reopen: everything is in the file.
    const std::size_t nodes = wb.engine->session()->nodes.size();
    wb.engine->closeSession();
    QVERIFY(wb.open(file));
    const SnapshotPtr again = wb.engine->session();
    QCOMPARE(again->nodes.size(), nodes);
    const NodeView *n = again->node(edited);
    QVERIFY(n && n->record.edited);
    QCOMPARE(*n->record.parent, best);
    QVERIFY(n->record.text.find("// edited by hand in the test") != std::string::npos);
}

QTEST_MAIN(TestGpuWorkbench)
#include "test_gpu_workbench.moc"
