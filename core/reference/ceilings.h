#pragma once
// The GPU's measured ceilings (copy bandwidth; dense matmul rates through libtorch), cached per
// GPU name so that only a worker's first start on a GPU pays for them.
#include "domain/gpu_facts.h"

namespace kf::ref {
Ceilings measureCeilings(const GpuInfo &);
Ceilings cachedCeilings(const GpuInfo &); // measures and stores on a miss
} // namespace kf::ref
