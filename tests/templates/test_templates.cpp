// The GEMM and convolution templates of resources/templates/: each renders by plain {{NAME}}
// substitution at a few parameter points (seed sizes and one level-1 size per family), parses as a
// candidate, resolves against its problem, and compiles with NVRTC for sm_90a without spills.
// Needs the CUDA toolkit but no GPU. Parameters come from the problem's tensor shapes, as the
// generator takes them.
#include "gen/builtin/catalogue.h"
#include "kernel/candidate.h"
#include "problem/problem.h"
#include "worker/compiler.h"

#include <QtTest>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace kf;

namespace {

using Params = std::map<std::string, std::string>;

std::string readFile(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A line holding only {{>NAME}} becomes parts/NAME.cuh, as the generator's loader does.
std::string readTemplate(const std::string &name)
{
    static const std::regex part(R"(\{\{>([A-Za-z0-9_]+)\}\}\n?)");
    std::string text = readFile(KF_SOURCE_DIR "/resources/templates/" + name);
    for (std::smatch m; std::regex_search(text, m, part);)
        text = m.prefix().str() + readFile(KF_SOURCE_DIR "/resources/templates/parts/" + m[1].str() + ".cuh") +
            m.suffix().str();
    return text;
}

// Sections ({{#NAME}} ... {{/NAME}}, {{^NAME}} ... {{/NAME}}) as the generator's renderer keeps or
// drops them, then plain substitution. Names without a value are returned in `missing`.
std::string render(const std::string &raw, const Params &params, std::set<std::string> &missing)
{
    static const std::regex section(R"(\{\{([#^])([A-Z0-9_]+)\}\}\n?([\s\S]*?)\{\{/\2\}\}\n?)");
    std::string text = raw;
    for (std::smatch m; std::regex_search(text, m, section);) {
        const auto v = params.find(m[2].str());
        const bool on = v != params.end() && !v->second.empty() && v->second != "0" && v->second != "false";
        text = m.prefix().str() + (on == (m[1].str() == "#") ? m[3].str() : std::string()) + m.suffix().str();
    }
    static const std::regex placeholder(R"(\{\{([A-Z0-9_]+)\}\})");
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), placeholder);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        out += text.substr(last, it->position() - last);
        const auto found = params.find((*it)[1].str());
        if (found == params.end())
            missing.insert((*it)[1].str());
        else
            out += found->second;
        last = it->position() + it->length();
    }
    return out + text.substr(last);
}

// "BM=128 BN=96" -> {BM: 128, BN: 96}
Params parseTiles(const QString &text)
{
    Params p;
    for (const QString &kv : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const auto parts = kv.split(QLatin1Char('='));
        p[parts[0].toStdString()] = parts.value(1).toStdString();
    }
    return p;
}

std::string num(std::int64_t v) { return std::to_string(v); }

const TensorSpec &tensorOf(const Problem &p, const std::string &name)
{
    const TensorSpec *t = p.tensor(name);
    if (!t)
        qFatal("problem %s has no tensor %s", p.name.c_str(), name.c_str());
    return *t;
}

