// NVRTC compilation: needs the CUDA toolkit but no GPU (every compile targets sm_90a explicitly).
// A compile with the CUDA headers takes ~1.5 s, so only one test pulls them in.
#include "worker/compiler.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <filesystem>

using namespace kf;

namespace {

CompileOutput compileOk(const std::string &source, const std::vector<std::string> &kernels, CompileOptions options = {})
{
    auto r = compileCuda(source, kernels, options);
    if (!r)
        qFatal("NVRTC did not run: %s", r.error().text().c_str());
    return *r;
}

QString diagnosticsText(const CompileOutput &o)
{
    QString s;
    for (const auto &d : o.diagnostics)
        s += QStringLiteral("%1 %2 %3\n")
                 .arg(d.line)
                 .arg(QString::fromStdString(d.severity), QString::fromStdString(d.message));
    return s + QString::fromStdString(o.log);
}

} // namespace

class TestCompiler : public QObject {
    Q_OBJECT
private slots:
    void compilesWithCudaHeaders()
    {
        const std::string src = R"(// @launch scale grid(1) block(256) args(x, y, n)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void scale(const float* __restrict__ x, float* y, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.f;
    cg::this_thread_block().sync();
    if (i < n) y[i] = __half2float(__float2half(tile[255 - threadIdx.x])) * 2.f;
}

namespace ops {
template <int N>
__global__ void fill(__nv_bfloat16* y) { y[threadIdx.x * N] = __float2bfloat16(1.f); }
}

__global__ void wmma_tile(const half* a, const half* b, float* c)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
)";
        auto o = compileOk(src, {"scale", "ops::fill<4>", "wmma_tile", "scale"}, {});
        QVERIFY2(o.ok, qPrintable(diagnosticsText(o)));
        QCOMPARE(o.arch, std::string("sm_90a"));
        QVERIFY(!o.cubin.empty());
        QVERIFY(o.ptx.find(".entry scale(") != std::string::npos);
        QVERIFY(!o.cached);
        QVERIFY(o.seconds > 0);
        QCOMPARE(o.loweredNames.at("scale"), std::string("scale"));
        QVERIFY(o.loweredNames.at("ops::fill<4>").rfind("_Z", 0) == 0);
        QCOMPARE(o.resources.size(), std::size_t(3));
        QVERIFY(o.resources.at("scale").registers > 0);
        QCOMPARE(o.resources.at("scale").sharedBytes, 1024);
        QVERIFY(o.resources.at("ops::fill<4>").registers > 0);
        QVERIFY(o.resources.at("wmma_tile").registers > 0);
        QVERIFY(o.log.find("ptxas info") != std::string::npos);
    }

    void syntaxErrorOnItsLine()
    {
        const std::string src = "// @launch k grid(1) block(1) args(y)\n"
                                "extern \"C\" __global__ void k(float* y)\n"
                                "{\n"
                                "    y[0] = undefined_name;\n"
                                "}\n";
        auto o = compileOk(src, {"k"});
        QVERIFY(!o.ok);
        QVERIFY(o.cubin.empty());
        QVERIFY(!o.diagnostics.empty());
        QCOMPARE(o.diagnostics[0].line, 4);
        QCOMPARE(o.diagnostics[0].severity, std::string("error"));
        QVERIFY2(o.diagnostics[0].message.find("undefined_name") != std::string::npos, qPrintable(diagnosticsText(o)));
        QVERIFY(o.log.find("candidate.cu(4)") != std::string::npos);
    }

    void warningsAreDiagnostics()
    {
        const std::string src = "extern \"C\" __global__ void k(float* y)\n{\n    int unused = 3;\n    y[0] = 1;\n}\n";
        auto o = compileOk(src, {"k"});
        QVERIFY2(o.ok, qPrintable(diagnosticsText(o)));
        QCOMPARE(o.diagnostics.size(), std::size_t(1));
        QCOMPARE(o.diagnostics[0].line, 3);
        QCOMPARE(o.diagnostics[0].severity, std::string("warning"));
    }

    void unknownKernelName()
    {
        const std::string src = "extern \"C\" __global__ void k(float* y) { y[0] = 1; }\n";
        auto o = compileOk(src, {"k", "missing"});
        QVERIFY(!o.ok);
        QVERIFY(o.cubin.empty());
        QCOMPARE(o.diagnostics.size(), std::size_t(1));
        QCOMPARE(o.diagnostics[0].line, 0);
        QCOMPARE(o.diagnostics[0].message, std::string("kernel 'missing' named in @launch is not defined"));
    }

    void deviceFunctionIsNotAKernel()
    {
        const std::string src = "__device__ float helper(float v) { return v * 2; }\n"
                                "extern \"C\" __global__ void k(float* y) { y[0] = helper(y[0]); }\n";
        auto o = compileOk(src, {"k", "helper"});
        QVERIFY(!o.ok);
        QCOMPARE(o.diagnostics.size(), std::size_t(1));
        QVERIFY2(o.diagnostics[0].message.find("not a __global__ function") != std::string::npos,
                 qPrintable(diagnosticsText(o)));
    }

    void architectureSpecificFeature()
    {
        // setmaxnreg exists only on the arch-specific target: sm_90a accepts it, sm_90 does not.
        const std::string src = "extern \"C\" __global__ void __launch_bounds__(128) k(float* y)\n"
                                "{\n"
                                "    asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\\n\");\n"
                                "    y[threadIdx.x] = 1;\n"
                                "}\n";
        auto a = compileOk(src, {"k"});
        QVERIFY2(a.ok, qPrintable(diagnosticsText(a)));
        CompileOptions plain;
        plain.arch = "sm_90";
        auto b = compileOk(src, {"k"}, plain);
        QVERIFY(!b.ok);
        QVERIFY(!b.diagnostics.empty());
        QCOMPARE(b.diagnostics[0].severity, std::string("error"));
        QVERIFY2(b.diagnostics[0].message.find("setmaxnreg") != std::string::npos, qPrintable(diagnosticsText(b)));
    }

    void stackAndSpills()
    {
        // A local array indexed at run time lives in local memory: a stack frame.
        const std::string src = "extern \"C\" __global__ void k(float* y, int j)\n"
                                "{\n"
                                "    float a[256];\n"
                                "    for (int i = 0; i < 256; ++i) a[i] = y[i * j];\n"
                                "    y[threadIdx.x] = a[(threadIdx.x * j) & 255];\n"
                                "}\n";
        auto o = compileOk(src, {"k"});
        QVERIFY2(o.ok, qPrintable(diagnosticsText(o)));
        QVERIFY2(o.resources.at("k").stackBytes >= 1024, qPrintable(diagnosticsText(o)));
    }

    void cachesOnDisk()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        CompileOptions options;
        options.cacheDir = (dir.path() + "/nvrtc").toStdString();
        const std::string src = "extern \"C\" __global__ void k(float* y) { __shared__ float s[32]; s[threadIdx.x] = 1;"
                                " __syncthreads(); y[threadIdx.x] = s[31 - threadIdx.x]; }\n";
        auto first = compileOk(src, {"k"}, options);
        QVERIFY(first.ok);
        QVERIFY(!first.cached);
        auto second = compileOk(src, {"k"}, options);
        QVERIFY(second.cached);
        QVERIFY(second.ok);
        QCOMPARE(second.cubin, first.cubin);
        QCOMPARE(second.ptx, first.ptx);
        QCOMPARE(second.log, first.log);
        QCOMPARE(second.loweredNames, first.loweredNames);
        QCOMPARE(second.resources.at("k").registers, first.resources.at("k").registers);
        QCOMPARE(second.resources.at("k").sharedBytes, 128);

        // One entry: a .cubin and a .json, and no temporary files left behind.
        int cubins = 0, jsons = 0, others = 0;
        for (const auto &e : std::filesystem::directory_iterator(options.cacheDir)) {
            auto ext = e.path().extension().string();
            (ext == ".cubin" ? cubins : ext == ".json" ? jsons : others)++;
        }
        QCOMPARE(cubins, 1);
        QCOMPARE(jsons, 1);
        QCOMPARE(others, 0);

        // Other options, another entry.
        options.extra = {"-DVARIANT=2"};
        auto third = compileOk(src, {"k"}, options);
        QVERIFY(!third.cached);

        // Failed compiles are cached too, with their diagnostics.
        auto bad1 = compileOk("__global__ void k( {}\n", {"k"}, options);
        auto bad2 = compileOk("__global__ void k( {}\n", {"k"}, options);
        QVERIFY(!bad1.ok && !bad2.ok);
        QVERIFY(bad2.cached);
        QCOMPARE(bad2.diagnostics.size(), bad1.diagnostics.size());
        QCOMPARE(bad2.diagnostics[0].line, 1);

        // A damaged entry is a miss, and the compile repairs it.
        for (const auto &e : std::filesystem::directory_iterator(options.cacheDir))
            if (e.path().extension() == ".json")
                std::filesystem::resize_file(e.path(), 10);
        auto again = compileOk(src, {"k"}, options);
        QVERIFY(!again.cached);
        QVERIFY(again.ok);
        QVERIFY(compileOk(src, {"k"}, options).cached);
    }

    void defaults()
    {
        qputenv("XDG_CACHE_HOME", "/tmp/kf-xdg");
        QCOMPARE(defaultCompileCacheDir(), std::string("/tmp/kf-xdg/kernelforge/nvrtc"));
        qunsetenv("XDG_CACHE_HOME");
        QVERIFY(defaultCompileCacheDir().find("kernelforge") != std::string::npos);
        std::string arch = deviceArch(); // "" without a GPU
        QVERIFY(arch.empty() || arch.rfind("sm_", 0) == 0);
    }
};

QTEST_APPLESS_MAIN(TestCompiler)
#include "test_compiler.moc"
