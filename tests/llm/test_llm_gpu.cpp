// A two-round search with an LLM generator whose answers are real kernels, on a GPU: the replay
// server plays the model, and compile, verification and timing of its output run end to end.
// Without a GPU it skips with the reason the worker gives.
#include "gpu_gate.h"
#include "search/trajectory.h"
#include "search_support.h"

#include <QtTest>

using namespace kf;
using namespace kf::test;
using llm::Protocol;
Q_DECLARE_METATYPE(kf::llm::Protocol)

class TestLlmGpu : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (!haveWorker())
            QSKIP("KERNELFORGE_WORKER is not set (run through ctest)");
        qputenv(kKeyEnv, kTestKey);
        KF_REQUIRE_GPU();
    }

    void twoRoundsOfRealKernels_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::newRow("openai") << Protocol::OpenAI;
        QTest::newRow("anthropic") << Protocol::Anthropic;
    }

    void twoRoundsOfRealKernels()
    {
        QFETCH(Protocol, protocol);
        ScriptedServer replay(protocol);
        LlmSearch f;
        QVERIFY(f.store);
        auto search = f.search(llmGenerator(protocol, replay.url()), llmSettings(2, false));
        std::atomic<bool> cancel{false};
        Status ran = search->run(cancel);
        QVERIFY2(ran, ran ? "" : qPrintable(QString::fromStdString(ran.error().text())));
        QCOMPARE(QString::fromStdString(toString(search->stopReason())), QString("rounds"));

        // The four kernels that compile are correct at strict tolerance and timed; the one that
        // did not compile was repaired into a correct one.
        int correct = 0;
        for (const auto &c : f.nodes(NodeKind::Candidate)) {
            auto reading = readCandidate(c);
            QVERIFY2(reading, c.title.c_str());
            if (c.title.find("variant 2") != std::string::npos && c.title.find("Block per row") == 0) {
                QCOMPARE(QString::fromStdString(c.status), QString("compile error"));
                continue;
            }
            QVERIFY2(c.status == "correct",
                     qPrintable(QString::fromStdString(c.title + ": " + c.status + " " + c.reason)));
            QVERIFY(reading->result.timing && reading->result.timing->medianMs > 0);
            ++correct;
        }
        QCOMPARE(correct, 4);
        QVERIFY(search->state().bestMs() > 0);
        auto t = readTrajectory(*f.store);
        QVERIFY(t);
        QCOMPARE(int(t->rows.size()), 2);
        QVERIFY(t->eagerMs > 0);
        // Round 2 was shown the measured kernels of round 1.
        auto rounds = f.nodes(NodeKind::Round);
        auto asked = f.store->exchanges(rounds[1].id);
        QVERIFY(asked && asked->size() == 1);
        QVERIFY(asked->front().prompt.find("### Kernel #") != std::string::npos);
        QVERIFY(asked->front().prompt.find("Median ") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestLlmGpu)
#include "test_llm_gpu.moc"