// A [.., M, K] times B [.., K, N] (or [N, K] when transB), with an epilogue.
Params gemmParams(const Problem &p, const std::string &a, const std::string &b, bool transB,
                  const std::string &epilogue, const std::string &bias)
{
    const auto &as = tensorOf(p, a).shape, &bs = tensorOf(p, b).shape, &cs = tensorOf(p, "out").shape;
    const std::int64_t m = as[as.size() - 2], k = as.back();
    const std::int64_t n = transB ? bs[bs.size() - 2] : bs.back();
    const std::int64_t batch = as.size() == 3 ? as[0] : 1;
    Params r{{"M", num(m)},
             {"N", num(n)},
             {"K", num(k)},
             {"BATCH", num(batch)},
             {"A_BATCH_STRIDE", num(batch > 1 ? m * k : 0)},
             {"B_BATCH_STRIDE", num(batch > 1 ? k * n : 0)},
             {"C_BATCH_STRIDE", num(batch > 1 ? cs[cs.size() - 2] * cs.back() : 0)},
             {"TRANS_A", "false"},
             {"TRANS_B", transB ? "true" : "false"},
             {"A", a},
             {"B", b},
             {"OUT", "out"},
             {"GROUP_M", "8"},
             {"A_IMAGES", num(batch)},
             {"B_IMAGES", num(batch)},
             {"EPILOGUE", epilogue},
             {"KSPLIT", "1"},
             {"SPLITK", "0"},
             {"SUM_WORDS", "1"},
             {"COMBINE_GRID", "1"}};
    r["EPILOGUE_ARGS"] = bias.empty() ? "" : ", " + bias;
    r["EPILOGUE_PARAMS"] = bias.empty() ? "" : ", const float *__restrict__ " + bias;
    return r;
}

// x [B, C, H, W] (*) weight [K, C, R, S] -> conv [B, K, OH, OW] (then pooled into out when pooling).
Params convParams(const Problem &p, int stride, int pad, const std::string &epilogue, const std::string &bias,
                  int poolK = 0, int poolS = 0)
{
    const auto &x = tensorOf(p, "x").shape, &w = tensorOf(p, "weight").shape, &o = tensorOf(p, "out").shape;
    const std::int64_t oh = (x[2] + 2 * pad - w[2]) / stride + 1, ow = (x[3] + 2 * pad - w[3]) / stride + 1;
    Params r{{"BATCH", num(x[0])},
             {"IN_C", num(x[1])},
             {"IN_H", num(x[2])},
             {"IN_W", num(x[3])},
             {"OUT_C", num(w[0])},
             {"KH", num(w[2])},
             {"KW", num(w[3])},
             {"STRIDE_H", num(stride)},
             {"STRIDE_W", num(stride)},
             {"PAD_H", num(pad)},
             {"PAD_W", num(pad)},
             {"DIL_H", "1"},
             {"DIL_W", "1"},
             // A 2-D convolution is the 3-D one of depth 1.
             {"IN_D", "1"},
             {"KD", "1"},
             {"STRIDE_D", "1"},
             {"PAD_D", "0"},
             {"DIL_D", "1"},
             {"OUT_D", "1"},
             {"OUT_H", num(oh)},
             {"OUT_W", num(ow)},
             // Not transposed: one phase, the GEMM of every output pixel and tap.
             {"TRANSPOSED", "false"},
             {"PHASES", "1"},
             {"ROWS_M", num(x[0] * oh * ow)},
             {"TAPS_K", num(x[1] * w[2] * w[3])},
             {"TAP_BYTES", "8"},
             {"X", "x"},
             {"WEIGHT", "weight"},
             {"OUT", "out"},
             {"EPILOGUE", epilogue}};
    r["EPILOGUE_ARGS"] = bias.empty() ? "" : ", " + bias;
    r["EPILOGUE_PARAMS"] = bias.empty() ? "" : ", const float *__restrict__ " + bias;
    if (poolK) {
        r["POOL_KH"] = r["POOL_KW"] = num(poolK);
        r["POOL_SH"] = r["POOL_SW"] = num(poolS);
        r["POOL_PAD_H"] = r["POOL_PAD_W"] = "0";
        r["POOL_OUT_H"] = num(o[2]);
        r["POOL_OUT_W"] = num(o[3]);
        r["POOL"] = "1";
        r["CONV_OUT"] = "act";
        r["POOL_MAX"] = "true", r["POOL_COUNT_PAD"] = "true", r["POOL_DIVISOR"] = "0";
    } else { // a 0x0 window: no pooling
        for (const char *k :
             {"POOL_KH", "POOL_KW", "POOL_PAD_H", "POOL_PAD_W", "POOL_OUT_H", "POOL_OUT_W", "POOL_DIVISOR"})
            r[k] = "0";
        r["POOL_MAX"] = r["POOL_COUNT_PAD"] = "true";
        r["POOL_SH"] = r["POOL_SW"] = "1";
        r["POOL"] = "0";
        r["CONV_OUT"] = "out";
    }
    return r;
}

