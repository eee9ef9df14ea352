// Candidates of the row patterns run on the host, thread by thread, against PyTorch on the CPU
// (tools/emulate-on-host.py): logsumexp, softmax down the columns and with an epilogue, 1-D and
// 3-D pooling, chains of stages, products of a transposed A, composite ops, and the mma.sync
// product and implicit-GEMM convolutions, transposed ones too. A wrong index, a
// reduction that combines badly or an epilogue read from the wrong place shows here on a machine
// without a GPU; the GPU test stays the judge of what only a GPU does (timing, inline PTX). Skips
// without a Python with PyTorch, NumPy and tomllib, or without g++.
#include "gen/builtin/catalogue.h"
#include "gen/builtin/pattern.h"
#include "support.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace kf;
using namespace kf::builtin;

namespace {

struct Run {
    int code = -1;
    QString out;
};

Run run(const QString &program, const QStringList &args, int timeoutMs)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAll()};
}

// KF_PYTHON, python3 on PATH, or Debian's own: the first with what the emulator imports.
QString emulatorPython()
{
    QStringList candidates;
    if (!qEnvironmentVariableIsEmpty("KF_PYTHON"))
        candidates << qEnvironmentVariable("KF_PYTHON");
    candidates << "python3"
               << "/usr/bin/python3";
    for (const QString &p : candidates)
        if (run(p, {"-c", "import torch, numpy, tomllib"}, 120000).code == 0)
            return p;
    return {};
}

} // namespace

class TestBuiltinEmulated : public QObject {
    Q_OBJECT

    QString m_python;

private slots:
    void initTestCase()
    {
        test::useSourceTemplates();
        m_python = emulatorPython();
    }

