    // The consumers' main loop: warpgroup c multiplies its 64 rows of each stage by the stage's B
    // tile over K steps 0 .. steps - 1. Tensor-core accumulation truncates, so `acc` holds kPromote
    // steps at a time and each chunk is added to the fp32 register sum `sum`; `total` is the sum the
    // includer stores. When one chunk covers all of K (kPromote >= kTilesK) `total` is `acc` itself
    // and `sum` is never used, which frees its registers for wider tiles. Operands are TF32 (kSplit
    // 1 or 3) or 16-bit (kHalf: fp16, or bf16 with kBf16, kSplit 1 or 3). Needs ring, full, empty, c and steps.
    constexpr bool kOneChunk = kPromote >= kTilesK;
    float acc[kBN / 2], sum[kBN / 2];
    float(&total)[kBN / 2] = kOneChunk ? acc : sum;
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) acc[i] = sum[i] = 0.0f;

    // Waits for K step kt's tiles and issues its products (asynchronously); `fresh` starts a chunk.
    const auto issue = [&](int kt, bool fresh) {
        const int s = kt % kStages;
        mbar_wait(&full[s], (kt / kStages) & 1);
        const unsigned char *stage = ring + s * kStageBytes;
        const unsigned long long aHi = tile_desc(stage + c * 64 * kRowBytes);
        const unsigned long long bHi = tile_desc(stage + kStageBytesA);
        const unsigned long long aLo = aHi + ((kBM * kRowBytes) >> 4); // the next part, same layout
        const unsigned long long bLo = bHi + ((kBN * kRowBytes) >> 4);
        fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kCallsPerRow; ++kk) {
            // 32 bytes further along the (swizzled) rows: +2 in the 16-byte address field.
            const unsigned long long step = 2 * kk;
            const int keep = !(fresh && kk == 0); // the chunk's first product overwrites the accumulator
            if constexpr (kBf16 && kSplit == 3) {
                // 3xbf16, small terms first as below.
                wgmma_bf16(acc, aLo + step, bHi + step, keep);
                wgmma_bf16(acc, aHi + step, bLo + step, 1);
                wgmma_bf16(acc, aHi + step, bHi + step, 1);
            } else if constexpr (kHalf && kBf16) {
                wgmma_bf16(acc, aHi + step, bHi + step, keep);
            } else if constexpr (kHalf) {
                wgmma_f16(acc, aHi + step, bHi + step, keep);
            } else if constexpr (kSplit == 3) {
                // Small terms first, so they are not lost against the large running sum.
                wgmma_tf32(acc, aLo + step, bHi + step, keep);
                wgmma_tf32(acc, aHi + step, bLo + step, 1);
                wgmma_tf32(acc, aHi + step, bHi + step, 1);
            } else {
                wgmma_tf32(acc, aHi + step, bHi + step, keep);
            }
        }
        wgmma_commit();
        fence_operands(acc);
    };
    const auto release = [&](int kt) {
        if (threadIdx.x % 128 == 0) mbar_arrive(&empty[kt % kStages]);
    };

    // Every loop head sees the same number of product groups in flight (one in the inner loop,
    // none in the outer), so the compiler needs no extra waits to track the accumulators.
    for (int k0 = 0; k0 < steps; k0 += kPromote) {
        const int kEnd = min(k0 + kPromote, steps);
        issue(k0, true);
        for (int kt = k0 + 1; kt < kEnd; ++kt) {
            issue(kt, false);
            wgmma_wait<1>(); // step kt-1 is done: its stage can be refilled
            release(kt - 1);
        }
        wgmma_wait<0>();
        release(kEnd - 1);
        fence_operands(acc);
        if constexpr (!kOneChunk) {
#pragma unroll
            for (int i = 0; i < kBN / 2; ++i) sum[i] += acc[i];
        }
    }