Params sizesFor(const Problem &p, const QString &family)
{
    const std::string relu = "fmaxf(acc + bias[col], 0.0f)";
    if (p.name == "matmul")
        return gemmParams(p, "A", "B", false, "acc", "");
    if (p.name == "bmm")
        return gemmParams(p, "A", "B", false, "acc", "");
    if (p.name == "linear_bias_relu")
        return gemmParams(p, "x", "weight", true, relu, "bias");
    if (p.name == "conv2d")
        return convParams(p, 4, 2, "acc + bias[col]", "bias");
    if (p.name == "conv2d_3x3")
        return convParams(p, 1, 1, "acc + bias[col]", "bias");
    if (p.name == "conv2d_pointwise")
        return convParams(p, 1, 0, "acc", "");
    if (p.name == "conv2d_relu_maxpool")
        return convParams(p, 4, 2, relu, "bias", 3, 2);
    qFatal("no sizes for %s (%s)", p.name.c_str(), qPrintable(family));
}

QString diagnosticsText(const CompileOutput &o)
{
    QString s;
    for (const auto &d : o.diagnostics)
        s += QStringLiteral("%1 %2 %3\n")
                 .arg(d.line)
                 .arg(QString::fromStdString(d.severity), QString::fromStdString(d.message));
    return s;
}

} // namespace

class TestTemplates : public QObject {
    Q_OBJECT
private slots:
    void rendersParsesAndCompiles_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("tiles");
        QTest::addColumn<QString>("precision");

        const QString mma = QStringLiteral("BM=%1 BN=%2 BK=%3 WM=%4 WN=%5 STAGES=%6 MIN_BLOCKS=%7");
        const QString half = QStringLiteral("BM=%1 BN=%2 BK=%3 WM=%4 WN=%5 MIN_BLOCKS=1");
        const QString simt = QStringLiteral("BM=%1 BN=%2 BK=%3 TM=%4 TN=%5");
        auto row = [](const char *family, const char *problem, const QString &tiles, const char *precision) {
            QTest::newRow(qPrintable(QStringLiteral("%1 %2 %3").arg(family, problem, tiles)))
                << QString(family) << QString(problem) << tiles << QString(precision);
        };

        row("gemm_tiled_fp32.cu", "matmul", simt.arg(128).arg(128).arg(8).arg(8).arg(8), "fp32");
        row("gemm_tiled_fp32.cu", "matmul", simt.arg(128).arg(128).arg(16).arg(8).arg(8), "fp32");
        row("gemm_tiled_fp32.cu", "bmm", simt.arg(64).arg(128).arg(16).arg(8).arg(4), "fp32");

        row("gemm_mma_tf32x3.cu", "matmul", mma.arg(128).arg(128).arg(32).arg(64).arg(32).arg(3).arg(1), "tf32x3");
        row("gemm_mma_tf32x3.cu", "matmul", mma.arg(128).arg(256).arg(32).arg(64).arg(64).arg(3).arg(1), "tf32x3");
        row("gemm_mma_tf32x3.cu", "matmul", mma.arg(128).arg(128).arg(16).arg(64).arg(32).arg(5).arg(1), "tf32x3");
        row("gemm_mma_tf32x3.cu", "linear_bias_relu", mma.arg(128).arg(128).arg(32).arg(64).arg(32).arg(3).arg(1),
            "tf32x3");
        // K = 4096 in chunks of 16 tiles, each added to an fp32 register sum.
        row("gemm_mma_tf32x3.cu", "matmul", mma.arg(128).arg(128).arg(32).arg(64).arg(32).arg(3).arg(1) + " PROMOTE=16",
            "tf32x3");
        // The 32-column tile of a tall matrix times a narrow one.
        row("gemm_mma_tf32x3.cu", "matmul", mma.arg(128).arg(32).arg(32).arg(32).arg(32).arg(4).arg(2), "tf32x3");

