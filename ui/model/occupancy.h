#pragma once
// Theoretical occupancy of a kernel from its launch shape and resources, as CUDA's occupancy
// calculator computes it. The session keeps registers and shared memory but no occupancy, and the
// workbench shows it without a GPU, so it is computed for the limits of an architecture (Hopper's
// by default, the GPU of the shipped sessions).
namespace kf::ui {

struct SmLimits {
    int registersPerSm = 65536;
    int registerUnit = 256; // registers are allocated per warp in units of this
    int maxWarpsPerSm = 64;
    int maxBlocksPerSm = 32;
    int sharedPerSm = 228 * 1024;
    int sharedReservedPerBlock = 1024;
};

// Active warps over the SM's maximum, in [0, 1]; 0 when the block cannot run at all.
double theoreticalOccupancy(int threadsPerBlock, int registersPerThread, int sharedBytesPerBlock,
                            const SmLimits &limits = {});

} // namespace kf::ui
