// The matrix-product and convolution ideas of the catalogue: which problems they take (and why not
// the others), their epilogues, every point of their spaces rendered, parsed, resolved and compiled
// with NVRTC for sm_90a without spills (no GPU needed), and how the generator proposes them: fp32
// first, then the 3xTF32 split; TF32 and FP16 products only under the loose policy.
#include "gen/builtin/builtin_generator.h"
#include "gen/builtin/catalogue.h"
#include "gen/builtin/codegen.h"
#include "gen/builtin/pattern.h"
#include "gen/builtin/planner.h"
#include "kernel/candidate.h"
#include "support.h"
#include "worker/compiler.h"

#include <QtTest>

#include <algorithm>
#include <set>

using namespace kf;
using namespace kf::builtin;

namespace {

const std::set<std::string> kLooseOnly{"gemm_mma_tf32", "gemm_mma_fp16", "conv_implicit_gemm_tf32"};

bool isCompute(const IdeaDef &d) { return d.forKind(PatternKind::Matmul) || d.forKind(PatternKind::Conv); }

bool isGemv(const std::string &idea) { return idea == "gemv_dot" || idea == "gemv_stream"; }

template <typename T>
std::string errorOf(const Result<T> &r)
{
    return r.ok() ? std::string() : r.error().text();
}

Target targetOf(const QString &name, Policy policy, const std::string &variant = {})
{
    static std::map<std::string, Problem> problems; // Target keeps a pointer to its problem
    const std::string key = name.toStdString() + "@" + variant;
    if (!problems.count(key))
        problems[key] = test::shippedProblem(name, variant);
    const Problem &problem = problems[key];
    auto p = recognise(test::shippedGraph(name), problem);
    if (!p)
        qFatal("%s: %s", qPrintable(name), p.error().text().c_str());
    return makeTarget(*p, problem, 132, 9, policy);
}

// A problem of tests/builtin/data/problems (the skinny products, the epilogues on the Hopper paths).
Target ownTarget(const QString &name, Policy policy, const std::string &variant = {})
{
    static std::map<std::string, Problem> problems;
    const std::string key = name.toStdString() + "@" + variant;
    if (!problems.count(key))
        problems[key] = test::ownProblem(name, variant);
    const Problem &problem = problems[key];
    auto p = recognise(test::ownGraph(name), problem);
    if (!p)
        qFatal("%s: %s", qPrintable(name), p.error().text().c_str());
    return makeTarget(*p, problem, 132, 9, policy);
}

GenContext contextOf(const QString &name, Policy policy)
{
    GenContext ctx = test::contextFor(test::shippedProblem(name), test::shippedGraph(name));
    ctx.policy = policy;
    return ctx;
}

Precision precisionOf(const std::string &idea, const Point &p)
{
    if (idea == "gemm_tiled_fp32" || idea == "conv_direct" || isGemv(idea))
        return Precision::FP32;
    if (idea == "gemm_mma_fp16" || idea == "gemm_wgmma_fp16" || idea == "conv_wgmma_slab_fp16")
        return Precision::FP16;
    if (idea == "conv_wgmma_slab_bf16x3")
        return Precision::BF16x3;
    if (idea == "gemm_mma_tf32" || idea == "conv_implicit_gemm_tf32")
        return Precision::TF32;
    if (idea == "gemm_wgmma_tf32")
        return Precision::TF32;
    if ((idea == "conv_implicit_gemm_pool" || idea == "conv_wgmma" || idea == "conv_wgmma_pool" ||
         idea == "conv_wgmma_regs" || idea == "conv_wgmma_regs_pool") &&
        p.at("SPLIT") == 1)
        return Precision::TF32;
    return Precision::TF32x3;
}

// Sizes off every multiple of 4 (4-byte copies, partial tiles): a batched product, and a linear
// layer whose weight is stored [N, K], through addmm with alpha and beta.
struct Odd {
    Problem problem;
    std::vector<OpNode> graph;
};

const Odd &odd(const std::string &which)
{
    static const std::map<std::string, Odd> all = [] {
        auto toml = [](const std::string &name, const std::string &tensors, const std::string &args) {
            return "name = \"" + name + "\"\ndescription = \"edge sizes\"\n" + tensors +
                "[reference]\nsource = '''\ndef forward(" + args + ") -> Tensor:\n    return out\n'''\n";
        };
        std::map<std::string, Odd> m;
        m["bmm"] = {test::problemFromToml(toml("odd_bmm",
                                               "[[inputs]]\nname = \"A\"\nshape = [3, 33, 38]\n"
                                               "[[inputs]]\nname = \"B\"\nshape = [3, 38, 21]\n"
                                               "[[outputs]]\nname = \"out\"\nshape = [3, 33, 21]\n",
                                               "A: Tensor, B: Tensor")),
                    {test::node("aten::bmm", {"%A.1", "%B.1"}, {"%2"}, {{3, 33, 38}, {3, 38, 21}}, {{3, 33, 21}},
                                {nullptr, nullptr})}};
        m["addmm"] = {
            test::problemFromToml(toml("odd_addmm",
                                       "[[inputs]]\nname = \"x\"\nshape = [77, 37]\n"
                                       "[[params]]\nname = \"weight\"\nshape = [41, 37]\n"
                                       "[[params]]\nname = \"bias\"\nshape = [41]\nfan_in = \"37\"\n"
                                       "[[outputs]]\nname = \"out\"\nshape = [77, 41]\n",
                                       "x: Tensor, weight: Tensor, bias: Tensor")),
            {test::node("aten::t", {"%weight.1"}, {"%2"}, {{41, 37}}, {{37, 41}}, {nullptr}),
             test::node("aten::addmm", {"%bias.1", "%x.1", "%2", "%3", "%4"}, {"%5"},
                        {{41}, {77, 37}, {37, 41}, {}, {}}, {{77, 41}}, {nullptr, nullptr, nullptr, 0.5, 2.0}),
             test::node("aten::tanh", {"%5"}, {"%6"}, {{77, 41}}, {{77, 41}}, {nullptr})}};
        return m;
    }();
    return all.at(which);
}

Target oddTarget(const std::string &which)
{
    const Odd &o = odd(which);
    auto p = recognise(o.graph, o.problem);
    if (!p)
        qFatal("%s: %s", which.c_str(), p.error().text().c_str());
    return makeTarget(*p, o.problem, 132, 9, Policy::Loose);
}

std::string epilogueOf(const std::string &idea, const QString &problem)
{
    const Target t = targetOf(problem, Policy::Loose);
    const IdeaDef *d = findIdea(idea);
    return d->values(t, validPoints(*d, t).front()).at("EPILOGUE");
}

} // namespace