    void candidateMatchesPyTorch_data()
    {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("idea");
        QTest::addColumn<int>("sms");
        const std::vector<std::pair<const char *, const char *>> cases{
            {"logsumexp_rows", "reduce_grid"},
            {"logsumexp_channels", "reduce_columns"},
            // A short reduced dim kept in registers: the second walk reads no input again.
            {"rms_norm_channels", "normalize_columns_held"},
            {"log_softmax_written_out", "normalize_split"},
            {"softmax_channels", "softmax_columns"},
            {"softmax_epilogue", "softmax_three_pass"},
            {"softmax_epilogue", "softmax_online"},
            {"softmax_epilogue", "softmax_split_row"},
            {"maxpool3d_dilated", "pool2d_window"},
            {"avgpool1d_unpadded_count", "pool2d_window"},
            // Spans of a window row in registers: 16-byte loads from a 16-byte boundary, and from 3
            // values before one (an op before and after); rows of outputs that end in a part slot;
            // scalar loads (rows of 29 and 10), strided, uncounted padding, and dilated 3-D windows.
            {"avgpool1d_stride1", "pool_row_span"},
            {"maxpool_stride1_padded", "pool_row_span"},
            {"avgpool1d_unpadded_count", "pool_row_span"},
            {"maxpool_dilated", "pool_row_span"},
            {"maxpool3d_dilated", "pool_row_span"},
            // Windows of many taps, a warp per window: averaged with an op before and after, and
            // overlapping, padded maxima.
            {"avgpool_wide_windows", "pool_window_warp"},
            {"maxpool_wide_padded", "pool_window_warp"},
            // Chains: a convolution, a min over depth, a softmax over channels; a convolution, a
            // 3-D pooling, a softmax; a product, a group norm, a min.
            {"conv3d_min_softmax", "conv_direct"},
            {"conv3d_maxpool_softmax", "conv_direct"},
            {"linear_groupnorm_min", "gemv_dot"},
            // A first operand stored transposed: read down its columns into the k-major tile.
            {"matmul_transposed_a", "gemm_tiled_fp32"},
            {"bmm_transposed_both", "gemm_tiled_fp32"},
            {"einsum_tensor_matrix", "gemm_tiled_fp32"},
            {"diag_scaled_rows", "ew_vec4"},
            {"huber_loss_functional", "reduce_grid"},
            // Triangle masks from each element's row and column: in a product's epilogue, and in
            // four lanes at a time over a batch of matrices (rows of 12, masks from diagonal 2).
            {"matmul_lower_triangular", "gemm_tiled_fp32"},
            {"matmul_lower_triangular", "gemm_mma_tf32x3"},
            {"triu_batched_scale", "ew_vec4"},
            {"triu_batched_scale", "ew_grid_stride"},
            // Bool masks read as bytes, in a scan and in a product's epilogue (more below).
            {"masked_cumsum", "scan_rows"},
            {"matmul_masked_columns", "gemm_tiled_fp32"},
            // Comparisons, torch.where and masked_fill (a bool mask of one row, four bytes a load).
            {"where_masked_fill", "ew_vec4"},
            {"where_masked_fill", "ew_grid_stride"},
            // The mma.sync templates (ldmatrix, mma.sync and cp.async emulated): a product with an
            // epilogue; the implicit GEMM with max pooling in its tiles, of a 3-D convolution, and
            // of transposed ones phase by phase, of 2x2, 1-to-8 and 1-or-2 taps.
            {"matmul_mish_mish", "gemm_mma_tf32x3"},
            {"conv_maxpool_padded", "conv_implicit_gemm_pool"},
            {"conv3d_relu", "conv_implicit_gemm_tf32x3"},
            {"conv_transpose2d_tanh", "conv_implicit_gemm_tf32x3"},
            {"conv_transpose3d_scale_relu", "conv_implicit_gemm_tf32x3"},
            {"conv_transpose1d_dilated", "conv_implicit_gemm_tf32x3"},
            // Transposed convolutions by phase: 2-D with an epilogue, 3-D, and 1-D dilated (taps a
            // stride over the dilation's common factor apart).
            {"conv_transpose2d_tanh", "conv_transpose_phased"},
            {"conv_transpose3d_scale_relu", "conv_transpose_phased"},
            {"conv_transpose1d_dilated", "conv_transpose_phased"},
            // The wgmma products (mbarriers, bulk copies and wgmma emulated): operands re-laid by
            // a first pass, and A read as fp32 and split in registers, K permuted in B's tiles to
            // match; a long K through the stage ring in two slices (split K), ragged M, N and K,
            // a batch with a tail.
            {"matmul_large_k", "gemm_wgmma_tf32x3"},
            {"matmul_large_k", "gemm_wgmma_tf32x3_regs"},
            {"matmul_large_k", "gemm_wgmma_bf16x3_regs"},
            {"matmul_masked_columns", "gemm_wgmma_bf16x3_regs"},
            {"matmul_masked_columns", "gemm_wgmma_tf32x3_regs"},
            {"bmm_tanh_l2norm", "gemm_wgmma_tf32x3_regs"},
            // The slab convolution (a warpgroup's input slab in shared memory, fragments read
            // through the tap table, 3xbf16 in registers): 2-D with a padded max-pool pass, 1-D.
            {"conv_maxpool_padded", "conv_wgmma_slab_bf16x3"},
            {"conv1d_same", "conv_wgmma_slab_bf16x3"},
            // The other wgmma convolutions: gathered by producer warps (3xTF32 1-D dilated, 3xbf16
            // before an average pool), pooled in the product's tiles, over a prepared image, and
            // with the operand gathered into registers (a transposed one by phase).
            {"conv1d_dilated_relu", "conv_wgmma"},
            {"conv_relu_avgpool", "conv_wgmma_bf16x3"},
            {"conv_maxpool_padded", "conv_wgmma_pool"},
            {"conv_maxpool_padded", "conv_wgmma_image_bf16x3"},
            {"conv_transpose2d_tanh", "conv_wgmma_regs"},
            {"conv_relu_avgpool", "conv_wgmma_regs_pool"},
        };
        for (const auto &[problem, idea] : cases)
            QTest::newRow(qPrintable(QString("%1 %2").arg(problem, idea))) << QString(problem) << QString(idea) << 132;
        // Composite ops expanded into norms and sums of the same rows, then a mean: a kernel for
        // each sum (on a GPU of 132 SMs every grid fills it with hundreds of thousands of host
        // threads; 16 SMs still split each row across blocks), or every sum in one pass, a block
        // per row (rows of 70: one element per load).
        for (const char *problem : {"cosine_similarity_loss", "triplet_margin_loss"})
            for (const char *idea : {"reduce_split_row", "reduce_rows_fused"})
                QTest::newRow(qPrintable(QString("%1 %2").arg(problem, idea)))
                    << QString(problem) << QString(idea) << 16;
        // Cross entropy: a logsumexp of each row and a sum picking the label's score (int64 labels
        // compared with each column's place), then a mean over the rows whose label is not
        // ignore_index; 6 rows (a GPU of 4 SMs, so that a block per row applies), a kernel each
        // or both in one pass.
        for (const char *idea : {"reduce_rows_fused", "reduce_block_per_row"})
            QTest::newRow(qPrintable(QString("cross_entropy %1").arg(idea)))
                << QString("cross_entropy") << QString(idea) << 4;
        // The same over 200 rows, 3 of which have the ignored label (the problem file says why):
        // counted, the mean would differ by about 1e-2 of itself, far past the tolerance.
        QTest::newRow("cross_entropy_ignored reduce_rows_fused")
            << QString("cross_entropy_ignored") << QString("reduce_rows_fused") << 4;
        // A bool mask of one row broadcast over 6 rows (a GPU of 4 SMs, so that a block or a
        // thread per row applies): four bytes at a time (uchar4), and one.
        for (const char *idea : {"reduce_block_per_row", "reduce_thread_per_output"})
            QTest::newRow(qPrintable(QString("masked_mean_rows %1").arg(idea)))
                << QString("masked_mean_rows") << QString(idea) << 4;
    }

