    // The tap table (parts/conv_taps.cuh): each tap's offset from a window's corner and its shifts.
    for (int k = threadIdx.x; k < kKPadded; k += kThreads) taps[k] = tap_entry(k);