        const QString wg = QStringLiteral("WGS=%1 BN=%2 STAGES=%3 PROMOTE=%4 SPLIT=%5 PRECISION=%6 HALF=0 BF16=0");
        const QString wgHalf = QStringLiteral("WGS=%1 BN=%2 STAGES=%3 PROMOTE=%4 SPLIT=1 PRECISION=fp16 HALF=1 BF16=0");
        const QString wgBf16 =
            QStringLiteral("WGS=%1 BN=%2 STAGES=%3 PROMOTE=%4 SPLIT=3 PRECISION=bf16x3 HALF=1 BF16=1");
        row("gemm_wgmma.cu", "matmul", wg.arg(2).arg(128).arg(3).arg(4).arg(3).arg(QStringLiteral("tf32x3")),
            "tf32x3");
        row("gemm_wgmma.cu", "matmul", wg.arg(1).arg(128).arg(4).arg(4).arg(3).arg(QStringLiteral("tf32x3")),
            "tf32x3");
        row("gemm_wgmma.cu", "bmm", wg.arg(2).arg(64).arg(4).arg(4).arg(3).arg(QStringLiteral("tf32x3")),
            "tf32x3");
        row("gemm_wgmma.cu", "linear_bias_relu",
            wg.arg(2).arg(96).arg(3).arg(4).arg(3).arg(QStringLiteral("tf32x3")), "tf32x3");
        row("gemm_wgmma.cu", "matmul", wg.arg(2).arg(128).arg(3).arg(8).arg(1).arg(QStringLiteral("tf32")),
            "tf32");
        // Loose: all of K in one tensor-core chunk, 256-column tiles; fp16 operands.
        row("gemm_wgmma.cu", "matmul", wg.arg(2).arg(256).arg(4).arg(65536).arg(1).arg(QStringLiteral("tf32")), "tf32");
        row("gemm_wgmma.cu", "matmul", wgHalf.arg(2).arg(256).arg(4).arg(65536), "fp16");
        row("gemm_wgmma.cu", "matmul", wgHalf.arg(2).arg(128).arg(4).arg(8), "fp16");
        row("gemm_wgmma.cu", "linear_bias_relu", wgHalf.arg(2).arg(128).arg(6).arg(65536), "fp16");
        // Strict at the 16-bit rate: two bf16 parts of each operand, three products.
        row("gemm_wgmma.cu", "matmul", wgBf16.arg(2).arg(128).arg(3).arg(4), "bf16x3");
        row("gemm_wgmma.cu", "bmm", wgBf16.arg(2).arg(64).arg(4).arg(1), "bf16x3");
        row("gemm_wgmma.cu", "linear_bias_relu", wgBf16.arg(1).arg(128).arg(4).arg(8), "bf16x3");
        // A read as fp32 by the product and rounded in registers; the pass lays out B alone.
        const QString aRegs = QStringLiteral(" A_REGS=1 A_IMAGES=0");
        row("gemm_wgmma.cu", "matmul", wgHalf.arg(2).arg(256).arg(3).arg(65536) + aRegs, "fp16");
        row("gemm_wgmma.cu", "linear_bias_relu", wgHalf.arg(2).arg(128).arg(4).arg(65536) + aRegs, "fp16");
        row("gemm_wgmma.cu", "matmul", wgBf16.arg(2).arg(128).arg(3).arg(4) + aRegs, "bf16x3");
        row("gemm_wgmma.cu", "bmm", wgBf16.arg(2).arg(64).arg(4).arg(1) + aRegs, "bf16x3");
        row("gemm_wgmma.cu", "linear_bias_relu", wgBf16.arg(1).arg(128).arg(4).arg(8) + aRegs, "bf16x3");
        row("gemm_wgmma.cu", "matmul", wg.arg(2).arg(96).arg(4).arg(4).arg(3).arg(QStringLiteral("tf32x3")) + aRegs,
            "tf32x3");
        row("gemm_wgmma.cu", "bmm", wg.arg(2).arg(64).arg(4).arg(1).arg(3).arg(QStringLiteral("tf32x3")) + aRegs,
            "tf32x3");
        // K split into 16 slices, summed by splitk_combine.
        row("gemm_wgmma.cu", "matmul",
            wg.arg(2).arg(128).arg(3).arg(4).arg(3).arg(QStringLiteral("tf32x3")) +
                " KSPLIT=16 SPLITK=1 SUM_WORDS=268435456 COMBINE_GRID=65536",
            "tf32x3");

