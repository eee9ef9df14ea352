// Pattern recognition: the graphs of the shipped problems, as the worker reports them, and
// hand-built graphs for the forms the shipped problems do not cover.
#include "gen/builtin/codegen.h"
#include "gen/builtin/ideas.h"
#include "gen/builtin/pattern.h"
#include "support.h"

#include <QtTest>

using namespace kf;
using namespace kf::builtin;
using kf::test::node;

namespace {

Pattern recogniseOk(const std::vector<OpNode> &graph, const Problem &p)
{
    auto r = recognise(graph, p);
    if (!r)
        qFatal("%s", r.error().text().c_str());
    return *r;
}

// A problem with one input x [2, 3, 4], a parameter b [3] when `withB`, and output `out`.
Problem problemWith(bool withB, const std::string &outShape, const std::string &outDtype = "float32")
{
    const std::string b = withB ? "[[params]]\nname = \"b\"\nshape = [3]\ninit = \"ones\"\n" : "";
    const std::string args = withB ? "x: Tensor, b: Tensor" : "x: Tensor";
    return test::problemFromToml("name = \"t\"\ndescription = \"t\"\n[[inputs]]\nname = \"x\"\nshape = [2, 3, 4]\n" +
                                 b + "[[outputs]]\nname = \"out\"\nshape = " + outShape + "\ndtype = \"" + outDtype +
                                 "\"\n[reference]\nsource = '''\ndef forward(" + args +
                                 ") -> Tensor:\n    return x\n'''\n");
}

// The data of a test of problems: its name, the pattern's kind and summary.
void patternColumns()
{
    QTest::addColumn<QString>("problem");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("summary");
}

void row(const char *problem, const char *kind, const char *summary)
{
    QTest::newRow(problem) << QString(problem) << QString(kind) << QString(summary);
}

// The pattern's kind and summary at full size; the small variant's, from the same graph, has the
// same kind and the small output.
void checkRecognised(const std::vector<OpNode> &graph, const Problem &full, const Problem &small, const QString &kind,
                     const QString &summary)
{
    const Pattern p = recogniseOk(graph, full);
    QCOMPARE(QString::fromStdString(toString(p.kind)), kind);
    QCOMPARE(QString::fromStdString(p.summary()), summary);
    QCOMPARE(p.output, std::string("out"));
    const Pattern s = recogniseOk(graph, small);
    QVERIFY(s.kind == p.kind);
    QCOMPARE(s.outShape, small.outputs[0].shape);
}

} // namespace

class TestBuiltinPattern : public QObject {
    Q_OBJECT
private slots:
    void shippedProblems_data()
    {
        patternColumns();
        row("level1/argmax_dim", "reduce", "argmax over dim 1 of x [128, 4096, 4096]");
        row("level1/avgpool2d", "pool", "avg_pool2d 2x2 stride 2 of x [128, 128, 224, 224]");
        row("level1/batchnorm", "elementwise",
            "elementwise out = (((x - running_mean) / sqrt(running_var + 1e-05)) * weight) + bias over [64, 128, 256, "
            "256]");
        row("level1/bmm", "matmul", "matrix product A @ B (M 512, N 512, K 1024)");
        row("level1/conv2d_3x3", "conv", "conv2d of x with weight (stride 1, padding 1) + bias");
        row("level1/conv2d_pointwise", "conv", "conv2d of x with weight (stride 1, padding 0)");
        row("level1/gelu", "elementwise", "elementwise out = gelu(x) over [4096, 131072]");
        row("level1/linear_bias_relu", "matmul",
            "matrix product x @ weight^T + bias (M 8192, N 4096, K 2048), then relu(acc)");
        row("level1/log_softmax", "softmax", "log_softmax over dim 1 of x [8192, 65536]");
        row("level1/matmul_tall_skinny", "matmul", "matrix product A @ B (M 524288, N 256, K 256)");
        row("level1/max_dim", "reduce", "amax over dim 2 of x [64, 8192, 4096]");
        row("level1/maxpool2d", "pool", "max_pool2d 3x3 stride 2 padding 1 of x [128, 128, 224, 224]");
        row("level1/mean_dim", "reduce", "mean over dim 1 of x [32768, 65536]");
        row("level1/relu", "elementwise", "elementwise out = relu(x) over [4096, 131072]");
        row("level1/rmsnorm", "rmsnorm", "rms_norm over the last dim of x [16, 8192, 4096] (eps 1e-06, weight)");
        row("level1/silu", "elementwise", "elementwise out = silu(x) over [4096, 131072]");
        row("level1/sqrt", "elementwise", "elementwise out = sqrt(x) over [4096, 131072]");
        row("level1/sum_dim", "reduce", "sum over dim 1 of x [128, 4096, 4096]");
        row("level1/tanh", "elementwise", "elementwise out = tanh(x) over [4096, 131072]");
        row("level2/conv2d_batchnorm_relu", "conv",
            "conv2d of x with weight (stride 1, padding 1), then relu((((acc - running_mean) / sqrt(running_var + "
            "1e-05)) "
            "* bn_weight) + bn_bias)");
        row("level2/conv2d_bias_relu", "conv",
            "conv2d of x with weight (stride 1, padding 1) + bias, then relu(acc)");
        row("level2/gemm_scale_sigmoid", "matmul",
            "matrix product x @ weight^T + bias (M 4096, N 4096, K 4096), then sigmoid(acc * 0.5)");
        row("level2/layernorm_residual", "layernorm",
            "layer_norm over the last dim of (x + residual) [64, 4096, 1024] (eps 1e-05, weight, bias)");
        row("level2/linear_gelu", "matmul",
            "matrix product x @ weight^T + bias (M 8192, N 4096, K 1024), then gelu(acc)");
        row("level2/softmax_scaled_scores", "matmul",
            "matrix product q @ k^T (M 1024, N 1024, K 64), then softmax over dim 3 of (product * 0.353553) [16, 16, "
            "1024, 1024]");
        row("level2/swiglu", "matmul",
            "matrix product x @ w_gate^T (M 4096, N 4096, K 4096), x @ w_up^T (M 4096, N 4096, K 4096), then "
            "elementwise out = silu(product1) * product2 over [4096, 4096]");
        row("seed/conv2d", "conv", "conv2d of x with weight (stride 4, padding 2) + bias");
        row("seed/conv2d_relu_maxpool", "conv",
            "conv2d of x with weight (stride 4, padding 2) + bias, then relu(acc), then max_pool2d 3x3 stride 2");
        row("seed/layernorm", "layernorm",
            "layer_norm over the last 3 dims of x [16, 64, 256, 256] (eps 1e-05, weight, bias)");
        row("seed/matmul", "matmul", "matrix product A @ B (M 4096, N 4096, K 4096)");
        row("seed/softmax", "softmax", "softmax over dim 1 of x [4096, 65536]");
    }

