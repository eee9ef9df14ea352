#pragma once
// The gate every `gpu` test passes first. Without an NVIDIA GPU (nvidia-smi lists none) the test
// skips with the reason. Where nvidia-smi does list a GPU, a worker that does not start, or starts
// without seeing the GPU, fails the test: a broken worker on a GPU machine must not pass as "skipped".
#include <QString>
#include <QTest>

namespace kf::test {

struct GpuGate {
    enum State { Run, Skip, Fail } state = Skip;
    QString reason;
};

// Checked once per test process: `nvidia-smi -L`, then a worker's handshake.
const GpuGate &gpuGate();
// Whether nvidia-smi lists an NVIDIA GPU on this machine ("" when it does, else why not).
bool machineHasGpu(QString *why);

} // namespace kf::test

#define KF_REQUIRE_GPU()                                                                                               \
    do {                                                                                                               \
        const kf::test::GpuGate &gate_ = kf::test::gpuGate();                                                          \
        if (gate_.state == kf::test::GpuGate::Skip)                                                                    \
            QSKIP(qPrintable(QStringLiteral("needs an NVIDIA GPU: ") + gate_.reason));                                 \
        if (gate_.state == kf::test::GpuGate::Fail)                                                                    \
            QFAIL(qPrintable(QStringLiteral("nvidia-smi lists a GPU, but ") + gate_.reason));                          \
    } while (0)
