// The suite report's arithmetic, from a state recorded by a run (tests/data/suite-report; its
// times were then set by hand so that every case occurs: faster, slower, equal, 4x, no correct
// kernel, failed, unfinished, with and without a torch.compile time).
#include "suite/suite_report.h"

#include <QtTest/QTest>

#include <cmath>

using namespace kf;

namespace {

SuiteState recorded()
{
    auto s = readSuiteState(KF_SOURCE_DIR "/tests/data/suite-report/recorded-state.json");
    if (!s)
        qFatal("%s", s.error().text().c_str());
    return *s;
}

bool near(double a, double b) { return std::fabs(a - b) < 1e-9; }

} // namespace

class TestSuiteReport : public QObject {
    Q_OBJECT
private slots:
    void fastPAgainstEager()
    {
        const SuiteSummary s = summarize(recorded());
        QCOMPARE(s.problems, 7);
        QCOMPARE(s.done, 5);
        QCOMPARE(s.failed, 1);
        QCOMPARE(s.unfinished, 1);
        // Speedups 1.6, 0.5, 1.0 and 4.0 are correct; a failed, an unfinished and a problem
        // without a correct kernel count in the denominator.
        QCOMPARE(s.eager.over, 7);
        QCOMPARE(s.eager.correct, 4);
        QCOMPARE(s.eager.faster, 2); // 1.0 is not faster
        QCOMPARE(s.eager.faster2, 1);
        QVERIFY(near(s.eager.fast0, 4.0 / 7));
        QVERIFY(near(s.eager.fast1, 2.0 / 7));
        QVERIFY(near(s.eager.fast2, 1.0 / 7));
        QVERIFY(near(s.eager.geomean, std::pow(1.6 * 0.5 * 1.0 * 4.0, 0.25)));
    }

    void fastPAgainstTorchCompile()
    {
        const SuiteSummary s = summarize(recorded());
        // Four problems have a torch.compile time; two of those have a correct kernel, at
        // 1.0 / 1.25 = 0.8x and 0.5 / 2.0 = 0.25x of torch.compile.
        QCOMPARE(s.compile.over, 4);
        QCOMPARE(s.compile.correct, 2);
        QCOMPARE(s.compile.faster, 0);
        QCOMPARE(s.compile.faster2, 0);
        QVERIFY(near(s.compile.fast0, 0.5));
        QVERIFY(near(s.compile.fast1, 0));
        QVERIFY(near(s.compile.geomean, std::sqrt(0.8 * 0.25)));
    }

    void statuses()
    {
        const SuiteState s = recorded();
        QCOMPARE(reportStatus(s.problems[0]), std::string("correct"));
        QCOMPARE(reportStatus(s.problems[4]), std::string("no correct kernel"));
        QCOMPARE(reportStatus(s.problems[5]), std::string("failed"));
        QCOMPARE(reportStatus(s.problems[6]), std::string("not finished"));
        SuiteEntry compiled = s.problems[4];
        compiled.reason = "compile only: 12 candidates, none timed; stopped: rounds";
        QCOMPARE(reportStatus(compiled), std::string("compiled only"));
    }

    void markdown()
    {
        const QString md = QString::fromStdString(suiteMarkdown(recorded()));
        QVERIFY2(md.contains("| eager PyTorch | 7 | 57.1 % (4) | 28.6 % (2) | 14.3 % (1) | 1.34x over 4 |"),
                 qPrintable(md));
        QVERIFY2(md.contains("| torch.compile | 4 | 50.0 % (2) | 0.0 % (0) | 0.0 % (0) | 0.45x over 2 |"),
                 qPrintable(md));
        QVERIFY(md.contains("| 1_relu | correct | 2.0000 | 1.2500 | 1.60x | 1.0000 | 0.80x | strict | fp32 | pass |"));
        QVERIFY(
            md.contains("| 2_softmax | correct | 1.0000 | 2.0000 | 0.50x | 0.5000 | 0.25x | strict | tf32x3 | fail |"));
        // Why a problem failed, and why torch.compile has no time.
        QVERIFY(md.contains("| 6_cumsum | failed |"));
        QVERIFY(md.contains("cannot implement aten::cumsum"));
        QVERIFY(md.contains("torch.compile: not measured (python3 has no PyTorch with a GPU)"));
        QVERIFY(md.contains("| 7_gelu | not finished |"));
    }

    void json()
    {
        const nlohmann::json j = suiteReportJson(recorded());
        QCOMPARE(j["problems_total"].get<int>(), 7);
        QVERIFY(near(j["eager"]["fast_1"].get<double>(), 2.0 / 7));
        QCOMPARE(j["eager"]["geomean_over"].get<int>(), 4);
        QCOMPARE(j["torch_compile"]["problems"].get<int>(), 4);
        QVERIFY(near(j["problems"][1]["speedup"].get<double>(), 0.5));
        QVERIFY(near(j["problems"][1]["speedup_over_compile"].get<double>(), 0.25));
        QCOMPARE(j["problems"][5]["report_status"].get<std::string>(), std::string("failed"));
        QVERIFY(near(j["settings"]["time_budget_s"].get<double>(), 120.0));
    }

    void roundTrip()
    {
        const SuiteState s = recorded();
        auto back = suiteStateFromJson(nlohmann::json(s), "x");
        QVERIFY(back);
        QVERIFY(nlohmann::json(*back) == nlohmann::json(s));
    }

    void badStates_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an object") << "[1]"
                                       << "not a suite state";
        QTest::newRow("other version") << R"({"version": 7, "problems": []})"
                                       << "version 7";
        QTest::newRow("entry without a file") << R"({"version": 1, "problems": [{"name": "x"}]})"
                                              << "problems[0]";
    }

    void badStates()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        auto s = suiteStateFromJson(nlohmann::json::parse(text.toStdString()), "out/suite.json");
        QVERIFY(!s);
        QVERIFY2(QString::fromStdString(s.error().text()).startsWith("out/suite.json: "), s.error().text().c_str());
        QVERIFY2(QString::fromStdString(s.error().message).contains(message), s.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSuiteReport)
#include "test_suite_report.moc"
