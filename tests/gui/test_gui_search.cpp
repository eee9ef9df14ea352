// The search path of the window without a GPU: the engine facade runs a real Search against the
// fake worker (tests/eval/fake_worker.cpp) with a scripted generator. Start from the window,
// watch the tree, chart and progress fill, cancel, re-benchmark a hand-edited candidate through
// the worker path, and reopen the session. test_gpu_workbench does the same on a real GPU.
#include "../search/scripted_generator.h"
#include "candidate_pane.h"
#include "cuda_editor.h"
#include "gui_support.h"
#include "model/points_model.h"
#include "problem_page.h"
#include "search_panel.h"

#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

class TestGuiSearch : public QObject {
    Q_OBJECT
private slots:
    void startCancelRebenchmarkReopen();
};

void TestGuiSearch::startCancelRebenchmarkReopen()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    // Each timing takes 300 ms in the fake worker, so the search is still running when cancelled.
    EngineConfig config;
    config.workerArgv = {KF_FAKE_WORKER, "--time-ms", "300"};
    wb.engine->setConfig(config);
    wb.engine->setGeneratorFactory([](const std::string &, std::string *) {
        std::vector<kf::test::ScriptedIdea> ideas;
        for (int i = 0; i < 12; ++i)
            ideas.push_back({"idea" + std::to_string(i), "Scripted idea " + std::to_string(i),
                             {kf::test::fakeKernel(1.0 / (i + 2)), kf::test::fakeKernel(1.0 / (i + 1.5))}});
        return std::make_shared<kf::test::ScriptedGenerator>(ideas);
    });
    w.show();
    QSignalSpy probed(wb.engine.get(), &Engine::gpuChecked);
    wb.engine->probeGpu();
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->gpu().present, 30000);

    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->currentProblem() != nullptr, 20000);
    SearchSettings s;
    s.rounds = 6;
    s.ideasPerRound = 2;
    s.implsPerIdea = 2;
    s.timingTrials = 10;
    w.searchPanel()->setSettings(s);
    const QString file = wb.dir.filePath(QStringLiteral("softmax.kfsession"));
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.newSession(QStringLiteral("softmax"), file);
    QVERIFY(opened.wait(20000));
    QVERIFY(!wb.engine->session()->readOnly);
    // An existing file is never overwritten.
    QSignalSpy failed(wb.engine.get(), &Engine::sessionFailed);
    w.newSession(QStringLiteral("softmax"), file);
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("exists")));

    QTRY_VERIFY(w.searchPanel()->startButton()->isEnabled());
    QSignalSpy finished(wb.engine.get(), &Engine::searchFinished);
    QTest::mouseClick(w.searchPanel()->startButton(), Qt::LeftButton);
    QVERIFY(wb.engine->searching());
    QVERIFY(!w.searchPanel()->startButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(w.pointsModel()->rowCount() >= 2, 60000);
    QVERIFY(w.outlineModel()->rowCount() >= 1);
    QVERIFY(w.searchPanel()->progressBar()->isVisible());
    QVERIFY(w.searchPanel()->progressBar()->value() > 0);
    QVERIFY(w.console()->toPlainText().contains(QStringLiteral("correct")));
    QTest::mouseClick(w.searchPanel()->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.wait(30000) || finished.count() > 0);
    QVERIFY2(!finished.first().at(1).toBool(), qPrintable(finished.first().at(0).toString()));
    QVERIFY(finished.first().at(0).toString().startsWith(QStringLiteral("cancelled")));
    QVERIFY(!wb.engine->searching());
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->session()->bestNode != 0, 10000);
    const std::size_t afterSearch = wb.engine->session()->nodes.size();

    // Hand-edit the best kernel and re-benchmark it: a new child marked hand-edited.
    const std::int64_t best = wb.engine->session()->bestNode;
    w.selectNode(best);
    CudaEditor *editor = w.candidate()->editor();
    editor->setCursorPosition(0, 0);
    QTest::keyClicks(editor, QStringLiteral("// edited by hand in the test"));
    QTest::keyClick(editor, Qt::Key_Return);
    QSignalSpy rebenched(wb.engine.get(), &Engine::rebenchmarked);
    auto *button = w.candidate()->findChild<QToolButton *>(QStringLiteral("rebenchmark"));
    QVERIFY(button);
    QTRY_VERIFY(button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(rebenched.wait(60000));
    const std::int64_t edited = rebenched.first().at(0).toLongLong();
    QCOMPARE(rebenched.first().at(1).toString(), QStringLiteral("correct"));
    QTRY_COMPARE_WITH_TIMEOUT(w.selectedNode(), edited, 10000);
    QVERIFY(w.outlineModel()->indexOf(edited).data().toString().contains(QStringLiteral("hand-edited")));

    // Reopen: everything is in the file.
    wb.engine->closeSession();
    QVERIFY(wb.open(file));
    const SnapshotPtr again = wb.engine->session();
    QCOMPARE(again->nodes.size(), afterSearch + 1);
    const NodeView *n = again->node(edited);
    QVERIFY(n && n->record.edited);
    QCOMPARE(*n->record.parent, best);
    QVERIFY(n->record.text.find("// edited by hand in the test") != std::string::npos);
    QCOMPARE(again->node(best)->record.round, n->record.round);
}

QTEST_MAIN(TestGuiSearch)
#include "test_gui_search.moc"