        row("gemm_mma_tf32.cu", "matmul", mma.arg(128).arg(128).arg(32).arg(64).arg(32).arg(3).arg(1), "tf32");
        row("gemm_mma_tf32.cu", "matmul", mma.arg(256).arg(128).arg(32).arg(64).arg(64).arg(3).arg(1), "tf32");
        row("gemm_mma_tf32.cu", "bmm", mma.arg(64).arg(128).arg(32).arg(32).arg(64).arg(4).arg(2), "tf32");

        row("gemm_mma_fp16.cu", "matmul", half.arg(128).arg(128).arg(32).arg(64).arg(32), "fp16");
        row("gemm_mma_fp16.cu", "matmul", half.arg(128).arg(256).arg(32).arg(64).arg(64), "fp16");
        row("gemm_mma_fp16.cu", "linear_bias_relu", half.arg(128).arg(128).arg(64).arg(64).arg(32), "fp16");

        row("conv_implicit_gemm_tf32x3.cu", "conv2d", mma.arg(128).arg(96).arg(32).arg(32).arg(48).arg(3).arg(2),
            "tf32x3");
        row("conv_implicit_gemm_tf32x3.cu", "conv2d", mma.arg(128).arg(96).arg(16).arg(32).arg(48).arg(4).arg(2),
            "tf32x3");
        row("conv_implicit_gemm_tf32x3.cu", "conv2d_3x3", mma.arg(128).arg(128).arg(32).arg(32).arg(64).arg(3).arg(1),
            "tf32x3");

        row("conv_implicit_gemm_tf32.cu", "conv2d", mma.arg(128).arg(96).arg(32).arg(32).arg(48).arg(3).arg(2), "tf32");
        row("conv_implicit_gemm_tf32.cu", "conv2d", mma.arg(64).arg(96).arg(32).arg(32).arg(48).arg(3).arg(1), "tf32");
        row("conv_implicit_gemm_tf32.cu", "conv2d_pointwise",
            mma.arg(128).arg(128).arg(32).arg(64).arg(32).arg(3).arg(1), "tf32");

        const QString cw = wg + QStringLiteral(" PRODUCERS=%7");
        row("conv_wgmma.cu", "conv2d", cw.arg(1).arg(96).arg(2).arg(16).arg(3).arg(QStringLiteral("tf32x3")).arg(2),
            "tf32x3");
        row("conv_wgmma.cu", "conv2d", cw.arg(2).arg(96).arg(3).arg(16).arg(3).arg(QStringLiteral("tf32x3")).arg(1),
            "tf32x3");
        row("conv_wgmma.cu", "conv2d_3x3", cw.arg(2).arg(128).arg(3).arg(4).arg(3).arg(QStringLiteral("tf32x3")).arg(1),
            "tf32x3");
        row("conv_wgmma.cu", "conv2d_pointwise",
            cw.arg(1).arg(64).arg(3).arg(16).arg(1).arg(QStringLiteral("tf32")).arg(2), "tf32");
        row("conv_wgmma.cu", "conv2d_relu_maxpool",
            cw.arg(1).arg(96).arg(2).arg(16).arg(3).arg(QStringLiteral("tf32x3")).arg(2), "tf32x3");
        // 3xbf16: 64 taps a K step, 16 a producer thread.
        const QString cwBf16 = wgBf16 + QStringLiteral(" PRODUCERS=%5");
        row("conv_wgmma.cu", "conv2d", cwBf16.arg(1).arg(96).arg(2).arg(16).arg(2), "bf16x3");
        row("conv_wgmma.cu", "conv2d_3x3", cwBf16.arg(1).arg(128).arg(3).arg(4).arg(2), "bf16x3");
        row("conv_wgmma.cu", "conv2d_relu_maxpool", cwBf16.arg(1).arg(96).arg(4).arg(16).arg(1), "bf16x3");