    void shippedProblems()
    {
        QFETCH(QString, problem);
        QFETCH(QString, kind);
        QFETCH(QString, summary);
        checkRecognised(test::shippedGraph(problem), test::shippedProblem(problem),
                        test::shippedProblem(problem, "small"), kind, summary);
    }

    // The patterns the shipped problems lack: losses and sums to one value, elementwise ops around a
    // reduction, group and instance norms, pooling with epilogues, scans, matrix-vector products.
    void ownProblems_data()
    {
        patternColumns();
        row("mse_loss", "reduce", "mean over all elements of ((predictions - targets)^2) [16384, 16384]");
        // torch.broadcast_tensors before the loss, as the functional losses run it: expands.
        row("huber_loss_functional", "reduce",
            "mean over all elements of (huber(abs(predictions - targets), 0.5)) [16384, 16384]");
        // triu / tril: a mask of the element's row and column, in the product's epilogue too.
        row("matmul_lower_triangular", "matmul",
            "matrix product A @ B (M 4096, N 4096, K 4096), then lower triangle from diagonal -1 of acc");
        row("triu_batched_scale", "elementwise",
            "elementwise out = (upper triangle from diagonal 2 of x) * scale over [64, 1024, 2048]");
        // Bool tensors, read as bytes: 1 where true, as x * mask promotes them.
        row("masked_cumsum", "scan", "cumsum over dim 1 of (x * mask) [8192, 16384]");
        row("masked_mean_rows", "reduce", "mean over dim 1 of (x * keep) [16384, 8192], then relu(acc)");
        row("matmul_masked_columns", "matmul", "matrix product A @ B (M 4096, N 4096, K 2048), then acc * keep");
        row("sum_all", "reduce", "sum over all elements of x [32768, 16384]");
        row("hinge_loss", "reduce",
            "mean over all elements of (clamp(-(predictions * targets) + 1, 0, inf)) [16384, 16384]");
        row("smooth_l1_loss", "reduce",
            "mean over all elements of (smooth_l1(abs(predictions - targets), 1)) [16384, 16384]");
        row("kl_div_batchmean", "reduce",
            "sum over all elements of (xlogx(targets) - (targets * log(predictions + 0.001))) [16384, 16384], then acc "
            "/ 16384");
        row("l1_norm", "normalize", "x / acc over [4096, 65535], acc = mean over dim 1 of (abs(x)) [4096, 65535]");
        row("l2_norm", "normalize", "x / sqrt(acc) over [16384, 16384], acc = sum over dim 1 of (x^2) [16384, 16384]");
        row("frobenius_norm", "normalize",
            "x / sqrt(acc) over [64, 64, 256, 256], acc = sum over dims 0..3 of (x^2) [64, 64, 256, 256]");
        row("rms_norm_channels", "normalize",
            "x / sqrt(acc + 1e-05) over [64, 64, 256, 256], acc = mean over dim 1 of (x^2) [64, 64, 256, 256]");
        row("group_norm", "layernorm", "group_norm with 8 groups of x [32, 64, 256, 256] (eps 1e-05, weight, bias)");
        row("instance_norm", "layernorm", "instance_norm of x [32, 64, 256, 256] (eps 1e-05)");
        row("relu_maxpool", "pool", "max_pool2d 3x3 stride 2 padding 1 of (relu(x)) [32, 64, 512, 512]");
        row("avgpool_wide_windows", "pool", "avg_pool2d 8x12 stride 8 of (x - 0.5) [32, 64, 256, 384], then relu(acc)");
        row("maxpool_wide_padded", "pool", "max_pool2d 12x12 stride 8 padding 4 of x [32, 64, 256, 256]");
        row("maxpool_dilated", "pool", "max_pool2d 4x4 stride 2 padding 2 of x [16, 32, 255, 255], then acc * 2");
        row("avgpool_padded", "pool", "avg_pool2d 3x3 stride 2 padding 1 of x [32, 64, 255, 255]");
        row("cumsum_rows", "scan", "cumsum over dim 1 of x [16384, 32768]");
        row("cumsum_reverse", "scan", "reverse cumsum over dim 1 of x [8192, 32767], then acc * 0.5");
        row("cumprod_columns", "scan", "cumprod over dim 1 of ((x / 128) + 1) [64, 128, 16384]");
        row("gemv", "matmul", "matrix product A @ x (M 4096, N 1, K 65536)");
        row("vecmat", "matmul", "matrix product x @ W (M 4, N 16384, K 32768), then relu(acc)");
        row("linear_small_batch", "matmul", "matrix product x @ weight^T + bias (M 8, N 16384, K 16384)");
        row("bmv", "matmul", "matrix product A @ x (M 1024, N 1, K 8192)");
        row("matmul_mish_mish", "matmul",
            "matrix product x @ weight^T + bias (M 8192, N 8192, K 8192), then mish(mish(acc))");
        row("conv_relu_biasadd", "conv",
            "conv2d of x with weight (stride 1, padding 0) + conv_bias, then relu(acc) + bias");
        row("bmm_large", "matmul", "matrix product A @ B (M 512, N 2048, K 1024)");
        row("matmul_large_k", "matmul", "matrix product A @ B (M 256, N 256, K 524288)");
        row("conv_relu_avgpool", "conv",
            "conv2d of x with weight (stride 1, padding 1) + bias, then relu(acc), then avg_pool2d 2x2 stride 2");
        row("prod_dim", "reduce", "prod over dim 1 of x [128, 32, 4096]");
        row("softmax_long_rows", "softmax", "softmax over dim 1 of x [1024, 65536]");
        row("log_softmax_long_rows", "softmax", "log_softmax over dim 1 of x [2048, 32768]");
        row("conv_maxpool_padded", "conv",
            "conv2d of x with weight (stride 1, padding 1) + bias, then max_pool2d 3x3 stride 2 padding 1");
        row("linear_sigmoid_sum", "matmul",
            "matrix product x @ weight^T + bias (M 8192, N 8192, K 4096), then sum over dim 1 of (sigmoid(product) * "
            "2) [8192, 8192] (keepdim)");
        row("bmm_tanh_l2norm", "matmul",
            "matrix product A @ B (M 512, N 512, K 1024), then tanh(product * 0.03) / sqrt(acc) over [64, 512, 512], "
            "acc = sum over dim 2 of (tanh(product * 0.03)^2) [64, 512, 512]");
        row("conv_groupnorm", "conv",
            "conv2d of x with weight (stride 1, padding 1) + bias, then group_norm with 8 groups of conv_out [32, 64, "
            "128, 128] (eps 1e-05, gamma, beta)");
        row("conv_avgpool_sigmoid_sum", "conv",
            "conv2d of x with weight (stride 1, padding 1) + bias, then avg_pool2d 2x2 stride 2, then sum over dims "
            "1..3 of (sigmoid(conv_out)) [64, 64, 128, 128]");
        row("matmul_two_products", "matmul",
            "matrix product x @ w_gate^T (M 4096, N 5632, K 2048), x @ w_up^T (M 4096, N 5632, K 2048), then "
            "elementwise out = (product1 * sigmoid(product1)) * product2 over [4096, 5632]");
        row("conv1d_dilated_relu", "conv",
            "conv1d of x with weight (stride 2, padding 4, dilation 2) + bias, then relu(acc)");
        row("conv1d_same", "conv", "conv1d of x with weight (stride 1, padding 4, dilation 3)");
        row("conv2d_dilated_strided", "conv",
            "conv2d of x with weight (stride 2, padding 2, dilation 2) + bias, then acc * sigmoid(acc)");
        row("conv3d_relu", "conv", "conv3d of x with weight (stride 1, padding 1) + bias, then relu(acc)");
        row("conv_depthwise", "conv", "conv2d of x with weight (stride 1, padding 1, groups 64) + bias");
        row("conv_transpose2d_tanh", "conv",
            "conv_transpose2d of x with weight (stride 2, padding 1, output padding 1) + bias, then tanh(acc)");
        row("conv_transpose3d_groups", "conv",
            "conv_transpose3d of x with weight (stride 2, padding 1, groups 2) + bias, then acc * 0.5");
        row("conv_transpose3d_scale_relu", "conv",
            "conv_transpose3d of x with weight (stride 2, padding 1, output padding 1) + bias, then relu(acc * 0.5)");
        row("conv_transpose1d_dilated", "conv",
            "conv_transpose1d of x with weight (stride 3, padding 1, dilation 2, output padding 2) + bias, then acc * "
            "sigmoid(acc)");
        row("conv_grouped_dilated_maxpool", "conv",
            "conv2d of x with weight (stride 1, padding 2, dilation 2, groups 4) + bias, then relu(acc), then "
            "max_pool2d 2x2 stride 2");
        row("logsumexp_rows", "reduce", "logsumexp over dim 1 of x [4096, 65536], then acc * 0.5");
        row("logsumexp_channels", "reduce", "logsumexp over dim 1 of x [32, 64, 16384] (keepdim)");
        row("log_softmax_written_out", "normalize",
            "x - acc over [8192, 8192], acc = logsumexp over dim 1 of x [8192, 8192]");
        row("softmax_channels", "softmax", "log_softmax over dim 1 of (x * 2) [16, 16, 32, 64, 64]");
        row("conv3d_min_softmax", "conv",
            "conv3d of x with weight (stride 1, padding 0) + bias, then amin over dim 2 of conv_out [64, 16, 14, 62, "
            "62], then softmax over dim 1 of min_out [64, 16, 62, 62]");
        row("linear_groupnorm_min", "matmul",
            "matrix product x @ weight^T + bias (M 1024, N 1024, K 512), then group_norm with 8 groups of product "
            "[1024, 1024] (eps 1e-05, gamma, beta), then amin over dim 1 of group_norm_out [1024, 1024] (keepdim), "
            "then acc + 0.5");
        row("conv_depthwise_separable", "conv",
            "conv2d of x with dw_weight (stride 1, padding 1, groups 64), then conv2d of conv_out with pw_weight "
            "(stride 1, padding 0)");
        row("maxpool3d_dilated", "pool", "max_pool3d 3x3x3 stride 2 padding 1 of x [16, 32, 64, 64, 64]");
        row("avgpool1d_unpadded_count", "pool", "avg_pool1d 8 stride 3 padding 4 of x [32, 64, 65536]");
        row("avgpool1d_stride1", "pool", "avg_pool1d 8 stride 1 padding 4 of x [64, 128, 65536]");
        row("maxpool_stride1_padded", "pool",
            "max_pool2d 3x3 stride 1 padding 1 of (tanh(x)) [16, 32, 256, 256], then acc + 1");
        row("conv3d_maxpool_softmax", "conv",
            "conv3d of x with weight (stride 1, padding 1) + bias, then max_pool3d 2x2x2 stride 2 of conv_out [32, 16, "
            "32, 64, 64], then clamp(acc, -0.2, 0.2), then softmax over dim 1 of max_pool3d_out [32, 16, 16, 32, 32], "
            "then acc * 2");
        row("softmax_epilogue", "softmax", "softmax over dim 1 of x [4096, 8192], then sigmoid((acc * 100) + bias)");
        row("matmul_transposed_a", "matmul", "matrix product A^T @ B (M 2048, N 4096, K 8192)");
        row("bmm_transposed_both", "matmul", "matrix product A^T @ B^T (M 512, N 768, K 1024), then relu(acc)");
        // Composite ops, expanded into the ops the recogniser takes.
        row("cosine_similarity_loss", "reduce",
            "sum over dim 1 of (predictions^2) [16384, 16384], then clamp(sqrt(acc), 1e-08, inf), together with sum "
            "over dim 1 of (targets^2) [16384, 16384], then clamp(sqrt(acc), 1e-08, inf), together with sum over dim 1 "
            "of (predictions * targets) [16384, 16384], then mean over all elements of (-(sum_out / "
            "(linalg_vector_norm_out * "
            "linalg_vector_norm_out_2)) + 1) [16384]");
        row("triplet_margin_loss", "reduce",
            "sum over dim 1 of (((anchor - positive) + 1e-06)^2) [16384, 8192], then sqrt(acc), together with sum over "
            "dim 1 of (((anchor - negative) + 1e-06)^2) [16384, 8192], then sqrt(acc), together with sum over dim 1 of "
            "(((positive - negative) + 1e-06)^2) [16384, 8192], then sqrt(acc), then mean over all elements of "
            "(clamp((linalg_vector_norm_out - min(linalg_vector_norm_out_2, linalg_vector_norm_out_3)) + 2, 0, inf)) "
            "[16384]");
        // Cross entropy: a logsumexp of each row and a sum picking the label's score, in one
        // split; then the mean over the rows whose label is not ignore_index, as two sums.
        row("cross_entropy", "reduce",
            "logsumexp over dim 1 of scores [16384, 8192], together with sum over dim 1 of (scores * (positions 0 to "
            "8191 == labels)) [16384, 8192], then sum over all elements of ((logsumexp_out - sum_out) * (labels != "
            "-100)) [16384], together with sum over all elements of ((labels != -100)) [16384], then elementwise out "
            "= sum_out_2 / sum_out_3 over []");
        row("cross_entropy_ignored", "reduce",
            "logsumexp over dim 1 of scores [8192, 50257], together with sum over dim 1 of (scores * (positions 0 to "
            "50256 == labels)) [8192, 50257], then sum over all elements of ((logsumexp_out - sum_out) * (labels != "
            "90)) [8192], together with sum over all elements of ((labels != 90)) [8192], then elementwise out = "
            "sum_out_2 / sum_out_3 over []");
        row("where_masked_fill", "elementwise",
            "elementwise out = where(drop, -1.5, where((x > 0.25), x, x * 0.2)) + (x <= -0.5) over [8192, 16384]");
        row("einsum_tensor_matrix", "matmul", "matrix product A @ W (M 256, N 768, K 512), then tanh(acc)");
        row("diag_scaled_rows", "elementwise", "elementwise out = d * B over [8192, 8192]");
        row("activations_more", "elementwise",
            "elementwise out = ((((selu(x) + celu(x, 2)) + (hardshrink(x, 0.5) + threshold(x, 0.5, -1))) + (((atan(x) + "
            "tan(tanh(x))) + sinh(tanh(x))) + cosh(tanh(x)))) + ((log2(abs(x) + 1) + log10(abs(x) + 1)) + "
            "exp2(-abs(x)))) + ((((floor(x) + ceil(x)) + round(x)) + trunc(x)) + sign(x)) over [8192, 4096]");
    }

