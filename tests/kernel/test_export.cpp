// Export of a candidate as a standalone .cu, built with nvcc for sm_90a (no GPU needed).
#include "kernel/export.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace kf;

namespace {

Problem mixedProblem()
{
    Problem p;
    p.name = "scaled-softmax";
    p.description = "Softmax of x scaled by w, in half precision out.";
    p.constants = {{"B", 8}, {"N", 1024}};
    p.variant = "small";
    InputSpec x;
    x.name = "x";
    x.shape = {8, 1024};
    p.inputs.push_back(x);
    ParamSpec w;
    w.name = "w";
    w.shape = {1024};
    w.dtype = DType::BF16;
    p.params.push_back(w);
    TensorSpec out;
    out.name = "out";
    out.shape = {8, 1024};
    out.dtype = DType::F16;
    p.outputs.push_back(out);
    p.referenceSource = "def forward(x: Tensor, w: Tensor) -> Tensor:\n"
                        "    return torch.softmax(x * w.float(), dim=1).half()\n";
    return p;
}

// Exercises every kind of launch: extern "C" and C++ kernels, scratch, scalars of each type, a
// bare constant, dynamic shared memory above 48 KB, a thread-block cluster, a kernel without
// parameters.
const char *kCandidate = R"(// @precision fp32
// @scratch stats float32 x.shape[0]*2
// @scratch flags int32 B
// @launch row_stats grid(B) block(256) args(x, stats, N)
// @launch ops::normalize<4> grid(cdiv(x.numel, 1024), 1) block(256) smem(64*1024) cluster(2, 1, 1) args(x, w, stats, out, i64(out.numel), f32(0.5), flags)
// @launch noop grid(1) block(32) args()
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void row_stats(const float* __restrict__ x, float* stats, int n)
{
    if (threadIdx.x == 0) stats[2 * blockIdx.x] = x[blockIdx.x * n];
}

namespace ops {
template <int V>
__global__ void normalize(const float4* x, const __nv_bfloat16* w, const float* stats, __half* out,
                          long long total, float scale, int* flags)
{
    extern __shared__ float buf[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = stats[0];
    __syncthreads();
    if (i * V < total) out[i * V] = __float2half(x[i].x * __bfloat162float(w[0]) * scale + buf[0]);
    if (i == 0) flags[0] = 1;
}
}

extern "C" __global__ void noop() {}
)";

} // namespace