        const QString cr = QStringLiteral("WGS=%1 BN=%2 STAGES=%3 PROMOTE=%4 SPLIT=%5 PRECISION=%6 BLOCKS=%7 DEPTH=%8");
        const QString x3 = QStringLiteral("tf32x3");
        row("conv_wgmma_regs.cu", "conv2d", cr.arg(1).arg(96).arg(2).arg(16).arg(3).arg(x3).arg(3).arg(1), "tf32x3");
        row("conv_wgmma_regs.cu", "conv2d", cr.arg(2).arg(96).arg(4).arg(16).arg(3).arg(x3).arg(1).arg(1), "tf32x3");
        row("conv_wgmma_regs.cu", "conv2d", cr.arg(1).arg(96).arg(3).arg(4).arg(3).arg(x3).arg(2).arg(1), "tf32x3");
        row("conv_wgmma_regs.cu", "conv2d", cr.arg(1).arg(96).arg(2).arg(16).arg(3).arg(x3).arg(2).arg(2), "tf32x3");
        row("conv_wgmma_regs.cu", "conv2d_3x3", cr.arg(1).arg(128).arg(2).arg(4).arg(3).arg(x3).arg(1).arg(1),
            "tf32x3");
        row("conv_wgmma_regs.cu", "conv2d_pointwise",
            cr.arg(1).arg(64).arg(3).arg(16).arg(1).arg(QStringLiteral("tf32")).arg(3).arg(2), "tf32");
        row("conv_wgmma_regs.cu", "conv2d_relu_maxpool", cr.arg(1).arg(96).arg(2).arg(16).arg(3).arg(x3).arg(3).arg(1),
            "tf32x3");