    void ownProblems()
    {
        QFETCH(QString, problem);
        QFETCH(QString, kind);
        QFETCH(QString, summary);
        checkRecognised(test::ownGraph(problem), test::ownProblem(problem), test::ownProblem(problem, "small"), kind,
                        summary);
    }

    void everyOwnProblemIsListed() { QCOMPARE(test::ownNames().size(), 76); }

    // The rows the templates see for the new patterns.
    void geometryAroundReductions()
    {
        auto of = [](const char *name) { return recogniseOk(test::ownGraph(name), test::ownProblem(name)); };
        const Pattern mse = of("mse_loss");
        QCOMPARE(mse.row.outer * mse.row.inner, std::int64_t(1));
        QCOMPARE(mse.row.len, std::int64_t(16384) * 16384);
        QCOMPARE(mse.input.leaves.size(), std::size_t(2));
        QVERIFY(mse.program.empty());

        // A loss divided by a constant finishes the reduction.
        const Pattern kl = of("kl_div_batchmean");
        QCOMPARE(kl.reduceOp, std::string("sum"));
        QVERIFY(!kl.program.empty() && kl.program.leaves.empty());

        // A column statistic: [B, C, H*W] around the reduced channels.
        const Pattern rms = of("rms_norm_channels");
        QCOMPARE(rms.row.outer, std::int64_t(64));
        QCOMPARE(rms.row.len, std::int64_t(64));
        QCOMPARE(rms.row.inner, std::int64_t(256) * 256);
        QCOMPARE(rms.program.shape, (Shape{64, 64, 256, 256}));

        // Group norm: rows of a sample's group of channels; the weight is per channel.
        const Pattern gn = of("group_norm");
        QCOMPARE(gn.groups, std::int64_t(8));
        QCOMPARE(gn.row.outer, std::int64_t(32) * 8);
        QCOMPARE(gn.row.len, std::int64_t(8) * 256 * 256);
        QCOMPARE(gn.weight, std::string("weight"));

        const Pattern rev = of("cumsum_reverse");
        QVERIFY(rev.reverse);
        QCOMPARE(rev.row.len, std::int64_t(32767));
        const Pattern cols = of("cumprod_columns");
        QCOMPARE(cols.reduceOp, std::string("prod"));
        QCOMPARE(cols.row.inner, std::int64_t(16384));

        const Pattern pool = of("avgpool_padded");
        QVERIFY(!pool.pool->max && pool.pool->ceilMode && !pool.pool->countIncludePad);
        QCOMPARE(pool.pool->pad[0], std::int64_t(1));
        const Pattern dil = of("maxpool_dilated");
        QCOMPARE(dil.pool->dilation[1], std::int64_t(2));
    }