    void candidateMatchesPyTorch()
    {
        QFETCH(QString, problem);
        QFETCH(QString, idea);
        QFETCH(int, sms);
        check(problem, idea, sms, Policy::Strict);
    }

    // Products the loose policy admits, against its tolerance: fp16 operands re-laid, and A
    // rounded to fp16 in registers (a transposed B, ragged sizes; a 256-column tile); the slab
    // convolution on fp16.
    void looseCandidateMatchesPyTorch_data()
    {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("idea");
        for (const char *idea : {"gemm_wgmma_fp16", "gemm_wgmma_fp16_regs"})
            QTest::newRow(idea) << QString("matmul_mish_mish") << QString(idea);
        QTest::newRow("conv_wgmma_slab_fp16") << QString("conv_maxpool_padded") << QString("conv_wgmma_slab_fp16");
    }

    void looseCandidateMatchesPyTorch()
    {
        QFETCH(QString, problem);
        QFETCH(QString, idea);
        check(problem, idea, 132, Policy::Loose);
    }

private:
    void check(const QString &problem, const QString &idea, int sms, Policy policy)
    {
        if (m_python.isEmpty())
            QSKIP("no Python with PyTorch, NumPy and tomllib to run the reference");
        if (run("g++", {"--version"}, 30000).code != 0)
            QSKIP("no g++ to compile the kernels for the host");
        const Problem p = test::ownProblem(problem, "small");
        auto pattern = recognise(test::ownGraph(problem), p);
        QVERIFY2(pattern.ok(), pattern.ok() ? "" : pattern.error().text().c_str());
        const Target t = makeTarget(*pattern, p, sms, 9, policy);
        const IdeaDef *def = findIdea(idea.toStdString());
        QVERIFY(def);
        const std::string why = def->whyNot(t);
        QVERIFY2(why.empty(), why.c_str());
        auto source = renderIdea(*def, t, validPoints(*def, t).front());
        QVERIFY2(source.ok(), source.ok() ? "" : source.error().text().c_str());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = dir.filePath(idea + ".cu");
        QFile out(file);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(source->data(), qint64(source->size()));
        out.close();
        const QString toml = QStringLiteral(KF_SOURCE_DIR "/tests/builtin/data/problems/") + problem + ".toml";
        const QString tolerance = policy == Policy::Loose ? "1e-2" : "1e-4";
        const Run r = run(m_python,
                          {QStringLiteral(KF_SOURCE_DIR "/tools/emulate-on-host.py"), toml, file, "--variant", "small",
                           "--tolerance", tolerance},
                          10 * 60 * 1000);
        QVERIFY2(r.code == 0 && r.out.contains(" OK"), qPrintable(r.out.right(3000)));
    }
};

QTEST_GUILESS_MAIN(TestBuiltinEmulated)
#include "test_emulated.moc"
