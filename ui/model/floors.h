#pragma once
// Roofline floors as the workbench labels them. A floor depends on the ceilings it is computed
// from: the datasheet rates of a GPU (the Problems page, before anything ran) or the ceilings a
// worker measured on the GPU (stored in the session; the verdicts and the Metrics tab use those).
// The two differ, so every floor the workbench shows names its precision and its source.
#include "domain/gpu_facts.h"
#include "kernel/candidate.h"
#include "model/session_snapshot.h"
#include "problem/problem.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace kf::ui {

// The datasheet rates of the GPU whose name contains a row of the table ("NVIDIA H200").
Ceilings datasheetCeilings(const std::string &gpuName);

struct PrecisionFloor {
    QStringList precisions; // those that share this floor ("fp16", "bf16")
    double ms = 0;
    bool memoryBound = false;
};
// The floor at fp32 and at each precision the ceilings have a rate for, precisions with the same
// floor together, in the order fp32, tf32x3, bf16x3, tf32, fp16, bf16.
std::vector<PrecisionFloor> floorsByPrecision(double flops, double bytes, const Ceilings &);
// "0.4474 ms at every precision (memory-bound)", or "fp32 1.204 ms · tf32 0.301 ms (compute-bound)".
QString describeFloors(double flops, double bytes, const Ceilings &);
// "4.80 TB/s, 67 TFLOP/s fp32": the rates a floor came from.
QString describeCeilings(const Ceilings &);

// "Ceilings measured on NVIDIA H200 (4.25 TB/s): fp32 0.5055 ms": the floors the session's
// candidates were judged against, by precision; "" when none was measured.
QString sessionFloorsText(const SessionSnapshot &);

} // namespace kf::ui
