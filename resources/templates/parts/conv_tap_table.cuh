    // Tap k = (c, r, s): offset of x[., c, r*dil, s*dil] from a window's corner, and the packed shift.
    for (int k = threadIdx.x; k < kKPadded; k += kThreads) {
        int2 e = make_int2(0, kOutside << 16);
        if (k < kGemmK) {
            const int c = k / (kKH * kKW), r = (k / kKW) % kKH, s = k % kKW;
            e = make_int2((c * kInH + r * kDilH) * kInW + s * kDilW, (r * kDilH) << 16 | (s * kDilW));
        }
        taps[k] = e;
    }