    // A reduction broadcast back along the wrong dims is not a normalization: a sum over the rows
    // of [4, 4] without keepdim, added to x, broadcasts along the columns. It is computed as what
    // it is: the sums as a stage, then x plus them broadcast as [1, 4].
    void reductionBroadcastMustKeepItsDims()
    {
        const Problem p = test::problemFromToml(
            "name = \"t\"\ndescription = \"t\"\n[[inputs]]\nname = \"x\"\nshape = [4, 4]\n[[outputs]]\nname = \"out\"\n"
            "shape = [4, 4]\n[reference]\nsource = '''\ndef forward(x: Tensor) -> Tensor:\n    return x\n'''\n");
        auto graph = [](nlohmann::json dims, bool keep, Shape sumShape) {
            return std::vector<OpNode>{node("aten::sum", {"%x.1", "%1", "%2", "%3"}, {"%4"}, {{4, 4}, {}, {}, {}},
                                            {sumShape}, {nullptr, dims, keep, nullptr}),
                                       node("aten::add", {"%x.1", "%4", "%5"}, {"%6"}, {{4, 4}, sumShape, {}}, {{4, 4}},
                                            {nullptr, nullptr, 1})};
        };
        auto wrong = recognise(graph({1}, false, {4}), p);
        QVERIFY2(wrong.ok(), wrong.ok() ? "" : wrong.error().text().c_str());
        QCOMPARE(QString::fromStdString(toString(wrong->kind)), QStringLiteral("reduce"));
        QVERIFY(wrong->tail);
        QCOMPARE(QString::fromStdString(toString(wrong->tail->kind)), QStringLiteral("elementwise"));
        auto kept = recognise(graph({1}, true, {4, 1}), p);
        QVERIFY2(kept.ok(), kept.ok() ? "" : kept.error().text().c_str());
        QCOMPARE(QString::fromStdString(toString(kept->kind)), QStringLiteral("normalize"));
        // A sum over dim 0 without keepdim is [4], which broadcasts as [1, 4]: the right dims.
        auto columns = recognise(graph({0}, false, {4}), p);
        QVERIFY2(columns.ok(), columns.ok() ? "" : columns.error().text().c_str());
        QCOMPARE(columns->row.inner, std::int64_t(4));
    }