        const QString pool = mma + QStringLiteral(" SPLIT=%8 PRECISION=%9");
        row("conv_implicit_gemm_pool.cu", "conv2d_relu_maxpool",
            pool.arg(128).arg(96).arg(32).arg(32).arg(48).arg(3).arg(1).arg(3).arg(QStringLiteral("tf32x3")), "tf32x3");
        row("conv_implicit_gemm_pool.cu", "conv2d_relu_maxpool",
            pool.arg(128).arg(96).arg(32).arg(32).arg(48).arg(3).arg(2).arg(1).arg(QStringLiteral("tf32")), "tf32");
    }

    void rendersParsesAndCompiles()
    {
        QFETCH(QString, family);
        QFETCH(QString, problem);
        QFETCH(QString, tiles);
        QFETCH(QString, precision);

        auto prob = findProblem(problem.toStdString());
        QVERIFY2(prob.ok(), prob.ok() ? "" : prob.error().text().c_str());

        const std::string text = readTemplate(family.toStdString());
        QVERIFY2(!text.empty(), qPrintable(family));
        Params params = sizesFor(*prob, family);
        for (const auto &[k, v] : parseTiles(tiles))
            params[k] = v;
        params["TITLE"] = family.toStdString();
        params["IDEA"] = "test";
        params["PARAMS"] = tiles.toStdString();
        params["PROBLEM"] = prob->name;
        params["SUMMARY"] = prob->description;
        // What the generator gives every template, and the kernel's name where a part holds it.
        params.emplace("SMEM_PER_BLOCK", std::to_string(builtin::kDefaultSmemPerBlock));
        params.emplace("SMEM_PER_SM", std::to_string(builtin::kDefaultSmemPerSm));
        params.emplace("PROMOTE", "0");
        params.emplace("A_REGS", "0");
        if (family == "gemm_wgmma.cu") { // the stage's bytes, as the generator computes them
            const int parts = params.at("SPLIT") == "3" ? 2 : 1, rows = 64 * std::stoi(params.at("WGS"));
            const int rowFloats = params.at("HALF") == "1" ? 80 : 48; // a K step of A and 16 of padding
            const int a = params.at("A_REGS") == "1" ? rows * rowFloats * 4 : parts * rows * 128;
            params["STAGE_BYTES"] = std::to_string(a + parts * std::stoi(params.at("BN")) * 128);
        }
        const std::map<QString, std::string> kernelNames{{"gemm_mma_tf32x3.cu", "gemm_tf32x3"},
                                                         {"gemm_mma_tf32.cu", "gemm_tf32"},
                                                         {"conv_implicit_gemm_tf32x3.cu", "conv_tf32x3"},
                                                         {"conv_implicit_gemm_tf32.cu", "conv_tf32"}};
        if (auto k = kernelNames.find(family); k != kernelNames.end())
            params["KERNEL"] = k->second;

        std::set<std::string> missing;
        const std::string source = render(text, params, missing);
        QVERIFY2(missing.empty(),
                 qPrintable(QStringLiteral("no value for %1").arg(QString::fromStdString(*missing.begin()))));
        QVERIFY2(source.find("{{") == std::string::npos && source.find("}}") == std::string::npos,
                 "a placeholder is left after rendering");

        const std::string path = family.toStdString();
        auto cand = parseCandidate(source, path);
        QVERIFY2(cand.ok(), cand.ok() ? "" : cand.error().text().c_str());
        QCOMPARE(QString::fromStdString(toString(cand->precision)), precision);
        QCOMPARE(cand->problem, prob->name);
        auto plan = resolveCandidate(*cand, *prob, path);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().text().c_str());
        std::vector<std::string> kernels;
        for (const auto &l : plan->launches) {
            kernels.push_back(l.kernel);
            for (auto g : l.grid)
                QVERIFY(g >= 1 && g < (1LL << 31));
            QVERIFY(l.block[0] * l.block[1] * l.block[2] <= 1024);
            QVERIFY2(l.smem <= 227 * 1024, qPrintable(QStringLiteral("%1 bytes of shared memory").arg(l.smem)));
        }

        CompileOptions options;
        options.arch = "sm_90a";
        auto out = compileCuda(source, kernels, options);
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().text().c_str());
        QVERIFY2(out->ok, qPrintable(diagnosticsText(*out)));
        for (const auto &k : kernels) {
            const KernelResources &r = out->resources.at(k);
            qInfo("%s %s: %d registers, %d bytes stack, %d bytes spilled", qPrintable(family), k.c_str(), r.registers,
                  r.stackBytes, r.spillStores);
            QVERIFY(r.registers > 0 && r.registers <= 255);
            QCOMPARE(r.spillStores, 0);
            QCOMPARE(r.spillLoads, 0);
            QCOMPARE(r.stackBytes, 0);
        }
        const bool product = precision == "fp32" ? out->ptx.find("fma.rn.f32") != std::string::npos
                                                 : out->ptx.find("mma.sync.aligned") != std::string::npos ||
                out->ptx.find("wgmma.mma_async") != std::string::npos;
        QVERIFY2(product, "the PTX lacks the product instruction of its precision");
        if (precision == "tf32x3")
            QVERIFY(out->ptx.find("cvt.rna.tf32.f32") != std::string::npos);
        if (precision == "fp16") // the operands are multiplied as fp16, not only stored so
            QVERIFY(out->ptx.find(".f16.f16") != std::string::npos);
    }

    // Every placeholder of every template is one of the documented names, so the generator can
    // fill them all.
    void placeholdersAreKnown()
    {
        const std::set<std::string> known = {
            "M", "N", "K", "BATCH", "A_BATCH_STRIDE", "B_BATCH_STRIDE", "C_BATCH_STRIDE", "TRANS_A", "TRANS_B", "A",
            "B", "OUT", "GROUP_M", "EPILOGUE", "EPILOGUE_ARGS", "EPILOGUE_PARAMS", "BM", "BN", "BK", "WM", "WN", "TM",
            "TN", "STAGES", "MIN_BLOCKS", "IN_C", "IN_H", "IN_W", "OUT_C", "KH", "KW", "STRIDE_H", "STRIDE_W", "PAD_H",
            "PAD_W", "DIL_H", "DIL_W", "STRIDE_D", "PAD_D", "DIL_D", "OUT_H", "OUT_W", "X", "WEIGHT", "POOL_KH",
            "POOL_KW", "POOL_SH", "POOL_SW", "POOL_PAD_H", "POOL_PAD_W", "POOL_OUT_H", "POOL_OUT_W", "SPLIT", "HALF",
            "BF16", "PRECISION", "WGS", "PROMOTE", "A_IMAGES", "B_IMAGES", "POOL", "CONV_OUT", "PRODUCERS", "BLOCKS",
            "DEPTH", "KSPLIT", "SPLITK", "SUM_WORDS", "COMBINE_GRID", "POOL_MAX", "POOL_COUNT_PAD", "POOL_DIVISOR",
            "KERNEL", "SMEM_PER_BLOCK", "SMEM_PER_SM", "TITLE", "IDEA", "PARAMS", "PROBLEM", "SUMMARY",
            // gemm_wgmma: A read as fp32 and rounded in registers, and the ring stage's bytes
            "A_REGS", "STAGE_BYTES",
            // conv_direct: the 3-D geometry (D, H, W) and its thread shape
            "BLOCK", "CO", "DD", "DH", "DW", "GRID", "GROUPS", "IN_D", "OUT_D", "KD", "OP", "PD", "PH", "PW", "SD",
            "SH", "SW", "TRANSPOSED",
            // the mma.sync implicit GEMMs: a transposed one's phases
            "PHASES", "ROWS_M", "TAPS_K", "TAP_BYTES",
            // conv_wgmma_image: the prepared image's taps and sizes
            "TAPS_H", "TAPS_W", "IMG_H", "IMG_W", "IMG_C", "IMAGE_K",
            // conv_transpose_phased: the weights' bytes in shared memory
            "SMEM",
            // conv_wgmma_slab: a warpgroup's tile of output pixels, its slabs and their copies
            "TILE_H", "TILE_W", "SLABS", "VEC"};
        QDir dir(QStringLiteral(KF_SOURCE_DIR "/resources/templates"));
        const QStringList files =
            dir.entryList({QStringLiteral("gemm_*.cu"), QStringLiteral("conv_*.cu")}, QDir::Files);
        QVERIFY(files.size() >= 7);
        static const std::regex placeholder(R"(\{\{([A-Z0-9_]+)\}\})");
        for (const QString &f : files) {
            const std::string text = readTemplate(f.toStdString());
            for (auto it = std::sregex_iterator(text.begin(), text.end(), placeholder); it != std::sregex_iterator();
                 ++it)
                QVERIFY2(known.count((*it)[1].str()), qPrintable(f + ": " + QString::fromStdString((*it)[1].str())));
            QVERIFY2(text.find("// @launch") != std::string::npos, qPrintable(f));
            QVERIFY2(text.find("// @precision") != std::string::npos, qPrintable(f));
        }
    }
};

QTEST_GUILESS_MAIN(TestTemplates)
#include "test_templates.moc"
