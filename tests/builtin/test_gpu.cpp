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
#include <QFileInfo>
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

    // Parameters whose other values the cases above do not render: points with them set, on
    // problems where they matter (a second or a single K step of the gather in flight, plain,
    // transposed and before a pooling pass, max with padding or average over two channel tiles).
    void chosenPointsAreCorrect_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("idea");
        QTest::addColumn<bool>("loose");
        QTest::addColumn<QString>("assign");
        const QString own = QStringLiteral("tests/builtin/data/problems/");
        const std::vector<std::tuple<QString, const char *, bool, const char *>> rows{
            {"problems/seed/conv2d_relu_maxpool.toml", "conv_wgmma_regs_pool", true, "DEPTH=1 SPLIT=1"},
            {"problems/seed/conv2d_relu_maxpool.toml", "conv_wgmma_regs_pool", true, "DEPTH=2 SPLIT=1"},
            {own + "conv_maxpool_padded.toml", "conv_wgmma_regs_pool", false, "DEPTH=2"},
            {own + "conv_relu_avgpool.toml", "conv_wgmma_regs_pool", false, "DEPTH=2 BN=64"},
            {"problems/seed/conv2d.toml", "conv_wgmma_regs", false, "DEPTH=2"},
            {"problems/seed/conv2d.toml", "conv_wgmma_regs", true, "DEPTH=2 SPLIT=1"},
            {own + "conv_transpose2d_tanh.toml", "conv_wgmma_regs", false, "DEPTH=2"},
            // The slab convolutions: two warpgroups, a warpgroup with two slabs, four warpgroups,
            // the pooling pass, and 1-D with the padding split unevenly.
            {"problems/seed/conv2d.toml", "conv_wgmma_slab_bf16x3", false, "WGS=2 SLABS=1"},
            {"problems/seed/conv2d.toml", "conv_wgmma_slab_bf16x3", false, "WGS=1 SLABS=2"},
            {"problems/seed/conv2d.toml", "conv_wgmma_slab_fp16", true, "WGS=4 SLABS=1"},
            {"problems/seed/conv2d_relu_maxpool.toml", "conv_wgmma_slab_fp16", true, "WGS=2 SLABS=2"},
            {"problems/seed/conv2d_relu_maxpool.toml", "conv_wgmma_slab_bf16x3", false, "WGS=2 SLABS=1"},
            {own + "conv1d_same.toml", "conv_wgmma_slab_fp16", true, "WGS=2 SLABS=1"},
            {own + "conv_maxpool_padded.toml", "conv_wgmma_slab_fp16", true, "WGS=2 SLABS=2"},
            // A in registers: ragged M, N and K (24 x 28 x 20 strict, 40 x 24 x 36 with a transposed
            // B loose: the rows past M and K zero-filled), batched (with a tail: 3xTF32), and the
            // other tile shapes.
            {own + "matmul_masked_columns.toml@small", "gemm_wgmma_bf16x3_regs", false, "WGS=2 BN=128"},
            {own + "matmul_mish_mish.toml@small", "gemm_wgmma_fp16_regs", true, "WGS=1 BN=256"},
            {"problems/level1/bmm.toml", "gemm_wgmma_bf16x3_regs", false, "WGS=2 BN=64 PROMOTE=1"},
            {own + "matmul_masked_columns.toml@small", "gemm_wgmma_tf32x3_regs", false, "WGS=1 BN=128"},
            {own + "bmm_tanh_l2norm.toml", "gemm_wgmma_tf32x3_regs", false, "WGS=2 BN=64"},
            {"problems/seed/matmul.toml", "gemm_wgmma_bf16x3_regs", false, "WGS=1 BN=128 PROMOTE=8"},
            {"problems/seed/matmul.toml", "gemm_wgmma_fp16_regs", true, "WGS=2 BN=128 STAGES=4"},
        };
        for (const auto &[path, idea, loose, assign] : rows)
            QTest::newRow(
                qPrintable(QString("%1 %2 %3%4")
                               .arg(QFileInfo(path).fileName().remove(".toml"), idea, assign, loose ? " loose" : "")))
                << QStringLiteral(KF_SOURCE_DIR "/") + path << QString(idea) << loose << QString(assign);
    }

    void chosenPointsAreCorrect()
    {
        QFETCH(QString, path);
        QFETCH(QString, idea);
        QFETCH(bool, loose);
        QFETCH(QString, assign);
        WorkerClient w(test::workerConfig());
        Target t;
        prepare(path, loose ? Policy::Loose : Policy::Strict, w, t);
        if (QTest::currentTestFailed())
            return;
        const IdeaDef *def = findIdea(idea.toStdString());
        QVERIFY(def);
        QVERIFY2(def->whyNot(t).empty(), def->whyNot(t).c_str());
        std::optional<Point> chosen;
        for (const Point &p : validPoints(*def, t)) {
            bool all = true;
            for (const QString &a : assign.split(' ')) {
                const QStringList kv = a.split('=');
                all = all && p.count(kv[0].toStdString()) && p.at(kv[0].toStdString()) == kv[1].toInt();
            }
            if (all) {
                chosen = p;
                break;
            }
        }
        QVERIFY2(chosen, qPrintable("no valid point has " + assign));
        const std::string wrong = evaluate(w, *def, t, *chosen);
        QVERIFY2(wrong.empty(), wrong.c_str());
    }

