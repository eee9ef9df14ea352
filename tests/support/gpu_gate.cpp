#include "gpu_gate.h"

#include "eval/worker_client.h"

#include <QProcess>

namespace kf::test {

bool machineHasGpu(QString *why)
{
    QProcess smi;
    smi.start(QStringLiteral("nvidia-smi"), {QStringLiteral("-L")});
    if (!smi.waitForStarted(10000)) {
        *why = QStringLiteral("nvidia-smi is not installed");
        return false;
    }
    smi.waitForFinished(30000);
    const QString out = QString::fromUtf8(smi.readAllStandardOutput());
    if (smi.exitCode() != 0 || !out.contains(QStringLiteral("GPU "))) {
        *why = QStringLiteral("nvidia-smi lists no GPU");
        return false;
    }
    return true;
}

const GpuGate &gpuGate()
{
    static const GpuGate gate = [] {
        GpuGate g;
        if (!machineHasGpu(&g.reason))
            return g;
        WorkerConfig config;
        config.argv = defaultWorkerArgv();
        WorkerClient w(config);
        if (Status s = w.start(); !s) {
            g.state = GpuGate::Fail;
            g.reason = QStringLiteral("the worker does not start: ") + QString::fromStdString(s.error().text());
            return g;
        }
        if (!w.info() || !w.info()->gpu.present) {
            g.state = GpuGate::Fail;
            g.reason = QStringLiteral("the worker sees no GPU: ") +
                QString::fromStdString(w.info() ? w.info()->gpu.reason : std::string());
            return g;
        }
        g.state = GpuGate::Run;
        return g;
    }();
    return gate;
}

} // namespace kf::test