class TestBuiltinCompute : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useSourceTemplates(); }

    void ideasAreInTheCatalogue()
    {
        for (const char *id : {"gemm_tiled_fp32", "gemm_mma_tf32x3", "gemm_mma_tf32", "gemm_mma_fp16",
                               "conv_implicit_gemm_tf32x3", "conv_implicit_gemm_tf32", "conv_implicit_gemm_pool",
                               "gemm_wgmma_tf32x3", "gemm_wgmma_tf32", "gemm_wgmma_fp16", "conv_wgmma",
                               "conv_wgmma_pool", "conv_wgmma_regs", "conv_wgmma_regs_pool", "conv_direct"}) {
            const IdeaDef *d = findIdea(id);
            QVERIFY2(d, id);
            QVERIFY(isCompute(*d));
            QVERIFY(!d->space.empty() && d->check);
        }
        QCOMPARE(findIdea("gemm_tiled_fp32")->title, std::string("Shared-memory tiles with register tiling (fp32)"));
        QVERIFY(findIdea("gemm_tiled_fp32")->needs.empty());
        QCOMPARE(findIdea("gemm_mma_tf32x3")->needs, std::vector<std::string>{"gemm_tiled_fp32"});
    }

    void appliesTo_data()
    {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("idea");
        QTest::newRow("matmul") << "seed/matmul"
                                << "gemm_tiled_fp32";
        QTest::newRow("tall-skinny") << "level1/matmul_tall_skinny"
                                     << "gemm_tiled_fp32";
        QTest::newRow("bmm") << "level1/bmm"
                             << "gemm_mma_tf32x3";
        QTest::newRow("linear") << "level1/linear_bias_relu"
                                << "gemm_tiled_fp32";
        QTest::newRow("linear gelu") << "level2/linear_gelu"
                                     << "gemm_mma_tf32x3";
        QTest::newRow("gemm scale") << "level2/gemm_scale_sigmoid"
                                    << "gemm_tiled_fp32";
        QTest::newRow("conv2d") << "seed/conv2d"
                                << "conv_implicit_gemm_tf32x3";
        QTest::newRow("conv 3x3") << "level1/conv2d_3x3"
                                  << "conv_implicit_gemm_tf32x3";
        QTest::newRow("conv 1x1") << "level1/conv2d_pointwise"
                                  << "conv_implicit_gemm_tf32x3";
        QTest::newRow("conv relu") << "level2/conv2d_bias_relu"
                                   << "conv_implicit_gemm_tf32x3";
        QTest::newRow("conv bn") << "level2/conv2d_batchnorm_relu"
                                 << "conv_implicit_gemm_tf32x3";
        QTest::newRow("conv pool") << "seed/conv2d_relu_maxpool"
                                   << "conv_implicit_gemm_pool";
    }

    // Each problem is taken under the strict policy by its strict idea, and the generator supports it.
    void appliesTo()
    {
        QFETCH(QString, problem);
        QFETCH(QString, idea);
        const Target t = targetOf(problem, Policy::Strict);
        const std::string why = findIdea(idea.toStdString())->whyNot(t);
        QVERIFY2(why.empty(), why.c_str());
        const Status st = makeBuiltinGenerator()->supports(contextOf(problem, Policy::Strict));
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().text().c_str());
    }

    void limitsAreNamed()
    {
        // Loose-only ideas say so under the strict policy.
        Target t = targetOf("seed/matmul", Policy::Strict);
        QVERIFY(QString::fromStdString(findIdea("gemm_mma_tf32")->whyNot(t)).contains("loose"));
        QVERIFY(QString::fromStdString(findIdea("gemm_mma_fp16")->whyNot(t)).contains("loose"));
        QVERIFY(findIdea("gemm_mma_tf32")->whyNot(targetOf("seed/matmul", Policy::Loose)).empty());
        // The plain convolution does not take a pooled one, nor the fused pooling a plain one.
        QVERIFY(!findIdea("conv_implicit_gemm_tf32x3")
                     ->whyNot(targetOf("seed/conv2d_relu_maxpool", Policy::Strict))
                     .empty());
        QVERIFY(!findIdea("conv_implicit_gemm_pool")->whyNot(targetOf("seed/conv2d", Policy::Strict)).empty());
        // The fp16 loads need rows of a multiple of 4 floats.
        QVERIFY(
            QString::fromStdString(findIdea("gemm_mma_fp16")->whyNot(oddTarget("bmm"))).contains("parameter space"));
        // A convolution of 1, 2 or 3 dims with groups 1, dilated or not, is the tensor-core ideas' alone
        // (from 16 output channels); a grouped one the direct idea's, and a transposed one the direct
        // idea's, the mma.sync implicit GEMMs' and conv_wgmma_regs'.
        for (const char *own : {"conv1d_dilated_relu", "conv3d_relu", "conv2d_dilated_strided"}) {
            const Target other = ownTarget(own, Policy::Strict, "");
            QVERIFY(QString::fromStdString(findIdea("conv_direct")->whyNot(other)).contains("implicit GEMM"));
            for (const char *id : {"conv_implicit_gemm_tf32x3", "conv_wgmma", "conv_wgmma_regs"})
                QVERIFY2(findIdea(id)->whyNot(other).empty(), (std::string(own) + ": " + id).c_str());
            // At four output channels a tensor-core tile is mostly padding: the direct idea applies too.
            QVERIFY(findIdea("conv_direct")->whyNot(ownTarget(own, Policy::Strict, "small")).empty());
        }
        for (const char *own : {"conv_transpose2d_tanh", "conv_depthwise"}) {
            const Target other = ownTarget(own, Policy::Strict, "");
            QVERIFY(findIdea("conv_direct")->whyNot(other).empty());
            QVERIFY(QString::fromStdString(findIdea("conv_wgmma")->whyNot(other)).contains("the direct convolution"));
        }
        QVERIFY(
            QString::fromStdString(findIdea("conv_wgmma_regs")->whyNot(ownTarget("conv_depthwise", Policy::Strict, "")))
                .contains("the direct convolution"));
        // A transposed convolution of groups 1 goes to the mma.sync implicit GEMM and to the wgmma
        // one with its operand in registers too, phase by phase; a grouped one does not.
        for (const char *id : {"conv_implicit_gemm_tf32x3", "conv_wgmma_regs"})
            for (const char *own : {"conv_transpose2d_tanh", "conv_transpose3d_scale_relu", "conv_transpose1d_dilated"})
                QVERIFY2(findIdea(id)->whyNot(ownTarget(own, Policy::Strict, "")).empty(),
                         (std::string(own) + ": " + id).c_str());
        QVERIFY(
            QString::fromStdString(
                findIdea("conv_implicit_gemm_tf32x3")->whyNot(ownTarget("conv_transpose3d_groups", Policy::Strict, "")))
                .contains("groups = 2"));
        t = targetOf("seed/conv2d", Policy::Strict);
        t.pattern.conv->groups = 3;
        QVERIFY(QString::fromStdString(findIdea("conv_implicit_gemm_tf32x3")->whyNot(t)).contains("groups = 3"));
        // Two products in one graph are taken, each written to its buffer; a tail that no idea
        // computes is named (here, a tail made a matrix product of no products).
        QVERIFY(makeBuiltinGenerator()->supports(contextOf("level2/swiglu", Policy::Strict)).ok());
        t = targetOf("level2/softmax_scaled_scores", Policy::Strict);
        Pattern tail = *t.pattern.tail;
        tail.kind = PatternKind::Matmul;
        t.pattern.tail = std::make_shared<const Pattern>(tail);
        QVERIFY2(QString::fromStdString(findIdea("gemm_tiled_fp32")->whyNot(t)).contains("no idea computes"),
                 findIdea("gemm_tiled_fp32")->whyNot(t).c_str());
    }

    void epilogues()
    {
        QCOMPARE(epilogueOf("gemm_tiled_fp32", "seed/matmul"), std::string("acc"));
        QCOMPARE(epilogueOf("gemm_mma_tf32x3", "level1/bmm"), std::string("acc"));
        QCOMPARE(epilogueOf("gemm_tiled_fp32", "level1/linear_bias_relu"),
                 std::string("fmaxf((acc + __ldg(bias + col)), 0.0f)"));
        QCOMPARE(epilogueOf("conv_implicit_gemm_tf32x3", "seed/conv2d"), std::string("acc + __ldg(bias + col)"));
        QCOMPARE(epilogueOf("conv_implicit_gemm_pool", "seed/conv2d_relu_maxpool"),
                 std::string("fmaxf((acc + __ldg(bias + col)), 0.0f)"));
        // addmm's alpha scales the product, its beta the bias.
        {
            const Target t = oddTarget("addmm");
            const IdeaDef *d = findIdea("gemm_tiled_fp32");
            QCOMPARE(d->values(t, validPoints(*d, t).front()).at("EPILOGUE"),
                     std::string("tanhf(((acc * 2.0f) + (__ldg(bias + col) * 0.5f)))"));
        }
        // Batch-norm parameters are per channel: read at col.
        const std::string bn = epilogueOf("conv_implicit_gemm_tf32x3", "level2/conv2d_batchnorm_relu");
        for (const char *p : {"__ldg(running_mean + col)", "__ldg(running_var + col)", "__ldg(bn_weight + col)",
                              "__ldg(bn_bias + col)"})
            QVERIFY2(bn.find(p) != std::string::npos, bn.c_str());

        // Leaves indexed through the segments: a full-shape operand, a per-row one, and one named
        // like a kernel parameter of the template.
        EwProgram p;
        p.shape = {2, 3, 5};
        p.leaves = {Leaf{"res", {2, 3, 5}, {2, 3, 5}}, Leaf{"rowscale", {3, 1}, {3, 1}}, Leaf{"A", {5}, {5}}};
        p.steps = {{"add", {EwArg::acc(0), EwArg::leaf(0)}, "aten::add"},
                   {"mul", {EwArg::step(0), EwArg::leaf(1)}, "aten::mul"},
                   {"sub", {EwArg::step(1), EwArg::leaf(2)}, "aten::sub"}};
        p.result = EwArg::step(2);
        const std::vector<IndexSegment> index{{1, 5, "col"}, {5, 6, "((long long)batch * 3 + row)"}};
        const EpilogueCode e = emitEpilogue(p, index, {"A", "B", "C", "batch"});
        QVERIFY2(e.expr.find("__ldg(res + ((long long)((long long)batch * 3 + row) * 5 + col))") != std::string::npos,
                 e.expr.c_str());
        QVERIFY2(e.expr.find("__ldg(rowscale + (((long long)batch * 3 + row) % 3))") != std::string::npos,
                 e.expr.c_str());
        QVERIFY2(e.expr.find("__ldg(A_ + col)") != std::string::npos, e.expr.c_str());
        QCOMPARE(e.params,
                 std::string(", const float *__restrict__ res, const float *__restrict__ rowscale, "
                             "const float *__restrict__ A_"));
        QCOMPARE(e.args, std::string(", res, rowscale, A"));

        // A value used twice is computed once, in a lambda called in place.
        EwProgram twice;
        twice.shape = {4, 4};
        twice.steps = {{"sigmoid", {EwArg::acc(0)}, "aten::sigmoid"},
                       {"mul", {EwArg::step(0), EwArg::step(0)}, "aten::mul"}};
        twice.result = EwArg::step(1);
        const std::string expr = emitEpilogue(twice, {{1, 4, "col"}, {4, 4, "row"}}, {}).expr;
        QVERIFY2(expr.rfind("[&] {", 0) == 0 && expr.find("return t1; }()") != std::string::npos, expr.c_str());

        // A division by a number is a product with its float reciprocal, as PyTorch's CUDA kernel
        // computes it; a division by a tensor, or by a number whose reciprocal float32 cannot hold
        // as a normal number, stays a division.
        EwProgram divided;
        divided.shape = {4, 4};
        divided.leaves = {Leaf{"scale", {4, 4}, {4, 4}}};
        divided.steps = {{"div", {EwArg::acc(0), EwArg::scalar(0.7)}, "aten::div"},
                         {"div", {EwArg::step(0), EwArg::leaf(0)}, "aten::div"},
                         {"div", {EwArg::step(1), EwArg::scalar(1e38)}, "aten::div"}};
        divided.result = EwArg::step(2);
        const std::string quotient = emitEpilogue(divided, {{1, 4, "col"}, {4, 4, "row"}}, {}).expr;
        QVERIFY2(quotient.find("acc * 1.42857146f") != std::string::npos, quotient.c_str());
        QVERIFY2(quotient.find(") / __ldg(scale_ + ") != std::string::npos, quotient.c_str());
        QVERIFY2(quotient.find(") / 1e+38f") != std::string::npos, quotient.c_str());
    }

    void rendersAndCompiles_data()
    {
        QTest::addColumn<QString>("idea");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<bool>("everyPoint");
        const std::vector<std::pair<const char *, std::vector<const char *>>> plan{
            {"gemm_tiled_fp32", {"seed/matmul", "level1/linear_bias_relu", "level1/bmm"}},
            {"gemm_mma_tf32x3", {"seed/matmul", "level2/gemm_scale_sigmoid", "level1/bmm"}},
            {"gemm_mma_tf32", {"seed/matmul", "level2/linear_gelu", "level1/matmul_tall_skinny"}},
            {"gemm_mma_fp16", {"seed/matmul", "level1/linear_bias_relu", "level1/bmm"}},
            {"conv_implicit_gemm_tf32x3", {"seed/conv2d", "level1/conv2d_pointwise", "level2/conv2d_batchnorm_relu"}},
            {"conv_implicit_gemm_tf32", {"seed/conv2d", "level1/conv2d_3x3", "level2/conv2d_bias_relu"}},
        };
        for (const auto &[idea, problems] : plan)
            for (std::size_t i = 0; i < problems.size(); ++i)
                QTest::newRow(qPrintable(QString("%1 %2").arg(idea, problems[i])))
                    << QString(idea) << QString(problems[i]) << QString() << true;
        // One shipped problem pools after its convolution: the full size and the small variant.
        QTest::newRow("conv_implicit_gemm_pool seed") << "conv_implicit_gemm_pool"
                                                      << "seed/conv2d_relu_maxpool" << QString() << true;
        QTest::newRow("conv_implicit_gemm_pool seed@small") << "conv_implicit_gemm_pool"
                                                            << "seed/conv2d_relu_maxpool"
                                                            << "small" << true;
        for (const char *idea : {"gemm_tiled_fp32", "gemm_mma_tf32x3", "gemm_mma_tf32"})
            for (const char *which : {"odd/bmm", "odd/addmm"})
                QTest::newRow(qPrintable(QString("%1 %2").arg(idea, which)))
                    << QString(idea) << QString(which) << QString() << true;
        QTest::newRow("gemm_wgmma_tf32x3 seed") << "gemm_wgmma_tf32x3"
                                                << "seed/matmul" << QString() << true;
        QTest::newRow("gemm_wgmma_tf32 seed") << "gemm_wgmma_tf32"
                                              << "seed/matmul" << QString() << false;
        QTest::newRow("gemm_wgmma_fp16 seed") << "gemm_wgmma_fp16"
                                              << "seed/matmul" << QString() << true;
        for (const char *idea : {"gemm_wgmma_tf32x3", "gemm_wgmma_fp16"})
            for (const char *which : {"odd/bmm", "odd/addmm"})
                QTest::newRow(qPrintable(QString("%1 %2").arg(idea, which)))
                    << QString(idea) << QString(which) << QString() << false;
        QTest::newRow("conv_wgmma seed") << "conv_wgmma"
                                         << "seed/conv2d" << QString() << true;
        QTest::newRow("conv_wgmma 3x3") << "conv_wgmma"
                                        << "level1/conv2d_3x3" << QString() << false;
        QTest::newRow("conv_wgmma_pool seed") << "conv_wgmma_pool"
                                              << "seed/conv2d_relu_maxpool" << QString() << false;
        QTest::newRow("conv_wgmma_pool seed@small") << "conv_wgmma_pool"
                                                    << "seed/conv2d_relu_maxpool"
                                                    << "small" << false;
        QTest::newRow("conv_wgmma_regs seed") << "conv_wgmma_regs"
                                              << "seed/conv2d" << QString() << true;
        QTest::newRow("conv_wgmma_regs 3x3") << "conv_wgmma_regs"
                                             << "level1/conv2d_3x3" << QString() << false;
        // 18 K steps: the 32-step chunk and the separate-sum points both occur.
        QTest::newRow("conv_wgmma_regs 3x3 deep") << "conv_wgmma_regs"
                                                  << "level2/conv2d_bias_relu" << QString() << true;
        QTest::newRow("conv_wgmma_regs_pool seed") << "conv_wgmma_regs_pool"
                                                   << "seed/conv2d_relu_maxpool" << QString() << false;
        QTest::newRow("conv_wgmma_regs_pool seed@small") << "conv_wgmma_regs_pool"
                                                         << "seed/conv2d_relu_maxpool"
                                                         << "small" << false;
        // The slab convolutions: every point on the seed conv, the pooling pass at the small size,
        // 1-D ones (one output row a tile, odd padding) and a padded max pooling.
        for (const char *idea : {"conv_wgmma_slab_bf16x3", "conv_wgmma_slab_fp16"}) {
            QTest::newRow(qPrintable(QString("%1 seed").arg(idea)))
                << QString(idea) << "seed/conv2d" << QString() << true;
            QTest::newRow(qPrintable(QString("%1 seed pool@small").arg(idea)))
                << QString(idea) << "seed/conv2d_relu_maxpool"
                << "small" << true;
            for (const char *own : {"conv1d_dilated_relu", "conv_maxpool_padded"})
                QTest::newRow(qPrintable(QString("%1 %2").arg(idea, own)))
                    << QString(idea) << QString("own/") + own << QString() << false;
        }
        QTest::newRow("conv_wgmma_slab_fp16 conv1d_same") << "conv_wgmma_slab_fp16"
                                                          << "own/conv1d_same" << QString() << false;
        QTest::newRow("gemm_tiled_fp32 matmul@small") << "gemm_tiled_fp32"
                                                      << "seed/matmul"
                                                      << "small" << false;
        QTest::newRow("gemm_mma_tf32x3 matmul_mish_mish@small") << "gemm_mma_tf32x3"
                                                                << "own/matmul_mish_mish"
                                                                << "small" << false;
        QTest::newRow("conv_implicit_gemm_tf32x3 conv@small") << "conv_implicit_gemm_tf32x3"
                                                              << "seed/conv2d"
                                                              << "small" << false;
        // Matrix-vector products at full size and at odd small sizes (4-byte loads); every point
        // where registers are tightest (eight vectors with 16-byte loads) and on the 4-byte path.
        for (const auto &[idea, problem] :
             std::vector<std::pair<const char *, const char *>>{{"gemv_dot", "gemv"},
                                                                {"gemv_dot", "bmv"},
                                                                {"gemv_dot", "linear_small_batch"},
                                                                {"gemv_stream", "vecmat"}})
            for (const char *variant : {"", "small"}) {
                const bool every = (QString(problem) == "linear_small_batch" && !*variant) ||
                    (QString(problem) == "gemv" && *variant) || QString(idea) == "gemv_stream";
                QTest::newRow(qPrintable(QString("%1 %2@%3").arg(idea, problem, variant)))
                    << QString(idea) << QString("own/") + problem << QString(variant) << every;
            }
        // Elementwise epilogues on the tensor-core paths: two Mish after a linear layer on wgmma,
        // ReLU then a per-channel bias after a convolution on each convolution template.
        for (const char *idea : {"gemm_wgmma_tf32x3", "gemm_mma_tf32x3", "gemm_tiled_fp32"})
            QTest::newRow(qPrintable(QString("%1 matmul_mish_mish").arg(idea)))
                << QString(idea) << QString("own/matmul_mish_mish") << QString() << false;
        for (const char *idea : {"conv_wgmma", "conv_wgmma_regs", "conv_implicit_gemm_tf32x3"})
            QTest::newRow(qPrintable(QString("%1 conv_relu_biasadd").arg(idea)))
                << QString(idea) << QString("own/conv_relu_biasadd") << QString() << false;
        QTest::newRow("gemm_wgmma_tf32x3 bmm_large") << "gemm_wgmma_tf32x3"
                                                     << "own/bmm_large" << QString() << false;
        // Max pooling with padding over a convolution without an activation (negative maxima).
        for (const char *idea : {"conv_wgmma_pool", "conv_wgmma_regs_pool"})
            for (const char *variant : {"", "small"})
                QTest::newRow(qPrintable(QString("%1 conv_maxpool_padded@%2").arg(idea, variant)))
                    << QString(idea) << "own/conv_maxpool_padded" << QString(variant) << false;
        // Average pooling after a convolution: the wgmma ideas' pooling pass.
        for (const char *idea : {"conv_wgmma_pool", "conv_wgmma_regs_pool"})
            for (const char *variant : {"", "small"})
                QTest::newRow(qPrintable(QString("%1 conv_relu_avgpool@%2").arg(idea, variant)))
                    << QString(idea) << "own/conv_relu_avgpool" << QString(variant) << false;
        // Products with a tail: a row sum, an L2 norm and two products combined, each product
        // written to its buffer and the tail rendered by its own idea, in one file.
        for (const char *idea : {"gemm_wgmma_tf32x3", "gemm_mma_tf32x3", "gemm_tiled_fp32"})
            for (const char *problem : {"linear_sigmoid_sum", "bmm_tanh_l2norm", "matmul_two_products"})
                for (const char *variant : {"", "small"})
                    QTest::newRow(qPrintable(QString("%1 %2@%3").arg(idea, problem, variant)))
                        << QString(idea) << QString("own/") + problem << QString(variant) << false;
        // A convolution with a tail: a group norm after it, a sum after its pooling.
        for (const char *idea : {"conv_wgmma", "conv_wgmma_regs", "conv_implicit_gemm_tf32x3"})
            for (const char *variant : {"", "small"})
                QTest::newRow(qPrintable(QString("%1 conv_groupnorm@%2").arg(idea, variant)))
                    << QString(idea) << "own/conv_groupnorm" << QString(variant) << false;
        for (const char *idea : {"conv_wgmma_pool", "conv_wgmma_regs_pool"})
            for (const char *variant : {"", "small"})
                QTest::newRow(qPrintable(QString("%1 conv_avgpool_sigmoid_sum@%2").arg(idea, variant)))
                    << QString(idea) << "own/conv_avgpool_sigmoid_sum" << QString(variant) << false;
        // The implicit GEMM of 1-D, 3-D and dilated convolutions.
        for (const char *idea : {"conv_wgmma", "conv_wgmma_regs", "conv_implicit_gemm_tf32x3"})
            for (const char *own : {"conv1d_dilated_relu", "conv1d_same", "conv3d_relu", "conv2d_dilated_strided"})
                for (const char *variant : {"", "small"})
                    QTest::newRow(qPrintable(QString("%1 %2@%3").arg(idea, own, variant)))
                        << QString(idea) << QString("own/") + own << QString(variant) << false;
        // Transposed convolutions as one implicit GEMM per output phase: every tile of a 2-D one.
        for (const char *idea : {"conv_implicit_gemm_tf32x3", "conv_implicit_gemm_tf32", "conv_wgmma_regs"})
            for (const char *own : {"conv_transpose2d_tanh", "conv_transpose3d_scale_relu", "conv_transpose1d_dilated"})
                for (const char *variant : {"", "small"})
                    QTest::newRow(qPrintable(QString("%1 %2@%3").arg(idea, own, variant)))
                        << QString(idea) << QString("own/") + own << QString(variant)
                        << (QString(idea) != "conv_implicit_gemm_tf32" && QString(own) == "conv_transpose2d_tanh" &&
                            QString(variant).isEmpty());
        // The direct convolution: transposed, grouped, depthwise (and, with few output channels, any).
        for (const char *own :
             {"conv_depthwise", "conv_transpose2d_tanh", "conv_transpose3d_groups", "conv_grouped_dilated_maxpool"})
            for (const char *variant : {"", "small"})
                QTest::newRow(qPrintable(QString("conv_direct %1@%2").arg(own, variant)))
                    << "conv_direct" << QString("own/") + own << QString(variant) << true;
        for (const char *own : {"conv1d_dilated_relu", "conv3d_relu"})
            QTest::newRow(qPrintable(QString("conv_direct %1@small").arg(own)))
                << "conv_direct" << QString("own/") + own << QString("small") << true;
        // A long K: the product split into slices of K, summed by a third kernel.
        for (const char *variant : {"", "small"})
            QTest::newRow(qPrintable(QString("gemm_wgmma_tf32x3 matmul_large_k@%1").arg(variant)))
                << "gemm_wgmma_tf32x3"
                << "own/matmul_large_k" << QString(variant) << false;
    }

    // Every point of the seed problems (the first of the others) renders, parses with its
    // precision, resolves and compiles without spills.
    void rendersAndCompiles()
    {
        QFETCH(QString, idea);
        QFETCH(QString, problem);
        QFETCH(QString, variant);
        QFETCH(bool, everyPoint);
        const IdeaDef *def = findIdea(idea.toStdString());
        QVERIFY(def);
        const Target t = problem.startsWith("odd/") ? oddTarget(problem.mid(4).toStdString())
            : problem.startsWith("own/")            ? ownTarget(problem.mid(4), Policy::Loose, variant.toStdString())
                                                    : targetOf(problem, Policy::Loose, variant.toStdString());
        const std::string why = def->whyNot(t);
        QVERIFY2(why.empty(), why.c_str());
        std::vector<Point> points = validPoints(*def, t);
        QVERIFY(!points.empty());
        if (!everyPoint)
            points.resize(1);
        for (const Point &point : points) {
            const std::string where = def->id + " at " + pointText(point) + " for " + t.problem->name;
            auto source = renderIdea(*def, t, point);
            QVERIFY2(source.ok(), (where + ": " + errorOf(source)).c_str());
            QVERIFY2(source->find("{{") == std::string::npos, where.c_str());
            QVERIFY2(source->find("Built-in idea " + def->id + ": " + pointText(point)) != std::string::npos,
                     where.c_str());

            auto cand = parseCandidate(*source);
            QVERIFY2(cand.ok(), (where + ": " + errorOf(cand)).c_str());
            QCOMPARE(cand->problem, t.problem->name);
            QCOMPARE(toString(cand->precision), toString(precisionOf(def->id, point)));
            auto plan = resolveCandidate(*cand, *t.problem);
            QVERIFY2(plan.ok(), (where + ": " + errorOf(plan)).c_str());
            std::vector<std::string> kernels;
            for (const ResolvedLaunch &l : plan->launches) {
                kernels.push_back(l.kernel);
                for (auto g : l.grid)
                    QVERIFY2(g >= 1 && g < (1LL << 31), where.c_str());
                QVERIFY(l.block[0] * l.block[1] * l.block[2] <= 1024);
                QVERIFY2(l.smem <= 227 * 1024, where.c_str());
            }

            CompileOptions options;
            options.arch = "sm_90a";
            auto out = compileCuda(*source, kernels, options);
            QVERIFY2(out.ok(), (where + ": " + errorOf(out)).c_str());
            if (!out->ok)
                qWarning("%s\n%s\n%s", where.c_str(), out->log.c_str(), source->c_str());
            QVERIFY2(out->ok, where.c_str());
            for (const std::string &k : kernels) {
                QVERIFY2(out->resources.count(k), (where + ": no resources for " + k).c_str());
                const KernelResources &r = out->resources.at(k);
                QVERIFY2(r.spillStores == 0 && r.spillLoads == 0 && r.stackBytes == 0,
                         (where + ": " + k + " spills").c_str());
                QVERIFY2(r.registers > 0 && r.registers <= 255, where.c_str());
            }
            const Precision precision = precisionOf(def->id, point);
            const bool product = precision == Precision::FP32
                ? out->ptx.find("fma.rn.f32") != std::string::npos
                : out->ptx.find("mma.sync.aligned") != std::string::npos ||
                    out->ptx.find("wgmma.mma_async") != std::string::npos;
            QVERIFY2(product, where.c_str());
            if (precision == Precision::TF32x3)
                QVERIFY(out->ptx.find("cvt.rna.tf32.f32") != std::string::npos);
        }
    }

    // A product whose output has fewer tiles than the GPU has SMs splits K across blocks; one that
    // fills the GPU does not.
    void wgmmaSplitsALongK()
    {
        const IdeaDef *d = findIdea("gemm_wgmma_tf32x3");
        const Target longK = ownTarget("matmul_large_k", Policy::Strict);
        const Point p = validPoints(*d, longK).front();
        const int ksplit = std::stoi(d->values(longK, p).at("KSPLIT"));
        QVERIFY2(ksplit > 1 && ksplit <= 132, std::to_string(ksplit).c_str());
        auto source = renderIdea(*d, longK, p);
        QVERIFY(source.ok());
        QVERIFY(source->find("@launch splitk_combine") != std::string::npos);
        const Target square = targetOf("seed/matmul", Policy::Strict);
        QCOMPARE(d->values(square, validPoints(*d, square).front()).at("KSPLIT"), std::string("1"));
    }

    // Nothing measured: the simplest kernel of each pattern, so that what builds on it is judged
    // against a measurement. A short search (under kLadderSeconds left) starts the Hopper path next
    // to it; one with time to spare measures the steps below it first.
    void firstRoundForTheSeeds()
    {
        auto g = makeBuiltinGenerator();
        auto ids = [](const std::vector<Idea> &ideas) {
            std::set<std::string> out;
            for (const Idea &i : ideas)
                out.insert(i.id);
            return out;
        };
        auto firstRound = [&](const char *problem, std::optional<double> secondsLeft) {
            GenContext ctx = contextOf(problem, Policy::Strict);
            ctx.secondsLeft = secondsLeft;
            auto ideas = g->proposeIdeas(ctx, 4);
            if (!ideas.ok())
                qFatal("%s", errorOf(ideas).c_str());
            return ids(*ideas);
        };
        // A short search fills the matmul's first round with the four wgmma ideas (re-laid operands,
        // and A split in registers), the fp32 kernel waits for the next.
        QCOMPARE(firstRound("seed/matmul", 30),
                 (std::set<std::string>{"gemm_wgmma_tf32x3", "gemm_wgmma_bf16x3", "gemm_wgmma_tf32x3_regs",
                                        "gemm_wgmma_bf16x3_regs"}));
        QCOMPARE(firstRound("seed/matmul", std::nullopt), (std::set<std::string>{"gemm_tiled_fp32"}));
        // The convolutions have no fp32 template: the 3xTF32 implicit GEMM starts.
        // A short search fills its first round with the four wgmma ideas (the gathering, 3xbf16,
        // prepared-image and slab kernels); the implicit GEMM waits for the next.
        QCOMPARE(firstRound("seed/conv2d", 30),
                 (std::set<std::string>{"conv_wgmma", "conv_wgmma_bf16x3", "conv_wgmma_image_bf16x3",
                                        "conv_wgmma_slab_bf16x3"}));
        QCOMPARE(firstRound("seed/conv2d", 120), (std::set<std::string>{"conv_implicit_gemm_tf32x3"}));
        QCOMPARE(firstRound("seed/conv2d_relu_maxpool", 30),
                 (std::set<std::string>{"conv_wgmma_pool", "conv_wgmma_bf16x3", "conv_wgmma_image_bf16x3",
                                        "conv_wgmma_slab_bf16x3"}));
        QCOMPARE(firstRound("seed/conv2d_relu_maxpool", std::nullopt),
                 (std::set<std::string>{"conv_implicit_gemm_pool"}));

        GenContext ctx = contextOf("seed/conv2d_relu_maxpool", Policy::Strict);
        auto ideas = g->proposeIdeas(ctx, 4);
        QVERIFY2(ideas.ok(), errorOf(ideas).c_str());
        const auto pool =
            std::find_if(ideas->begin(), ideas->end(), [](const Idea &i) { return i.id == "conv_implicit_gemm_pool"; });
        auto drafts = g->implement(ctx, *pool, 10);
        QVERIFY2(drafts.ok(), errorOf(drafts).c_str());
        QCOMPARE(drafts->size(), std::size_t(3));
        for (const Draft &d : *drafts) {
            QCOMPARE(d.params.value("SPLIT", 0), 3);
            QVERIFY(d.source.find("// @precision tf32x3") != std::string::npos);
        }
    }

    void looseAdmitsReducedPrecision()
    {
        auto g = makeBuiltinGenerator();
        for (const char *id :
             {"gemm_mma_tf32", "gemm_mma_fp16", "gemm_wgmma_tf32", "gemm_wgmma_fp16", "conv_implicit_gemm_tf32"}) {
            const std::string problem = QString(id).startsWith("conv") ? "seed/conv2d" : "seed/matmul";
            QVERIFY2(findIdea(id)->whyNot(targetOf(QString::fromStdString(problem), Policy::Loose)).empty(), id);
            QVERIFY2(!findIdea(id)->whyNot(targetOf(QString::fromStdString(problem), Policy::Strict)).empty(), id);
        }

        // The pooling fused into the tiles offers both its splits under the loose policy.
        GenContext ctx = contextOf("seed/conv2d_relu_maxpool", Policy::Loose);
        auto ideas = g->proposeIdeas(ctx, 4);
        QVERIFY(ideas.ok());
        const auto pool =
            std::find_if(ideas->begin(), ideas->end(), [](const Idea &i) { return i.id == "conv_implicit_gemm_pool"; });
        QVERIFY(pool != ideas->end());
        auto drafts = g->implement(ctx, *pool, 10);
        QVERIFY(drafts.ok());
        std::set<int> splits;
        for (const Draft &d : *drafts)
            splits.insert(d.params.value("SPLIT", 0));
        QVERIFY(splits.count(1) && splits.count(3));
    }

    void strictSearchNeverUsesLooseIdeas_data()
    {
        QTest::addColumn<QString>("problem");
        for (const char *p : {"seed/matmul", "seed/conv2d", "seed/conv2d_relu_maxpool", "level1/linear_bias_relu",
                              "level2/conv2d_bias_relu"})
            QTest::newRow(p) << QString(p);
    }

    // Rounds of a scripted strict search: every idea and draft stays inside the strict tolerance
    // (fp32, or the 3xTF32 and 3xbf16 splits).
    void strictSearchNeverUsesLooseIdeas()
    {
        QFETCH(QString, problem);
        auto g = makeBuiltinGenerator();
        GenContext ctx = contextOf(problem, Policy::Strict);
        std::vector<KernelRecord> kernels;
        std::int64_t node = 1;
        for (int round = 1; round <= 4; ++round) {
            ctx.round = round;
            auto ideas = g->proposeIdeas(ctx, 3);
            QVERIFY2(ideas.ok(), errorOf(ideas).c_str());
            for (const Idea &idea : *ideas) {
                QVERIFY2(!kLooseOnly.count(catalogueId(idea.id)), idea.id.c_str());
                auto drafts = g->implement(ctx, idea, 2);
                QVERIFY2(drafts.ok(), errorOf(drafts).c_str());
                IdeaRecord rec;
                rec.node = node++;
                rec.round = round;
                rec.ideaId = idea.id;
                rec.parentNode = idea.parentNode;
                double ms = 10.0 / round;
                for (const Draft &d : *drafts) {
                    auto cand = parseCandidate(d.source);
                    QVERIFY2(cand.ok(), errorOf(cand).c_str());
                    QVERIFY2(cand->precision == Precision::FP32 || cand->precision == Precision::TF32x3 ||
                                 cand->precision == Precision::BF16x3,
                             d.title.c_str());
                    KernelRecord k;
                    k.node = node++;
                    k.ideaId = d.params.value("idea", "");
                    k.source = d.source;
                    k.params = d.params;
                    k.result.verdict = Verdict::Correct;
                    Timing timing;
                    timing.medianMs = ms;
                    ms *= 1.01;
                    k.result.timing = timing;
                    kernels.push_back(k);
                    ++rec.correct;
                    rec.bestMs = rec.bestMs > 0 ? std::min(rec.bestMs, timing.medianMs) : timing.medianMs;
                }
                ctx.tried.push_back(rec);
            }
            std::sort(kernels.begin(), kernels.end(), [](const KernelRecord &a, const KernelRecord &b) {
                return a.result.timing->medianMs < b.result.timing->medianMs;
            });
            ctx.topK.assign(kernels.begin(), kernels.begin() + std::min<std::size_t>(3, kernels.size()));
        }
        QVERIFY(!kernels.empty());
    }
};

QTEST_GUILESS_MAIN(TestBuiltinCompute)
#include "test_compute.moc"
