// On a GPU: every idea of the catalogue that applies to a problem of tests/builtin/data/problems
// (the patterns of the new templates, at KernelBench-like sizes) and tests/builtin/data/large
// (tensors of more than 2^31 bytes: every offset must be 64-bit) renders its best point by the
// cost model, and the worker finds it correct under the strict policy. The ideas only the loose
// policy admits (TF32 and fp16 products) get the same check under the loose policy on the matrix
// products. Prints one line per candidate: time, eager time, speedup. Skips without a GPU.
#include "../worker/support.h"
#include "gen/builtin/catalogue.h"
#include "gen/builtin/pattern.h"
#include "support.h"

#include <QDir>
#include <QTest>

using namespace kf;
using namespace kf::builtin;

class TestBuiltinGpu : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        test::useSourceTemplates();
        std::string reason;
        if (!test::workerHasGpu(&reason))
            QSKIP(qPrintable(QString::fromStdString("needs an NVIDIA GPU: " + reason)));
    }

    void everyIdeaIsCorrect_data()
    {
        QTest::addColumn<QString>("path");
        for (const char *folder : {"problems", "large"}) {
            QDir dir(QStringLiteral(KF_SOURCE_DIR "/tests/builtin/data/") + folder);
            for (const QString &f : dir.entryList({"*.toml"}, QDir::Files, QDir::Name))
                QTest::newRow(qPrintable(QString(folder) + "/" + f.chopped(5))) << dir.filePath(f);
        }
    }

    void everyIdeaIsCorrect() { everyIdeaOf(Policy::Strict); }

    void looseIdeasAreCorrect_data()
    {
        QTest::addColumn<QString>("path");
        for (const char *p : {"problems/seed/matmul.toml", "problems/level1/linear_bias_relu.toml",
                              "problems/level1/bmm.toml", "tests/builtin/data/problems/matmul_mish_mish.toml",
                              "tests/builtin/data/problems/matmul_large_k.toml"})
            QTest::newRow(p) << QStringLiteral(KF_SOURCE_DIR "/") + p;
    }

    void looseIdeasAreCorrect() { everyIdeaOf(Policy::Loose); }

private:
    // Under `policy`, every idea that applies (under the loose policy: only those the strict one
    // refuses), at its first valid point, is correct on the problem at `path`.
    void everyIdeaOf(Policy policy)
    {
        QFETCH(QString, path);
        auto problem = loadProblemFile(path.toStdString());
        QVERIFY2(problem.ok(), problem.ok() ? "" : problem.error().text().c_str());
        // A worker per problem: the GPU memory of one problem's inputs is freed before the next.
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        auto loaded = w.load(*problem);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().text().c_str());
        auto eager = w.baseline(10);
        QVERIFY2(eager.ok(), eager.ok() ? "" : eager.error().text().c_str());
        auto pattern = recognise(loaded->graph, *problem);
        QVERIFY2(pattern.ok(), pattern.ok() ? "" : pattern.error().text().c_str());
        const Target t = makeTarget(*pattern, *problem, w.info()->gpu.sms, w.info()->gpu.major, policy);
        const Target strict = makeTarget(*pattern, *problem, w.info()->gpu.sms, w.info()->gpu.major, Policy::Strict);

        QStringList wrong;
        int tried = 0;
        for (const IdeaDef &d : catalogue()) {
            if (!d.whyNot(t).empty() || (policy == Policy::Loose && d.whyNot(strict).empty()))
                continue;
            const Point point = validPoints(d, t).front();
            auto source = renderIdea(d, t, point);
            QVERIFY2(source.ok(), source.ok() ? "" : source.error().text().c_str());
            auto r = w.evaluate(d.id, *source, "", policy, 3, 20);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
            ++tried;
            const double ms = r->timing ? r->timing->medianMs : 0;
            qInfo("%-24s %-26s %-12s err %.2e  %9.4f ms  eager %9.4f ms  %5.2fx  (%s)", problem->name.c_str(),
                  d.id.c_str(), toString(r->verdict).c_str(), r->maxScaledError, ms, eager->timing.medianMs,
                  ms > 0 ? eager->timing.medianMs / ms : 0.0, pointText(point).c_str());
            if (r->verdict != Verdict::Correct)
                wrong << QString::fromStdString(d.id + ": " + toString(r->verdict) + " (" + r->reason + ")");
        }
        QVERIFY2(tried > 0, "some idea applies");
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("; ")));
    }
};

QTEST_GUILESS_MAIN(TestBuiltinGpu)
#include "test_gpu.moc"
