#include "model/occupancy.h"

#include <algorithm>

namespace kf::ui {

double theoreticalOccupancy(int threads, int registers, int shared, const SmLimits &l)
{
    if (threads <= 0)
        return 0;
    const int warps = (threads + 31) / 32;
    int blocks = std::min(l.maxBlocksPerSm, l.maxWarpsPerSm / warps);
    if (registers > 0) {
        const int perWarp = (registers * 32 + l.registerUnit - 1) / l.registerUnit * l.registerUnit;
        blocks = std::min(blocks, (l.registersPerSm / perWarp) / warps);
    }
    const int sharedPerBlock = shared + l.sharedReservedPerBlock;
    if (shared > 0)
        blocks = std::min(blocks, l.sharedPerSm / sharedPerBlock);
    return std::max(0, blocks) * warps / double(l.maxWarpsPerSm);
}

} // namespace kf::ui
