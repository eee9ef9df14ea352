    // The tap table (parts/conv_taps.cuh): each tap's offset from a window's corner and its shifts;
    // transposed, phase f's taps (parts/conv_phases.cuh).
    for (int k = threadIdx.x; k < kKPadded; k += kThreads) {
        int wofs;
        taps[k] = kTransposed ? phase_tap_entry(k, f, wofs) : tap_entry(k);
    }
