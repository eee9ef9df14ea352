// A producer's K step kt with B's tiles ready-made: waits until the step's stage is free (its
// consumers released it kStages steps ago), then thread 0 counts B's bytes on the stage's full
// barrier and bulk-copies the step's kParts tiles of B (from `first`, the tiles of step 0) into it.
// Returns the stage. Needs kStages, kStageBytes, kStageBytesA, kStageBytesB, kParts, kBN, kPartB
// and kTileB, and Elem.
__device__ __forceinline__ unsigned char *stage_with_b(unsigned char *ring, unsigned long long *full,
                                                       unsigned long long *empty, int kt, const Elem *first)
{
    const int s = kt % kStages;
    if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
    unsigned char *stage = ring + s * kStageBytes;
    if (threadIdx.x == 0) {
        mbar_expect_tx(&full[s], kStageBytesB);
#pragma unroll
        for (int part = 0; part < kParts; ++part)
            bulk_copy(stage + kStageBytesA + part * kBN * 128, first + part * kPartB + kt * kTileB, kBN * 128,
                      &full[s]);
    }
    return stage;
}
