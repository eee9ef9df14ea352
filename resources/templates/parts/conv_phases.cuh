// A transposed convolution, one phase at a time (TRANSPOSED). Output o = q * stride + phase (each
// dim) takes input i = (o + pad - k * dil) / stride through the taps k where that division is
// exact. For one phase those are k0, k0 + step, ... (n of them), the same for every q, and
// i = q + emin + shift with shift = (n - 1 - j) * step * dil / stride >= 0 for the j-th: an
// ordinary gather from a window corner, so the tap and row tables work as for a convolution.
// The kernels take blockIdx.x % kPhases as the phase. A phase's GEMM: M = batch x ceil(out /
// stride) per dim (a row past the output is skipped), K = channels x the phase's taps; kTapsK is
// the largest phase's, and a phase with fewer reads zeros past its own. The weight is [in][out][taps]: B(n, k) is gathered
// through a third table of each tap's weight offset. Without TRANSPOSED the sizes are the plain
// convolution's (kRowsM = kGemmM, kTapsK = kGemmK, one phase) and the callers use conv_taps'
// tap_entry and pixel_corner instead of the phase functions. Needs kTransposed and conv_taps.
constexpr int kKernelTaps = kKD * kKH * kKW;

struct PhaseDim {
    int phase, k0, step, n, emin;
};
struct Phase {
    PhaseDim d, h, w;
    int taps; // n of the three dims together
};

// The taps of one dim that feed outputs of `phase`.
template <int kS, int kP, int kDil, int kK>
__host__ __device__ constexpr PhaseDim phase_dim(int phase)
{
    PhaseDim r{phase, 0, 1, 0, 0};
    int last = 0;
    for (int k = 0; k < kK; ++k)
        if ((phase + kP - k * kDil) % kS == 0) {
            if (r.n == 0) r.k0 = k;
            last = k;
            ++r.n;
        }
    if (r.n > 1) r.step = (last - r.k0) / (r.n - 1);
    r.emin = r.n > 0 ? (phase + kP - last * kDil) / kS : 0;
    return r;
}

template <int kS, int kP, int kDil, int kK>
__host__ __device__ constexpr int most_phase_taps()
{
    int most = 0;
    for (int p = 0; p < kS; ++p) {
        const int n = phase_dim<kS, kP, kDil, kK>(p).n;
        most = n > most ? n : most;
    }
    return most;
}

constexpr int kQD = kTransposed ? (kOutD + kStrideD - 1) / kStrideD : kOutD;
constexpr int kQH = kTransposed ? (kOutH + kStrideH - 1) / kStrideH : kOutH;
constexpr int kQW = kTransposed ? (kOutW + kStrideW - 1) / kStrideW : kOutW;
constexpr int kPhaseTaps = kTransposed ? most_phase_taps<kStrideD, kPadD, kDilD, kKD>() *
                                             most_phase_taps<kStrideH, kPadH, kDilH, kKH>() *
                                             most_phase_taps<kStrideW, kPadW, kDilW, kKW>()
                                       : kKernelTaps;
constexpr int kPhases = kTransposed ? kStrideD * kStrideH * kStrideW : 1;
constexpr int kRowsM = kBatch * kQD * kQH * kQW; // GEMM rows (of one phase)
constexpr int kTapsK = kInC * kPhaseTaps;        // GEMM depth (of the phase with most taps)
// A tap past a phase's K shifts every corner (from -(K-1)*dil) past the input.
static_assert(!kTransposed || (kDeep ? kInD + (kKD - 1) * kDilD <= 1023 : kInH + (kKH - 1) * kDilH <= kOutside),
              "sizes must fit the packed shifts");

__device__ __forceinline__ Phase phase_of(int z)
{
    Phase f{};
    if constexpr (kTransposed) {
        f.d = phase_dim<kStrideD, kPadD, kDilD, kKD>(z / (kStrideH * kStrideW));
        f.h = phase_dim<kStrideH, kPadH, kDilH, kKH>((z / kStrideW) % kStrideH);
        f.w = phase_dim<kStrideW, kPadW, kDilW, kKW>(z % kStrideW);
        f.taps = f.d.n * f.h.n * f.w.n;
    }
    return f;
}

// Tap k of the phase: its offset and shifts in x (as tap_entry), and its weight offset at output
// channel 0 in `wofs` (-1 past the phase's K).
__device__ __forceinline__ int2 phase_tap_entry(int k, const Phase &f, int &wofs)
{
    if (k >= kInC * f.taps) {
        wofs = -1;
        return make_int2(0, kDeep ? int(1023u << 22) : kOutside << 16);
    }
    const int c = k / f.taps, t = k % f.taps;
    const int jd = t / (f.h.n * f.w.n), jh = (t / f.w.n) % f.h.n, jw = t % f.w.n;
    const int t0 = (f.d.n - 1 - jd) * f.d.step * kDilD / kStrideD;
    const int r0 = (f.h.n - 1 - jh) * f.h.step * kDilH / kStrideH;
    const int s0 = (f.w.n - 1 - jw) * f.w.step * kDilW / kStrideW;
    wofs = c * kOutC * kKernelTaps +
           ((f.d.k0 + jd * f.d.step) * kKH + f.h.k0 + jh * f.h.step) * kKW + f.w.k0 + jw * f.w.step;
    const int offset = ((c * kInD + t0) * kInH + r0) * kInW + s0;
    if (kDeep) return make_int2(offset, int(unsigned(t0) << 22 | unsigned(r0) << 11 | unsigned(s0)));
    return make_int2(offset, r0 << 16 | s0);
}

// GEMM row m of the phase: its window corner (as pixel_corner).
__device__ __forceinline__ void phase_pixel_corner(int m, const Phase &f, int &offset, int &d0, int &h0, int &w0)
{
    offset = 0, d0 = h0 = w0 = kFar;
    if (m >= kRowsM) return;
    const int b = m / (kQD * kQH * kQW), q = m % (kQD * kQH * kQW);
    const int qd = q / (kQH * kQW), qh = (q / kQW) % kQH, qw = q % kQW;
    if (qd * kStrideD + f.d.phase >= kOutD || qh * kStrideH + f.h.phase >= kOutH || qw * kStrideW + f.w.phase >= kOutW)
        return;
    d0 = qd + f.d.emin, h0 = qh + f.h.emin, w0 = qw + f.w.emin;
    offset = b * kInC * kInD * kInH * kInW + (d0 * kInH + h0) * kInW + w0;
}

// The output pixel (b * kPixels + p) that GEMM row m of the phase computes, -1 for none.
__device__ __forceinline__ int phase_out_pixel(int m, const Phase &f)
{
    if (m >= kRowsM) return -1;
    const int b = m / (kQD * kQH * kQW), q = m % (kQD * kQH * kQW);
    const int od = (q / (kQH * kQW)) * kStrideD + f.d.phase, oh = ((q / kQW) % kQH) * kStrideH + f.h.phase,
              ow = (q % kQW) * kStrideW + f.w.phase;
    if (od >= kOutD || oh >= kOutH || ow >= kOutW) return -1;
    return b * kPixels + (od * kOutH + oh) * kOutW + ow;
}