    void everyShippedProblemIsListed() { QCOMPARE(test::shippedNames().size(), 31); }

    void rowGeometry()
    {
        const Pattern sum = recogniseOk(test::shippedGraph("level1/sum_dim"), test::shippedProblem("level1/sum_dim"));
        QCOMPARE(sum.reduceOp, std::string("sum"));
        QCOMPARE(sum.row.outer, std::int64_t(128));
        QCOMPARE(sum.row.len, std::int64_t(4096));
        QCOMPARE(sum.row.inner, std::int64_t(4096));
        QVERIFY(!sum.row.keepdim);

        const Pattern ln = recogniseOk(test::shippedGraph("seed/layernorm"), test::shippedProblem("seed/layernorm"));
        QCOMPARE(ln.row.outer, std::int64_t(16));
        QCOMPARE(ln.row.len, std::int64_t(64 * 256 * 256));
        QCOMPARE(ln.row.dims, 3);
        QCOMPARE(ln.weight, std::string("weight"));
        QCOMPARE(ln.bias, std::string("bias"));
        QCOMPARE(ln.eps, 1e-5);
        QVERIFY(ln.input.empty());

        const Pattern rms = recogniseOk(test::shippedGraph("level1/rmsnorm"), test::shippedProblem("level1/rmsnorm"));
        QVERIFY(rms.kind == PatternKind::RMSNorm);
        QCOMPARE(rms.weight, std::string("weight"));
        QVERIFY(rms.bias.empty());
        QCOMPARE(rms.eps, 1e-6);
        QCOMPARE(rms.row.len, std::int64_t(4096));

        const Pattern res = recogniseOk(test::shippedGraph("level2/layernorm_residual"),
                                        test::shippedProblem("level2/layernorm_residual"));
        QCOMPARE(res.input.leaves.size(), std::size_t(2));
        QCOMPARE(res.input.steps.size(), std::size_t(1));

        const Pattern arg =
            recogniseOk(test::shippedGraph("level1/argmax_dim"), test::shippedProblem("level1/argmax_dim"));
        QVERIFY(arg.outDtype == DType::I64);
    }

    void matrixProductsAndConvolutions()
    {
        const Pattern lin =
            recogniseOk(test::shippedGraph("level1/linear_bias_relu"), test::shippedProblem("level1/linear_bias_relu"));
        QCOMPARE(lin.gemms.size(), std::size_t(1));
        QVERIFY(!lin.gemms[0].transA);
        QVERIFY(lin.gemms[0].transB); // weight.t()
        QCOMPARE(lin.gemms[0].bias, std::string("bias"));
        QCOMPARE(lin.program.steps.size(), std::size_t(1));

        const Pattern bmm = recogniseOk(test::shippedGraph("level1/bmm"), test::shippedProblem("level1/bmm"));
        QCOMPARE(bmm.gemms[0].batch, (Shape{128}));

        const Pattern conv = recogniseOk(test::shippedGraph("seed/conv2d_relu_maxpool"),
                                         test::shippedProblem("seed/conv2d_relu_maxpool"));
        QVERIFY(conv.conv && conv.pool);
        QCOMPARE(conv.conv->stride[0], std::int64_t(4));
        QCOMPARE(conv.conv->pad[1], std::int64_t(2));
        QCOMPARE(conv.conv->outShape, (Shape{100, 96, 55, 55}));
        QCOMPARE(conv.pool->kernel[0], std::int64_t(3));
        QCOMPARE(conv.pool->stride[0], std::int64_t(2));
        QCOMPARE(conv.pool->outShape, (Shape{100, 96, 27, 27}));

        const Pattern pool =
            recogniseOk(test::shippedGraph("level1/maxpool2d"), test::shippedProblem("level1/maxpool2d"));
        QCOMPARE(pool.pool->pad[0], std::int64_t(1));
        QCOMPARE(pool.pool->outShape, (Shape{128, 128, 112, 112}));
    }

    // Products with a tail: each product becomes an input of the tail's problem, named so that it
    // names nothing of the problem, with the product's shape; the gemm keeps its bias.
    void productsBeforeARowOp()
    {
        const Pattern sum = recogniseOk(test::ownGraph("linear_sigmoid_sum"), test::ownProblem("linear_sigmoid_sum"));
        QCOMPARE(sum.products, std::vector<std::string>{"product"});
        QCOMPARE(sum.gemms[0].bias, std::string("bias"));
        QVERIFY(sum.tail && sum.tailProblem);
        QCOMPARE(toString(sum.tail->kind), std::string("reduce"));
        QCOMPARE(sum.tail->output, std::string("out"));
        QCOMPARE(sum.tailProblem->tensor("product")->shape, (Shape{8192, 8192}));

        const Pattern two = recogniseOk(test::ownGraph("matmul_two_products"), test::ownProblem("matmul_two_products"));
        QCOMPARE(two.products, (std::vector<std::string>{"product1", "product2"}));
        QCOMPARE(two.gemms[1].b, std::string("w_up"));
        QCOMPARE(toString(two.tail->kind), std::string("elementwise"));

        // A problem tensor already called "product".
        Problem clash = test::ownProblem("linear_sigmoid_sum");
        clash.inputs[0].name = "product";
        std::vector<OpNode> graph = test::ownGraph("linear_sigmoid_sum");
        for (OpNode &n : graph)
            for (std::string &v : n.inputs)
                if (v == "%x.1")
                    v = "%product.1";
        const Pattern renamed = recogniseOk(graph, clash);
        QCOMPARE(renamed.gemms[0].a, std::string("product"));
        QCOMPARE(renamed.products, std::vector<std::string>{"product_2"});

        // A convolution with its pooling as the stage (the pooling's templates keep it), the rest
        // after it; a group norm right after the convolution.
        const Pattern pooled =
            recogniseOk(test::ownGraph("conv_avgpool_sigmoid_sum"), test::ownProblem("conv_avgpool_sigmoid_sum"));
        QCOMPARE(pooled.products, std::vector<std::string>{"conv_out"});
        QVERIFY(pooled.stages.front()->pool);
        QCOMPARE(pooled.stages.front()->outShape, (Shape{64, 64, 128, 128}));
        QCOMPARE(toString(pooled.tail->kind), std::string("reduce"));
        const Pattern norm = recogniseOk(test::ownGraph("conv_groupnorm"), test::ownProblem("conv_groupnorm"));
        QVERIFY(!norm.stages.front()->pool);
        QCOMPARE(toString(norm.tail->kind), std::string("layernorm"));

        // Only one product and elementwise ops: the fused epilogue, no tail.
        const Pattern fused = recogniseOk(test::ownGraph("matmul_mish_mish"), test::ownProblem("matmul_mish_mish"));
        QVERIFY(!fused.tail && fused.products.empty());
    }

