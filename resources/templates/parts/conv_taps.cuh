// Where a tap of the implicit GEMM reads x. Tap k = (c, t, r, s) is x[., c, t*dil, r*dil, s*dil]
// from a window's corner: an offset, and the shift of each spatial coordinate packed in one int
// for the bounds check. 2-D (and 1-D, height 1): row shift << 16 | column shift. 3-D: depth shift
// << 22 | row << 11 | column. A tap past K gets a shift that leaves every window (from -PAD) past
// the input (the row shift kOutside in 2-D, the depth shift 1023 in 3-D), and a pixel past M
// corners of kFar, which no shift brings back inside: both read as 0.
// 3-D packing wherever depth matters: a window that moves in depth, or a padded depth (whose
// windows may lie wholly outside). The ideas decide the same way (ideas_conv.cpp, Conv::deep).
constexpr bool kDeep = kInD > 1 || kKD > 1 || kOutD > 1 || kPadD > 0;
constexpr int kOutside = 0x4000;
constexpr int kFar = -2 * kOutside;
static_assert((long long)kBatch * kInC * kInD * kInH * kInW < (1LL << 31), "x offsets are 32-bit");
static_assert(kDeep || ((kKH - 1) * kDilH < kOutside && (kKW - 1) * kDilW < 0x10000 && kInH + kPadH <= kOutside),
              "sizes must fit the packed (r, s) shifts");
static_assert(!kDeep || ((kKD - 1) * kDilD < 1023 && (kKH - 1) * kDilH < 2048 && (kKW - 1) * kDilW < 2048 &&
                         kInD + kPadD <= 1023),
              "sizes must fit the packed (t, r, s) shifts");

__device__ __forceinline__ int2 tap_entry(int k)
{
    if (k >= kGemmK) return make_int2(0, kDeep ? int(1023u << 22) : kOutside << 16);
    const int c = k / (kKD * kKH * kKW), t = (k / (kKH * kKW)) % kKD, r = (k / kKW) % kKH, s = k % kKW;
    const int offset = ((c * kInD + t * kDilD) * kInH + r * kDilH) * kInW + s * kDilW;
    if (kDeep) return make_int2(offset, int(unsigned(t * kDilD) << 22 | unsigned(r * kDilH) << 11 | unsigned(s * kDilW)));
    return make_int2(offset, (r * kDilH) << 16 | (s * kDilW));
}

// Whether the tap with packed `shift` of the window with corner (d0, h0, w0) lies inside x.
__device__ __forceinline__ bool tap_inside(int d0, int h0, int w0, int shift)
{
    if (kDeep) {
        const unsigned u = unsigned(shift);
        return (unsigned)(d0 + int(u >> 22)) < (unsigned)kInD && (unsigned)(h0 + int((u >> 11) & 0x7ff)) < (unsigned)kInH &&
               (unsigned)(w0 + int(u & 0x7ff)) < (unsigned)kInW;
    }
    return (unsigned)(h0 + (shift >> 16)) < (unsigned)kInH && (unsigned)(w0 + (shift & 0xffff)) < (unsigned)kInW;
}

// Output pixel m = (b, od, oh, ow): its window's corner (d0, h0, w0) and that corner's offset in x.
__device__ __forceinline__ void pixel_corner(int m, int &offset, int &d0, int &h0, int &w0)
{
    offset = 0, d0 = h0 = w0 = kFar;
    if (m >= kGemmM) return;
    const int b = m / kPixels, p = m % kPixels;
    d0 = kDeep ? (p / (kOutH * kOutW)) * kStrideD - kPadD : 0;
    h0 = (kDeep ? (p / kOutW) % kOutH : p / kOutW) * kStrideH - kPadH;
    w0 = (p % kOutW) * kStrideW - kPadW;
    offset = b * kInC * kInD * kInH * kInW + (d0 * kInH + h0) * kInW + w0;
}