private:
    // Starts `w` on the problem at `path` (its eager time measured) and makes its target, which
    // points at m_problem.
    // `path` may end in @VARIANT: the problem at that size variant ("small").
    void prepare(const QString &path, Policy policy, WorkerClient &w, Target &t)
    {
        const QStringList file = path.split('@');
        auto problem = loadProblemFile(file[0].toStdString(), file.size() > 1 ? file[1].toStdString() : "");
        QVERIFY2(problem.ok(), problem.ok() ? "" : problem.error().text().c_str());
        m_problem = *problem;
        QVERIFY(w.start().ok());
        auto loaded = w.load(*problem);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().text().c_str());
        auto eager = w.baseline(10);
        QVERIFY2(eager.ok(), eager.ok() ? "" : eager.error().text().c_str());
        m_eagerMs = eager->timing.medianMs;
        auto pattern = recognise(loaded->graph, *problem);
        QVERIFY2(pattern.ok(), pattern.ok() ? "" : pattern.error().text().c_str());
        t = makeTarget(*pattern, *m_problem, w.info()->gpu.sms, w.info()->gpu.major, policy);
    }

    // Renders `point` of `d`, evaluates it under the target's policy and prints one line; what
    // is wrong with it ("" when it is correct).
    std::string evaluate(WorkerClient &w, const IdeaDef &d, const Target &t, const Point &point)
    {
        auto source = renderIdea(d, t, point);
        if (!source.ok())
            return d.id + ": " + source.error().text();
        auto r = w.evaluate(d.id, *source, "", t.policy, 3, 20);
        if (!r.ok())
            return d.id + ": " + r.error().text();
        const double ms = r->timing ? r->timing->medianMs : 0;
        qInfo("%-24s %-26s %-12s err %.2e  %9.4f ms  eager %9.4f ms  %5.2fx  (%s)", t.problem->name.c_str(),
              d.id.c_str(), toString(r->verdict).c_str(), r->maxScaledError, ms, m_eagerMs,
              ms > 0 ? m_eagerMs / ms : 0.0, pointText(point).c_str());
        if (r->verdict != Verdict::Correct)
            return d.id + ": " + toString(r->verdict) + " (" + r->reason + ")";
        return {};
    }

    // Under `policy`, every idea that applies (under the loose policy: only those the strict one
    // refuses), at its first valid point, is correct on the problem at `path`.
    void everyIdeaOf(Policy policy)
    {
        QFETCH(QString, path);
        // A worker per problem: the GPU memory of one problem's inputs is freed before the next.
        WorkerClient w(test::workerConfig());
        Target t;
        prepare(path, policy, w, t);
        if (QTest::currentTestFailed())
            return;
        Target strict = t;
        strict.policy = Policy::Strict;

        QStringList wrong;
        int tried = 0;
        for (const IdeaDef &d : catalogue()) {
            if (!d.whyNot(t).empty() || (policy == Policy::Loose && d.whyNot(strict).empty()))
                continue;
            ++tried;
            if (const std::string why = evaluate(w, d, t, validPoints(d, t).front()); !why.empty())
                wrong << QString::fromStdString(why);
        }
        QVERIFY2(tried > 0, "some idea applies");
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("; ")));
    }

    std::optional<Problem> m_problem;
    double m_eagerMs = 0;
};

QTEST_GUILESS_MAIN(TestBuiltinGpu)
#include "test_gpu.moc"
