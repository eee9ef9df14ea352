    // The consumers' main loop with A in registers (kARegs): warpgroup c reads its 64 rows of each
    // stage's fp32 A, 16 values of K at a time, rounds them into wgmma fragments and multiplies them
    // by the stage's B tile. Two fragment sets alternate: the next slice's is read and rounded while
    // the current one multiplies. Tensor-core accumulation truncates, so `acc` holds kPromote steps
    // at a time, added to the fp32 register sum `sum` (as in wgmma_consumer); `total` is the sum the
    // includer stores. Needs ring, full, empty, c and steps.
    constexpr bool kOneChunk = kPromote >= kTilesK;
    float acc[kBN / 2], sum[kBN / 2];
    float(&total)[kBN / 2] = kOneChunk ? acc : sum;
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) acc[i] = sum[i] = 0.0f;

    // A slice is 16 values of K: one k16 call on 16-bit values, two k8 calls on TF32 ones.
    constexpr int kSlices = kBK / 16, kCalls = sizeof(Elem) == 4 ? 2 : 1;
    static_assert(kSlices * kCalls == kCallsPerRow, "a K step is one 128-byte row of B");
    using Fragment = typename FragmentOf<kCalls == 2>::Type;
    // This thread's fragment rows: 16 warp + lane / 4 of the warpgroup's 64, and 8 below; its 16
    // bytes of a slice start at 4 (lane % 4) (B's K order matches, see permute_k).
    const int fragment = (c * 64 + (threadIdx.x % 128) / 32 * 16 + threadIdx.x % 32 / 4) * kARowFloats +
                         4 * (threadIdx.x % 4);
    // Slice kk of step kt, read and rounded (round_fragment).
    const auto load = [&](int kt, int kk, Fragment &hi, Fragment &lo) {
        const float *p = reinterpret_cast<const float *>(ring + (kt % kStages) * kStageBytes) + fragment + 16 * kk;
        round_fragment(*reinterpret_cast<const float4 *>(p), *reinterpret_cast<const float4 *>(p + 8 * kARowFloats),
                       hi, lo);
    };
    const auto fence = [&](Fragment &f) {
#pragma unroll
        for (int j = 0; j < kCalls; ++j) fence_fragment(f[j]);
    };
    const auto release = [&](int kt) {
        if (threadIdx.x % 128 == 0) mbar_arrive(&empty[kt % kStages]);
    };
    const auto arrived = [&](int kt) { mbar_wait(&full[kt % kStages], (kt / kStages) & 1); };

    Fragment hi[2], lo[2];
    if (steps > 0) {
        arrived(0);
        load(0, 0, hi[0], lo[0]);
    }
    for (int k0 = 0; k0 < steps; k0 += kPromote) {
        const int kEnd = min(k0 + kPromote, steps);
        for (int kt = k0; kt < kEnd; ++kt) {
            const unsigned long long bHi = tile_desc(ring + (kt % kStages) * kStageBytes + kStageBytesA);
            const unsigned long long bLo = bHi + ((kBN * kRowBytes) >> 4); // the next part, same layout
#pragma unroll
            for (int kk = 0; kk < kSlices; ++kk) {
                const int d = kk & 1;
                fence_operands(acc);
                wgmma_fence();
#pragma unroll
                for (int j = 0; j < kCalls; ++j) {
                    // A call reads 32 bytes of each (swizzled) row: +2 in the address field.
                    const unsigned long long step = 2 * (kk * kCalls + j);
                    const int keep = !(kt == k0 && kk == 0 && j == 0); // the chunk's first product overwrites
                    if constexpr (kParts == 2) {
                        // 3xbf16 or 3xTF32, small terms first, so they are not lost against the large sum.
                        wgmma_regs(acc, lo[d][j], bHi + step, keep);
                        wgmma_regs(acc, hi[d][j], bLo + step, 1);
                        wgmma_regs(acc, hi[d][j], bHi + step, 1);
                    } else {
                        wgmma_regs(acc, hi[d][j], bHi + step, keep);
                    }
                }
                wgmma_commit();
                // The previous slice's products are done: its fragment set takes the next slice,
                // and once they were the last of step kt - 1, that stage can be refilled. The
                // fences keep the compiler from reusing a set's registers before its products finish.
                wgmma_wait<1>();
                if (kk == 0 && kt > k0) release(kt - 1);
                fence(hi[d ^ 1]);
                if constexpr (kParts == 2) fence(lo[d ^ 1]);
                if (kk + 1 < kSlices) {
                    load(kt, kk + 1, hi[d ^ 1], lo[d ^ 1]);
                } else if (kt + 1 < kEnd) {
                    arrived(kt + 1);
                    load(kt + 1, 0, hi[0], lo[0]);
                }
            }
        }
        wgmma_wait<0>();
        release(kEnd - 1);
        fence_operands(acc);
#pragma unroll
        for (int d = 0; d < 2; ++d) {
            fence(hi[d]);
            if constexpr (kParts == 2) fence(lo[d]);
        }
        if constexpr (!kOneChunk) {
#pragma unroll
            for (int i = 0; i < kBN / 2; ++i) sum[i] += acc[i];
        }
        if (kEnd < steps) {
            arrived(kEnd);
            load(kEnd, 0, hi[0], lo[0]);
        }
    }
