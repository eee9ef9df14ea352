#include "help.h"

#include <QAction>
#include <QObject>
#include <QStringList>
#include <QtGlobal>

namespace kf::ui {

QString cudaVersionText(int v)
{
    return v > 0 ? QStringLiteral("%1.%2").arg(v / 1000).arg((v % 1000) / 10) : QString();
}

QString aboutText(const GpuStatus &g)
{
    auto row = [](const QString &what, const QString &value) {
        return QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(what, value.toHtmlEscaped());
    };
    QString html = QObject::tr("<h3>KernelForge %1</h3><p>Searches for fast CUDA kernels: a generator proposes "
                               "ideas and kernels, a worker verifies them against PyTorch and times them.</p>")
                       .arg(QStringLiteral(KF_VERSION));
    html += QStringLiteral("<table cellspacing=4>");
    html += row(
        QObject::tr("Qt"),
        QObject::tr("%1 (built with %2)").arg(QString::fromLatin1(qVersion()), QStringLiteral(KF_QT_BUILD_VERSION)));
    if (!g.checked) {
        html += row(QObject::tr("Worker"), QObject::tr("still asking kernelforge-worker…"));
    } else if (g.workerVersion.isEmpty()) {
        html += row(QObject::tr("Worker"), QObject::tr("did not start: %1").arg(g.reason));
    } else {
        html += row(QObject::tr("Worker"), QObject::tr("kernelforge-worker %1").arg(g.workerVersion));
        html += row(QObject::tr("libtorch (worker)"),
                    g.torch.isEmpty() ? QObject::tr("none (a compile-only worker)") : g.torch);
        const QString runtime = cudaVersionText(g.cudaRuntime), driver = cudaVersionText(g.cudaDriver);
        html +=
            row(QObject::tr("CUDA (worker)"),
                runtime.isEmpty() && driver.isEmpty() ? QObject::tr("not reported")
                                                      : QObject::tr("runtime %1, driver %2")
                                                            .arg(runtime.isEmpty() ? QObject::tr("unknown") : runtime,
                                                                 driver.isEmpty() ? QObject::tr("none") : driver));
        html += row(QObject::tr("GPU"),
                    g.present ? QStringLiteral("%1 (%2)").arg(g.name, g.arch) : QObject::tr("none: %1").arg(g.reason));
    }
    return html + QStringLiteral("</table>");
}

QString shortcutsText(const QList<QAction *> &actions)
{
    QString html = QObject::tr("<table cellspacing=4><tr><th align=left>Keys</th><th align=left>Action</th></tr>");
    for (QAction *a : actions)
        if (!a->shortcut().isEmpty())
            html += QStringLiteral("<tr><td><tt>%1</tt></td><td>%2</td></tr>")
                        .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                             a->text().remove(QLatin1Char('&')).remove(QStringLiteral("…")).toHtmlEscaped());
    return html + QStringLiteral("</table>");
}

} // namespace kf::ui
