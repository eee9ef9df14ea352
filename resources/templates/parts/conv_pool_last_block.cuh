    // The pooling inside the convolution (FUSE): every pooled row (image b, this block's tile of
    // channels, row ph) has a counter of the conv pixels its windows read; a block adds the pixels
    // it stored, and the block that completes a row pools it from act, which is still in L2. So the
    // pooling runs beside the other blocks' products instead of as a pass over act after them, and
    // a row's work (its channels x kPoolOutW windows) is small enough to leave no long tail.
    // Ordering: each thread's stores, a fence, the consumers' barrier, then the counts (release);
    // a completing block fences again before it reads (acquire).
    {
        static_assert(kPixels >= kBM, "a tile of pixels spans at most two images");
        __shared__ int poolRows[2 * kPoolOutH];
        __shared__ int poolCount;
        constexpr int kConsumers = 128 * kWGs;
        const int t = threadIdx.x; // the consumers: the producer warp has returned
        if (t == 0) poolCount = 0;
        __threadfence();
        asm volatile("bar.sync 1, %0;\n" ::"r"(kConsumers) : "memory");

        // The block's pixels [mA, mE), in at most two images: [from0, to0) of image bFirst and
        // [from1, to1) of the next; in each, the pooled rows whose windows read one of its conv rows.
        const long long mA = (long long)m0, mE = min((long long)m0 + kBM, (long long)kRowsM);
        const int bFirst = int(mA / kPixels), split = int(min(mE, (long long)(bFirst + 1) * kPixels) - mA);
        const int from0 = int(mA - (long long)bFirst * kPixels), to0 = from0 + split, from1 = 0, to1 = int(mE - mA) - split;
        // Pooled row ph reads conv rows ph * SH - PH .. ph * SH - PH + KH - 1.
        const auto firstRow = [](int from) { return max(0, (from / kOutW + kPoolPadH - kPoolKH + kPoolSH) / kPoolSH); };
        const auto rowCount = [&](int from, int to) {
            return to <= from ? 0 : max(0, min(kPoolOutH - 1, ((to - 1) / kOutW + kPoolPadH) / kPoolSH) - firstRow(from) + 1);
        };
        const int rows0 = rowCount(from0, to0), rows1 = rowCount(from1, to1);
        for (int k = t; k < rows0 + rows1; k += kConsumers) {
            const bool second = k >= rows0;
            const int b = bFirst + second, from = second ? from1 : from0, to = second ? to1 : to0;
            const int ph = firstRow(from) + (second ? k - rows0 : k);
            const int rLo = max(0, ph * kPoolSH - kPoolPadH), rHi = min(kOutH - 1, ph * kPoolSH - kPoolPadH + kPoolKH - 1);
            const int need = (rHi - rLo + 1) * kOutW;
            const int mine = min(to, (rHi + 1) * kOutW) - max(from, rLo * kOutW);
            if (need <= 0 || mine <= 0) continue;
            const int slot = (b * kTilesN + tileN) * kPoolOutH + ph;
            if (atomicAdd(&done[slot], mine) + mine == need) poolRows[atomicAdd(&poolCount, 1)] = b * kPoolOutH + ph;
        }
        asm volatile("bar.sync 1, %0;\n" ::"r"(kConsumers) : "memory");
        __threadfence();

        const int channels = min(kBN, kGemmN - n0), count = poolCount;
        for (int r = 0; r < count; ++r) {
            const int b = poolRows[r] / kPoolOutH, ph = poolRows[r] % kPoolOutH;
#pragma unroll 4
            for (int o = t; o < channels * kPoolOutW; o += kConsumers) {
                const int ch = n0 + o / kPoolOutW, pw = o % kPoolOutW;
                const long long plane = (long long)b * kGemmN + ch;
                pooled[(plane * kPoolOutH + ph) * kPoolOutW + pw] = pool_window<true>(out + plane * kPixels, ph, pw);
            }
        }
    }
