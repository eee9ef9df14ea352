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
            unsigned char *stage = stage_with_b(ring, full, empty, kt, tilesB);
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
