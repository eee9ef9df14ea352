// Profile through the worker path without a GPU or Nsight Compute: a stand-in `ncu` on PATH
// (data/fake_ncu.sh) writes a report and runs the fake worker, as ncu runs its target. Checks that
// the button is offered only with ncu, and that the report's metrics reach the Profile tab.
#include "candidate_pane.h"
#include "gui_support.h"

#include <QDir>
#include <QFile>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

class TestGuiProfile : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void profileShowsTheReport();

private:
    QTemporaryDir m_bin;
};

void TestGuiProfile::initTestCase()
{
    // Before any window looks for ncu (it looks once).
    QVERIFY(QFile::copy(QStringLiteral(KF_GOLDEN_DIR "/fake_ncu.sh"), m_bin.filePath(QStringLiteral("ncu"))));
    QFile::setPermissions(m_bin.filePath(QStringLiteral("ncu")), QFileDevice::ReadOwner | QFileDevice::ExeOwner);
    qputenv("PATH", m_bin.path().toLocal8Bit() + ':' + qgetenv("PATH"));
    QCOMPARE(findCudaTool(QStringLiteral("ncu")), m_bin.filePath(QStringLiteral("ncu")));
}

void TestGuiProfile::profileShowsTheReport()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    wb.useWorker({KF_FAKE_WORKER});
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->gpu().present, 30000);
    // A shipped example is read-only, which does not stop profiling: it writes nothing.
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    QTRY_COMPARE(w.selectedNode(), wb.engine->session()->bestNode);
    auto *button = w.candidate()->findChild<QToolButton *>(QStringLiteral("profile"));
    QVERIFY(button && button->text() == QStringLiteral("Profile"));
    QTRY_VERIFY(button->isEnabled());

    QSignalSpy profiled(wb.engine.get(), &Engine::profiled);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(w.candidate()->tabs()->currentIndex(), int(CandidatePane::ProfileTab));
    QVERIFY(profiled.wait(60000));
    const auto report = profiled.first().at(0).value<ProfileReport>();
    QVERIFY2(report.ok, qPrintable(report.error));
    auto *table = w.candidate()->tabs()->widget(CandidatePane::ProfileTab)->findChild<QTableView *>();
    QVERIFY(table && table->isVisibleTo(w.candidate()));
    QStringList rows;
    for (int r = 0; r < table->model()->rowCount(); ++r)
        rows << table->model()->index(r, 0).data().toString() + QStringLiteral(" = ") +
                table->model()->index(r, 1).data().toString();
    const QString text = rows.join(QLatin1Char('\n'));
    QVERIFY2(text.contains(QStringLiteral("Duration = 612.5 usecond")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("DRAM throughput = 88.9 %")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Warp stall #1 = long scoreboard")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Roofline position = 84.7 %")), qPrintable(text));
}

QTEST_MAIN(TestGuiProfile)
#include "test_gui_profile.moc"
