// On a GPU: an exported .cu builds with nvcc for this GPU, and its generated launcher computes
// what the reference computes (softmax and matmul, small sizes, checked in fp64 on the host).
#include "gpu_gate.h"
#include "support.h"

#include "kernel/candidate.h"
#include "kernel/export.h"
#include "worker/runtime.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <dlfcn.h>
#include <random>

using namespace kf;

namespace {

using Launch1 = cudaError_t (*)(const float *, float *, void *, cudaStream_t);
using Launch2 = cudaError_t (*)(const float *, const float *, float *, void *, cudaStream_t);
using ScratchBytes = size_t (*)();

std::vector<float> randomVector(std::size_t n, unsigned seed)
{
    std::mt19937 g(seed);
    std::normal_distribution<float> d;
    std::vector<float> v(n);
    for (float &x : v)
        x = d(g);
    return v;
}

float *toDevice(const std::vector<float> &v)
{
    float *p = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&p), v.size() * sizeof(float));
    cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
    return p;
}

} // namespace

class TestExportGpu : public QObject {
    Q_OBJECT
    GpuInfo m_gpu;
    QTemporaryDir m_dir;

    // Exports `kernel` for `problem`, builds it as a shared library and opens it.
    void *build(const std::string &problem, const std::string &kernel)
    {
        const Problem p = test::seedProblem(problem, "small");
        const std::string src = test::readText(KF_SOURCE_DIR "/tests/kernels/naive/" + QString::fromStdString(kernel));
        auto cand = parseCandidate(src);
        if (!cand)
            qFatal("%s", cand.error().text().c_str());
        ExportInfo info;
        info.gpu = m_gpu.name;
        info.arch = m_gpu.arch;
        auto text = exportCandidate(*cand, p, info);
        if (!text)
            qFatal("%s", text.error().text().c_str());
        const QString cu = m_dir.filePath(QString::fromStdString(problem) + ".cu");
        const QString so = m_dir.filePath("lib" + QString::fromStdString(problem) + ".so");
        QFile f(cu);
        f.open(QIODevice::WriteOnly);
        f.write(text->data(), qint64(text->size()));
        f.close();
        const QString arch = QString::fromStdString(m_gpu.arch).mid(3); // "90a"
        QProcess nvcc;
        nvcc.setProcessChannelMode(QProcess::MergedChannels);
        nvcc.start(
            KF_NVCC,
            {"-gencode=arch=compute_" + arch + ",code=sm_" + arch, "-shared", "-Xcompiler", "-fPIC", "-o", so, cu});
        if (!nvcc.waitForFinished(180000) || nvcc.exitCode() != 0)
            qFatal("nvcc failed: %s", nvcc.readAll().constData());
        void *lib = dlopen(so.toLocal8Bit().constData(), RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            qFatal("dlopen: %s", dlerror());
        return lib;
    }

    void *scratchFor(void *lib, const Problem &p)
    {
        auto bytes = reinterpret_cast<ScratchBytes>(dlsym(lib, exportScratchBytesName(p).c_str()));
        void *s = nullptr;
        if (bytes && bytes() > 0)
            cudaMalloc(&s, bytes());
        return s;
    }

private slots:
    void initTestCase()
    {
        KF_REQUIRE_GPU();
        m_gpu = gpu::queryGpu();
        if (!m_gpu.present)
            QSKIP(qPrintable(QString::fromStdString("needs an NVIDIA GPU: " + m_gpu.reason)));
        QVERIFY(m_dir.isValid());
    }

    void softmax()
    {
        const Problem p = test::seedProblem("softmax", "small");
        const std::int64_t rows = p.constants.at("B"), cols = p.constants.at("N");
        void *lib = build("softmax", "softmax.cu");
        auto launch = reinterpret_cast<Launch1>(dlsym(lib, exportLauncherName(p).c_str()));
        QVERIFY(launch);
        const auto x = randomVector(std::size_t(rows * cols), 7);
        float *dx = toDevice(x), *dout = toDevice(std::vector<float>(x.size(), NAN));
        QCOMPARE(int(launch(dx, dout, scratchFor(lib, p), nullptr)), 0);
        QCOMPARE(int(cudaDeviceSynchronize()), 0);
        std::vector<float> out(x.size());
        cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
        for (std::int64_t r = 0; r < rows; ++r) {
            double m = -INFINITY, s = 0;
            for (std::int64_t c = 0; c < cols; ++c)
                m = std::max(m, double(x[r * cols + c]));
            for (std::int64_t c = 0; c < cols; ++c)
                s += std::exp(double(x[r * cols + c]) - m);
            for (std::int64_t c = 0; c < cols; ++c) {
                const double ref = std::exp(double(x[r * cols + c]) - m) / s;
                QVERIFY2(std::abs(out[r * cols + c] - ref) <= 1e-4 * (ref + 1.0 / double(cols)), "softmax element");
            }
        }
        cudaFree(dx);
        cudaFree(dout);
    }

    void matmul()
    {
        const Problem p = test::seedProblem("matmul", "small");
        const std::int64_t n = p.constants.at("N");
        void *lib = build("matmul", "matmul.cu");
        auto launch = reinterpret_cast<Launch2>(dlsym(lib, exportLauncherName(p).c_str()));
        QVERIFY(launch);
        const auto a = randomVector(std::size_t(n * n), 1), b = randomVector(std::size_t(n * n), 2);
        float *da = toDevice(a), *db = toDevice(b), *dout = toDevice(std::vector<float>(a.size(), NAN));
        QCOMPARE(int(launch(da, db, dout, scratchFor(lib, p), nullptr)), 0);
        QCOMPARE(int(cudaDeviceSynchronize()), 0);
        std::vector<float> out(a.size());
        cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                double ref = 0, mag = 0;
                for (std::int64_t k = 0; k < n; ++k) {
                    ref += double(a[i * n + k]) * b[k * n + j];
                    mag += std::abs(double(a[i * n + k]) * b[k * n + j]);
                }
                QVERIFY2(std::abs(out[i * n + j] - ref) <= 1e-5 * mag + 1e-6, "matmul element");
            }
        cudaFree(da);
        cudaFree(db);
        cudaFree(dout);
    }
};

QTEST_GUILESS_MAIN(TestExportGpu)
#include "test_export_gpu.moc"