class TestExport : public QObject {
    Q_OBJECT
private slots:
    void writesLauncher()
    {
        auto c = parseCandidate(kCandidate);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().text().c_str());
        ExportInfo info;
        info.gpu = "NVIDIA H200";
        info.arch = "sm_90a";
        info.speedup = 1.8;
        info.maxError = 3.2e-6;
        info.date = "2026-12-03";
        auto out = exportCandidate(*c, mixedProblem(), info);
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().text().c_str());
        const QString text = QString::fromStdString(*out);

        QCOMPARE(exportLauncherName(mixedProblem()), std::string("kf_launch_scaled_softmax"));
        QCOMPARE(exportScratchBytesName(mixedProblem()), std::string("kf_scaled_softmax_scratch_bytes"));
        // Provenance.
        QVERIFY(text.contains("NVIDIA H200 (sm_90a)"));
        QVERIFY(text.contains("precision:  fp32"));
        QVERIFY(text.contains("1.80x over eager PyTorch"));
        QVERIFY(text.contains("3.2e-06"));
        QVERIFY(text.contains("2026-12-03"));
        QVERIFY(text.contains("//       return torch.softmax(x * w.float(), dim=1).half()"));
        QVERIFY(text.contains("nvcc -gencode=arch=compute_90a,code=sm_90a"));
        QVERIFY(!text.contains("!!!")); // a verified kernel has no warning
        // A kernel that was never verified says so at the top, before anything else.
        info.warning = "NOT VERIFIED: it compiled, but no GPU has run it yet (needs gpu).";
        auto warned = exportCandidate(*c, mixedProblem(), info);
        QVERIFY(warned.ok());
        const QString header = QString::fromStdString(*warned).section(QStringLiteral("// Build:"), 0, 0);
        QVERIFY2(header.contains("//\n// !!! NOT VERIFIED: it compiled, but no GPU has run it yet (needs gpu).\n//\n"),
                 qPrintable(header));
        QVERIFY(header.indexOf("!!!") < header.indexOf("GPU:"));
        // The launcher and its constants.
        QVERIFY2(text.contains("extern \"C\" cudaError_t kf_launch_scaled_softmax(const float* x, const "
                               "__nv_bfloat16* w, __half* out, void* scratch, cudaStream_t stream)"),
                 qPrintable(text));
        QVERIFY(text.contains("#include <cuda_fp16.h>"));
        QVERIFY(text.contains("#include <cuda_bf16.h>"));
        // stats: 16 floats = 64 bytes, padded to 256; flags: 8 ints at 256.
        QVERIFY(text.contains("return 512;"));
        // Each zeroed buffer is cleared on its own (an uninitialized one would be skipped).
        QVERIFY(text.contains("cudaMemsetAsync(kf_base + 0, 0, 64, stream)"));
        QVERIFY(text.contains("cudaMemsetAsync(kf_base + 256, 0, 32, stream)"));
        QVERIFY(text.contains("int kf_a2 = 1024;"));
        QVERIFY(text.contains("long long kf_a4 = 8192LL;"));
        QVERIFY(text.contains("float kf_a5 = 0.5f;"));
        QVERIFY(text.contains("cudaFuncAttributeMaxDynamicSharedMemorySize, 65536"));
        QVERIFY(text.contains("cudaLaunchAttributeClusterDimension"));
        QVERIFY(text.contains("cudaLaunchKernelExC(&kf_config, reinterpret_cast<const void*>(&ops::normalize<4>)"));
        QVERIFY(text.contains("dim3(8, 1, 1), dim3(256, 1, 1), kf_args, 0, stream"));
        QVERIFY(text.contains("void** kf_args = nullptr;"));
        // The kernels as written; the generated parts add no directives of their own.
        QVERIFY(text.contains(QString::fromUtf8(kCandidate)));
        auto again = parseCandidate(*out);
        QVERIFY(again.ok());
        QCOMPARE(again->launches.size(), c->launches.size());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString cu = dir.filePath("scaled_softmax.cu");
        QFile f(cu);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(out->data(), qint64(out->size()));
        f.close();
        compileWithNvcc(cu, dir.filePath("scaled_softmax.o"));
    }

    void smallLaunchWithoutScratch()
    {
        Problem p = mixedProblem();
        p.name = "9lives";
        auto c = parseCandidate("// @launch noop grid(1) block(1) args()\nextern \"C\" __global__ void noop() {}\n");
        QVERIFY(c.ok());
        auto out = exportCandidate(*c, p, {});
        QVERIFY(out.ok());
        const QString text = QString::fromStdString(*out);
        QVERIFY(text.contains("kf_launch__9lives("));
        QVERIFY(text.contains("return 0;"));
        QVERIFY(!text.contains("cudaMemsetAsync("));
        QVERIFY(!text.contains("cudaFuncSetAttribute"));
        QVERIFY(text.contains("GPU:        unknown"));
        QVERIFY(!text.contains("speedup:"));
    }

    void rejectsUnresolvable()
    {
        auto c = parseCandidate("// @launch k grid(M) block(1) args()\n");
        QVERIFY(c.ok());
        auto out = exportCandidate(*c, mixedProblem(), {});
        QVERIFY(!out.ok());
        QVERIFY(out.error().text().find(":1") != std::string::npos);
    }

private:
    void compileWithNvcc(const QString &cu, const QString &object)
    {
        const QString nvcc = QStringLiteral(KF_NVCC);
        if (nvcc.isEmpty() || !QFileInfo(nvcc).isExecutable())
            QSKIP("nvcc is not installed");
        QProcess proc;
        proc.setProcessChannelMode(QProcess::MergedChannels);
        proc.start(nvcc, {"-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-c", cu, "-o", object});
        QVERIFY(proc.waitForFinished(300000));
        const QByteArray log = proc.readAll();
        QVERIFY2(proc.exitStatus() == QProcess::NormalExit && proc.exitCode() == 0, log.constData());
        QVERIFY(QFileInfo(object).size() > 0);
    }
};

QTEST_APPLESS_MAIN(TestExport)
#include "test_export.moc"
