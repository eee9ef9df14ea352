        // Producer with A in registers: the warpgroup copies each K step's fp32 rows of A into the
        // stage (16-byte cp.async, rows past M and K zero-filled), each thread's copies counted on
        // the stage's full barrier when they land; thread 0 also bulk-copies B's tiles.
        const Elem *tilesB = reinterpret_cast<const Elem *>(tileWords) +
                             (long long)(kImagesB > 1 ? batch : 0) * kParts * kPartB +
                             ((long long)tileN * kTilesK + kt0) * kTileB;
        const float *a = A + batch * kBatchStrideA;
        constexpr int kChunksPerRow = kBK / 4;
        for (int kt = 0; kt < steps; ++kt) {
            const int s = kt % kStages;
            if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
            unsigned char *stage = ring + s * kStageBytes;
            if (threadIdx.x == 0) {
                mbar_expect_tx(&full[s], kStageBytesB);
#pragma unroll
                for (int part = 0; part < kParts; ++part)
                    bulk_copy(stage + kStageBytesA + part * kBN * 128, tilesB + part * kPartB + kt * kTileB,
                              kBN * 128, &full[s]);
            }
            float *rows = reinterpret_cast<float *>(stage);
            const int k0 = (kt0 + kt) * kBK;
            for (int i = threadIdx.x; i < kBM * kChunksPerRow; i += 128) {
                const int r = i / kChunksPerRow, k = k0 + 4 * (i % kChunksPerRow), row = tileM * kBM + r;
                const bool inside = row < kM && k < kK;
                cp_async<16>(rows + r * kARowFloats + (k - k0), inside ? a + (long long)row * kK + k : a, inside);
            }
            cp_async_arrive_noinc(&full[s]);
        }
        // The copies still in flight land before the thread leaves.
        cp_async_wait_all();
