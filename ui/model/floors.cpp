#include "model/floors.h"

#include "gpu/datasheet.h"
#include "gpu/physical_floor.h"
#include "model/format.h"

#include <QObject>
#include <QStringList>

#include <cmath>
#include <map>

namespace kf::ui {

Ceilings datasheetCeilings(const std::string &gpuName)
{
    const gpu::Datasheet d = gpu::datasheetFor(gpuName);
    Ceilings c;
    c.bandwidthGBs = d.bandwidthGBs;
    c.tflops = d.tflops;
    return c;
}

std::vector<PrecisionFloor> floorsByPrecision(double flops, double bytes, const Ceilings &c)
{
    std::vector<PrecisionFloor> out;
    const double memoryMs = c.bandwidthGBs > 0 && bytes > 0 ? bytes / (c.bandwidthGBs * 1e9) * 1e3 : 0;
    for (Precision p :
         {Precision::FP32, Precision::TF32x3, Precision::BF16x3, Precision::TF32, Precision::FP16, Precision::BF16}) {
        const std::string key = p == Precision::TF32x3 ? "tf32" : p == Precision::BF16x3 ? "bf16" : toString(p);
        if (p != Precision::FP32 && !c.tflops.count(key))
            continue;
        const double ms = floorMs(flops, bytes, p, c);
        if (!(ms > 0))
            continue;
        const QString name = qs(toString(p));
        if (!out.empty() && std::abs(out.back().ms - ms) <= 1e-9 * ms)
            out.back().precisions << name;
        else
            out.push_back({{name}, ms, ms <= memoryMs * (1 + 1e-9)});
    }
    return out;
}

QString describeFloors(double flops, double bytes, const Ceilings &c)
{
    const std::vector<PrecisionFloor> floors = floorsByPrecision(flops, bytes, c);
    if (floors.empty())
        return QObject::tr("unknown (no rates for this GPU)");
    if (floors.size() == 1)
        return QObject::tr("%1 at every precision (%2-bound)")
            .arg(formatMs(floors[0].ms), floors[0].memoryBound ? QObject::tr("memory") : QObject::tr("compute"));
    QStringList parts;
    for (const PrecisionFloor &f : floors)
        parts << QStringLiteral("%1 %2%3").arg(f.precisions.join(QLatin1Char('/')), formatMs(f.ms),
                                               f.memoryBound ? QObject::tr(" (memory-bound)") : QString());
    return parts.join(QStringLiteral(" · "));
}

QString describeCeilings(const Ceilings &c)
{
    QStringList parts;
    if (c.bandwidthGBs > 0)
        parts << QStringLiteral("%1 TB/s").arg(c.bandwidthGBs / 1000, 0, 'f', 2);
    if (auto it = c.tflops.find("fp32"); it != c.tflops.end() && it->second > 0)
        parts << QStringLiteral("%1 TFLOP/s fp32").arg(it->second, 0, 'f', 1);
    return parts.join(QStringLiteral(", "));
}

QString sessionFloorsText(const SessionSnapshot &s)
{
    std::map<std::string, double> byPrecision; // the worker's floor at each precision a candidate used
    for (const NodeView &n : s.nodes)
        if (n.result && n.result->floorMs > 0)
            byPrecision.emplace(toString(n.result->precision), n.result->floorMs);
    if (byPrecision.empty())
        return {};
    QStringList parts;
    for (const auto &[precision, ms] : byPrecision)
        parts << QStringLiteral("%1 %2").arg(qs(precision), formatMs(ms));
    QString source = s.meta.gpuName.empty() ? QObject::tr("Ceilings measured by this session")
                                            : QObject::tr("Ceilings measured on %1").arg(qs(s.meta.gpuName));
    if (const QString rates = describeCeilings(s.ceilings); !rates.isEmpty())
        source += QStringLiteral(" (%1)").arg(rates);
    return QStringLiteral("%1: %2").arg(source, parts.join(QStringLiteral(" · ")));
}

} // namespace kf::ui