    // x / sqrt(mean(x^2, -1, keepdim) + eps), with x.pow(2) and no weight.
    void rmsNormDividedBySqrt()
    {
        Problem p = problemWith(false, "[2, 3, 4]");
        std::vector<OpNode> g{
            node("aten::pow", {"%x.1", "%2"}, {"%3"}, {{2, 3, 4}, {}}, {{2, 3, 4}}, {nullptr, 2}),
            node("prim::ListConstruct", {"%4"}, {"%5"}, {{}}, {{}}, {-1}),
            node("aten::mean", {"%3", "%5", "%6", "%7"}, {"%8"}, {{2, 3, 4}, {}, {}, {}}, {{2, 3, 1}},
                 {nullptr, {-1}, true, nullptr}),
            node("aten::add", {"%8", "%9", "%10"}, {"%11"}, {{2, 3, 1}, {}, {}}, {{2, 3, 1}}, {nullptr, 1e-5, 1}),
            node("aten::sqrt", {"%11"}, {"%12"}, {{2, 3, 1}}, {{2, 3, 1}}, {nullptr}),
            node("aten::div", {"%x.1", "%12"}, {"%13"}, {{2, 3, 4}, {2, 3, 1}}, {{2, 3, 4}}, {nullptr, nullptr}),
        };
        const Pattern r = recogniseOk(g, p);
        QVERIFY(r.kind == PatternKind::RMSNorm);
        QVERIFY(r.weight.empty());
        QCOMPARE(r.eps, 1e-5);
        QCOMPARE(r.row.len, std::int64_t(4));
        QCOMPARE(r.row.outer, std::int64_t(6));
        // The output step is the normalized value itself (it once came out as the constant 0).
        QVERIFY(r.program.result.kind == EwArg::Kind::Acc);
        QCOMPARE(r.program.shape, (Shape{2, 3, 4}));
        QVERIFY(r.program.steps.empty());
    }

    // x * rsqrt(mean(x * x, -1, keepdim) + eps) * weight: the output multiplies by the weight.
    void rmsNormWrittenOutWithWeight()
    {
        const Problem p = test::problemFromToml(
            "name = \"t\"\ndescription = \"t\"\n[[inputs]]\nname = \"x\"\nshape = [2, 3, 4]\n[[params]]\nname = "
            "\"weight\"\nshape = [4]\ninit = \"ones\"\n[[outputs]]\nname = \"out\"\nshape = [2, 3, 4]\n[reference]\n"
            "source = '''\ndef forward(x: Tensor, weight: Tensor) -> Tensor:\n    return x\n'''\n");
        std::vector<OpNode> g{
            node("aten::mul", {"%x.1", "%x.1"}, {"%3"}, {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}}, {nullptr, nullptr}),
            node("prim::ListConstruct", {"%4"}, {"%5"}, {{}}, {{}}, {-1}),
            node("aten::mean", {"%3", "%5", "%6", "%7"}, {"%8"}, {{2, 3, 4}, {}, {}, {}}, {{2, 3, 1}},
                 {nullptr, {-1}, true, nullptr}),
            node("aten::add", {"%8", "%9", "%10"}, {"%11"}, {{2, 3, 1}, {}, {}}, {{2, 3, 1}}, {nullptr, 1e-6, 1}),
            node("aten::rsqrt", {"%11"}, {"%12"}, {{2, 3, 1}}, {{2, 3, 1}}, {nullptr}),
            node("aten::mul", {"%x.1", "%12"}, {"%13"}, {{2, 3, 4}, {2, 3, 1}}, {{2, 3, 4}}, {nullptr, nullptr}),
            node("aten::mul", {"%13", "%weight.1"}, {"%14"}, {{2, 3, 4}, {4}}, {{2, 3, 4}}, {nullptr, nullptr}),
        };
        const Pattern r = recogniseOk(g, p);
        QVERIFY(r.kind == PatternKind::RMSNorm);
        QCOMPARE(r.weight, std::string("weight"));
        Target t;
        t.pattern = r;
        t.problem = &p;
        const EwProgram out = ideas::outputProgram(t);
        QCOMPARE(out.steps.size(), std::size_t(1));
        QCOMPARE(out.steps[0].fn, std::string("mul"));
        QVERIFY(out.result.kind == EwArg::Kind::Step);
        QCOMPARE(out.result.index, 0);
    }

    // torch.max(x, 1) yields (values, indices); the output's dtype says which one is returned.
    void maxAlongDim()
    {
        std::vector<OpNode> g{node("aten::max", {"%x.1", "%2", "%3"}, {"%4", "%5"}, {{2, 3, 4}, {}, {}},
                                   {{2, 4}, {2, 4}}, {nullptr, 1, false})};
        QCOMPARE(recogniseOk(g, problemWith(false, "[2, 4]")).reduceOp, std::string("amax"));
        QCOMPARE(recogniseOk(g, problemWith(false, "[2, 4]", "int64")).reduceOp, std::string("argmax"));
        const Pattern r = recogniseOk(g, problemWith(false, "[2, 4]"));
        QCOMPARE(r.row.outer, std::int64_t(2));
        QCOMPARE(r.row.len, std::int64_t(3));
        QCOMPARE(r.row.inner, std::int64_t(4));
    }

    // relu(x + b.view(1, -1, 1)) * 2.0 - 1.0: a broadcast bias along the middle dim.
    void broadcastThroughAView()
    {
        Problem p = problemWith(true, "[2, 3, 4]");
        std::vector<OpNode> g{
            node("prim::ListConstruct", {"%4", "%5", "%4"}, {"%6"}, {{}, {}, {}}, {{}}, {1, -1, 1}),
            node("aten::view", {"%b.1", "%6"}, {"%7"}, {{3}, {}}, {{1, 3, 1}}, {nullptr, {1, -1, 1}}),
            node("aten::add", {"%x.1", "%7", "%4"}, {"%9"}, {{2, 3, 4}, {1, 3, 1}, {}}, {{2, 3, 4}},
                 {nullptr, nullptr, 1}),
            node("aten::relu", {"%9"}, {"%10"}, {{2, 3, 4}}, {{2, 3, 4}}, {nullptr}),
            node("aten::mul", {"%10", "%11"}, {"%12"}, {{2, 3, 4}, {}}, {{2, 3, 4}}, {nullptr, 2.0}),
            node("aten::sub", {"%12", "%13", "%4"}, {"%15"}, {{2, 3, 4}, {}, {}}, {{2, 3, 4}}, {nullptr, 1.0, 1}),
        };
        const Pattern r = recogniseOk(g, p);
        QVERIFY(r.kind == PatternKind::Elementwise);
        QCOMPARE(QString::fromStdString(r.program.text()), QString("(relu(x + b) * 2) - 1"));
        QCOMPARE(r.program.leaves.size(), std::size_t(2));
        const Leaf &b = r.program.leaves[1];
        QCOMPARE(b.tensor, std::string("b"));
        QCOMPARE(b.view, (Shape{1, 3, 1}));
        auto terms = indexTerms(b, r.program.shape);
        QCOMPARE(terms.size(), std::size_t(1));
        QCOMPARE(terms[0].div, std::int64_t(4));
        QCOMPARE(terms[0].mod, std::int64_t(3));
        QCOMPARE(terms[0].stride, std::int64_t(1));
        QVERIFY(indexTerms(r.program.leaves[0], r.program.shape).empty());
    }

    void indexTermsOfBroadcasts()
    {
        const Shape out{8, 16, 32};
        QVERIFY(indexTerms(Leaf{"x", out, out}, out).empty());
        auto row = indexTerms(Leaf{"b", {32}, {32}}, out); // a bias along the last dim
        QCOMPARE(row.size(), std::size_t(1));
        QCOMPARE(row[0].div, std::int64_t(1));
        QCOMPARE(row[0].mod, std::int64_t(32));
        auto outer = indexTerms(Leaf{"s", {8, 1, 1}, {8, 1, 1}}, out); // one value per outer slice
        QCOMPARE(outer.size(), std::size_t(1));
        QCOMPARE(outer[0].div, std::int64_t(16 * 32));
        QCOMPARE(outer[0].mod, std::int64_t(8));
        auto split = indexTerms(Leaf{"t", {8, 1, 32}, {8, 1, 32}}, out); // broadcast in the middle
        QCOMPARE(split.size(), std::size_t(2));
        QCOMPARE(split[0].stride, std::int64_t(1));
        QCOMPARE(split[1].div, std::int64_t(16 * 32));
        QCOMPARE(split[1].stride, std::int64_t(32));
        auto scalar = indexTerms(Leaf{"c", {1}, {1}}, out);
        QCOMPARE(scalar.size(), std::size_t(1));
        QCOMPARE(scalar[0].stride, std::int64_t(0));
    }

    void elementwiseArguments()
    {
        // gelu(x, approximate='tanh').clamp(min=0.1) and rsub: 2 - x.
        std::vector<OpNode> g{
            node("aten::gelu", {"%x.1", "%2"}, {"%3"}, {{2, 3, 4}, {}}, {{2, 3, 4}}, {nullptr, "tanh"}),
            node("aten::clamp", {"%3", "%4", "%5"}, {"%6"}, {{2, 3, 4}, {}, {}}, {{2, 3, 4}}, {nullptr, 0.1, nullptr}),
            node("aten::rsub", {"%6", "%7", "%8"}, {"%9"}, {{2, 3, 4}, {}, {}}, {{2, 3, 4}}, {nullptr, 2.0, 1}),
        };
        const Pattern r = recogniseOk(g, problemWith(false, "[2, 3, 4]"));
        QCOMPARE(QString::fromStdString(r.program.text()), QString("2 - clamp(gelu_tanh(x), 0.1, inf)"));
    }

    void moreActivations()
    {
        // selu, log_sigmoid, celu(alpha=2), hardshrink(0.3), softshrink (default 0.5), threshold(0.1, 20),
        // round, sign: one fused chain.
        const Shape s{2, 3, 4};
        std::vector<OpNode> g{
            node("aten::selu", {"%x.1"}, {"%2"}, {s}, {s}, {nullptr}),
            node("aten::log_sigmoid", {"%2"}, {"%3"}, {s}, {s}, {nullptr}),
            node("aten::celu", {"%3", "%4"}, {"%5"}, {s, {}}, {s}, {nullptr, 2.0}),
            node("aten::hardshrink", {"%5", "%6"}, {"%7"}, {s, {}}, {s}, {nullptr, 0.3}),
            node("aten::softshrink", {"%7", "%8"}, {"%9"}, {s, {}}, {s}, {nullptr, nullptr}),
            node("aten::threshold", {"%9", "%10", "%11"}, {"%12"}, {s, {}, {}}, {s}, {nullptr, 0.1, 20.0}),
            node("aten::round", {"%12"}, {"%13"}, {s}, {s}, {nullptr}),
            node("aten::sign", {"%13"}, {"%14"}, {s}, {s}, {nullptr}),
        };
        const Pattern r = recogniseOk(g, problemWith(false, "[2, 3, 4]"));
        QCOMPARE(QString::fromStdString(r.program.text()),
                 QString("sign(round(threshold(softshrink(hardshrink(celu(log_sigmoid(selu(x)), 2), 0.3), 0.5), 0.1, "
                         "20)))"));
        // round to decimals is not an integer rounding: refused by name.
        auto decimals = recognise({node("aten::round", {"%x.1", "%2"}, {"%3"}, {s, {}}, {s}, {nullptr, 2})},
                                  problemWith(false, "[2, 3, 4]"));
        QVERIFY(!decimals);
        QVERIFY2(QString::fromStdString(decimals.error().message).contains("decimals"), decimals.error().message.c_str());
    }

    void productReductions()
    {
        // prod over dim 1 (kept), and over every element; a dtype conversion is refused by name.
        const Shape s{2, 3, 4};
        const Pattern dim = recogniseOk({node("aten::prod", {"%x.1", "%2", "%3", "%4"}, {"%5"}, {s, {}, {}, {}},
                                              {{2, 1, 4}}, {nullptr, 1, true, nullptr})},
                                        problemWith(false, "[2, 1, 4]"));
        QCOMPARE(QString::fromStdString(toString(dim.kind)), QString("reduce"));
        QCOMPARE(dim.reduceOp, std::string("prod"));
        QCOMPARE(dim.row.len, std::int64_t(3));
        const Pattern all = recogniseOk({node("aten::prod", {"%x.1", "%2"}, {"%3"}, {s, {}}, {{}}, {nullptr, nullptr})},
                                        problemWith(false, "[]"));
        QCOMPARE(all.row.len, std::int64_t(2 * 3 * 4));
        QVERIFY(emitReduction(all).find("a * b") != std::string::npos);
        auto cast = recognise({node("aten::prod", {"%x.1", "%2"}, {"%3"}, {s, {}}, {{}}, {nullptr, 7})},
                              problemWith(false, "[]"));
        QVERIFY(!cast);
        QVERIFY2(QString::fromStdString(cast.error().message).contains("dtype"), cast.error().message.c_str());
    }

    // F.kl_div's batchmean divides the sum by input.size()[0]: the whole size as a list, then its
    // element; a number the graph does not give (the length of an unknown list) stops it by name
    // instead of being taken for None and replaced by a default.
    void sizesOfTheInputAsNumbers()
    {
        const Shape s{2, 3, 4};
        auto graph = [&](const std::string &listOp) {
            return std::vector<OpNode>{
                node("aten::sum", {"%x.1", "%2"}, {"%3"}, {s, {}}, {{}}, {nullptr, nullptr}),
                listOp == "size" ? node("aten::size", {"%x.1"}, {"%4"}, {s}, {{}}, {nullptr})
                                 : node("prim::ListConstruct", {"%9"}, {"%4"}, {{}}, {{}}, {nullptr}),
                node(listOp == "size" ? "aten::__getitem__" : "aten::len", {"%4", "%5"}, {"%6"}, {{}, {}}, {{}},
                     {nullptr, -1}),
                node("aten::div", {"%3", "%6"}, {"%7"}, {{}, {}}, {{}}, {nullptr, nullptr})};
        };
        const Pattern mean = recogniseOk(graph("size"), problemWith(false, "[]"));
        QCOMPARE(QString::fromStdString(mean.summary()), QString("sum over all elements of x [2, 3, 4], then acc / 4"));
        auto unknown = recognise(graph("list"), problemWith(false, "[]"));
        QVERIFY(!unknown);
        QVERIFY2(QString::fromStdString(unknown.error().message).contains("aten::div with a number the reference computes"),
                 unknown.error().message.c_str());
    }

    void unsupportedOpsAreNamed_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("message");
        QTest::newRow("sort") << "aten::sort"
                              << "aten::sort";
        QTest::newRow("softmax then sum") << "softmax+sum"
                                          << "aten::sum after aten::softmax";
        QTest::newRow("tuple") << "tuple"
                               << "tuple";
        // A graph the worker did not run has no recorded shapes: the view of an unknown op's
        // value has none to work from (a dim past the end once crashed the recogniser).
        QTest::newRow("unsqueeze of an unknown op") << "select+unsqueeze"
                                                    << "aten::select";
        QTest::newRow("flatten of an unknown op") << "select+flatten"
                                                  << "aten::select";
        // x > 0.1 differs in float and in double at x = 0.1f; x > 0.25 would not.
        QTest::newRow("comparison with 0.1") << "gt 0.1"
                                             << "does not hold exactly";
    }

    void unsupportedOpsAreNamed()
    {
        QFETCH(QString, op);
        QFETCH(QString, message);
        std::vector<OpNode> g;
        if (op == "softmax+sum") {
            g = {node("aten::softmax", {"%x.1", "%2", "%3"}, {"%4"}, {{2, 3, 4}, {}, {}}, {{2, 3, 4}},
                      {nullptr, -1, nullptr}),
                 node("aten::sum", {"%4", "%5", "%7", "%8"}, {"%6"}, {{2, 3, 4}, {}, {}, {}}, {{2, 3}},
                      {nullptr, {-1}, false, nullptr})};
        } else if (op.startsWith("select+")) {
            const bool unsqueeze = op.endsWith("unsqueeze");
            g = {node("aten::select", {"%x.1", "%2", "%3"}, {"%4"}, {{}, {}, {}}, {{}}, {nullptr, 1, 0}),
                 unsqueeze ? node("aten::unsqueeze", {"%4", "%5"}, {"%6"}, {{}, {}}, {{}}, {nullptr, 1})
                           : node("aten::flatten", {"%4", "%5", "%7"}, {"%6"}, {{}, {}, {}}, {{}}, {nullptr, 1, 2}),
                 node("aten::relu", {"%6"}, {"%8"}, {{}}, {{}}, {nullptr})};
        } else if (op == "gt 0.1") {
            g = {node("aten::gt", {"%x.1", "%2"}, {"%3"}, {{2, 3, 4}, {}}, {{2, 3, 4}}, {nullptr, 0.1}),
                 node("aten::mul", {"%x.1", "%3"}, {"%4"}, {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}}, {nullptr, nullptr})};
        } else if (op == "tuple") {
            g = {node("aten::relu", {"%x.1"}, {"%2"}, {{2, 3, 4}}, {{2, 3, 4}}, {nullptr}),
                 node("aten::tanh", {"%x.1"}, {"%3"}, {{2, 3, 4}}, {{2, 3, 4}}, {nullptr}),
                 node("prim::TupleConstruct", {"%2", "%3"}, {"%4"}, {{2, 3, 4}, {2, 3, 4}}, {{}}, {nullptr, nullptr})};
        } else {
            g = {node(op.toStdString(), {"%x.1", "%2", "%3"}, {"%4"}, {{2, 3, 4}, {}, {}}, {{2, 3, 4}},
                      {nullptr, 1, nullptr})};
        }
        auto r = recognise(g, problemWith(false, "[2, 3, 4]"));
        QVERIFY(!r);
        QCOMPARE(QString::fromStdString(toString(r.error().code)), QString("unsupported"));
        QVERIFY2(QString::fromStdString(r.error().message).contains(message), r.error().message.c_str());
        if (op != "tuple")
            QVERIFY2(QString::fromStdString(r.error().message).contains("LLM"), r.error().message.c_str());
    }

    void outputShapeMustAgree()
    {
        std::vector<OpNode> g{node("aten::relu", {"%x.1"}, {"%2"}, {{2, 3, 4}}, {{2, 3, 4}}, {nullptr})};
        auto r = recognise(g, problemWith(false, "[5]"));
        QVERIFY(!r);
        QVERIFY(QString::fromStdString(r.error().message).contains("[2, 3, 4]"));
    }
};

QTEST_GUILESS_MAIN(TestBuiltinPattern)
#include "test_pattern.moc"
