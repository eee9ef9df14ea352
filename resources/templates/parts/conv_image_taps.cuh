// Where the prepared image of conv_wgmma_image reads x, and where its K order reads the weight.
// The image is [b][row][col][channel'] with channel' (c, u, v) of pixel (row, col) holding
// x[c][row * SH + u - PH][col * SW + v - PW] (the stride folded into the channels), zero outside x
// and past the kFolded channels' that x fills. The convolution is then one of stride 1 with
// kTapsH x kTapsW taps over the image; GEMM depth k = (dr, ds, channel') weighs the kernel tap
// (dr * SH + u, ds * SW + v), zero past the kernel. An output pixel's taps in one image row are one
// run of kRunK contiguous values from its window's corner. Needs the convolution's sizes (2-D or
// 1-D, undilated) and kTapsH, kTapsW, kImgH, kImgW, kImgC.
constexpr int kFolded = kInC * kStrideH * kStrideW; // channels' that hold x
constexpr int kRunK = kTapsW * kImgC;                // contiguous taps of a pixel in one image row
constexpr int kImageK = kTapsH * kRunK;              // GEMM depth
constexpr long long kImgPart = (long long)kBatch * kImgH * kImgW * kImgC;

// x's offset that image value (b, row, col, ch) holds, -1 for a zero.
__host__ __device__ __forceinline__ long long image_source(int b, int row, int col, int ch)
{
    const int c = ch / (kStrideH * kStrideW), u = (ch / kStrideW) % kStrideH, v = ch % kStrideW;
    const int h = row * kStrideH + u - kPadH, w = col * kStrideW + v - kPadW;
    if (ch >= kFolded || h < 0 || h >= kInH || w < 0 || w >= kInW) return -1;
    return (((long long)b * kInC + c) * kInH + h) * kInW + w;
}

// The weight's offset that B(n, k) holds ([N][C][KH][KW]), -1 for a zero.
__host__ __device__ __forceinline__ long long image_weight(int n, int k)
{
    if (n >= kOutC || k >= kImageK) return -1;
    const int dr = k / kRunK, ds = (k % kRunK) / kImgC, ch = k % kImgC;
    const int c = ch / (kStrideH * kStrideW), r = dr * kStrideH + (ch / kStrideW) % kStrideH,
              s = ds * kStrideW + ch % kStrideW;
    if (ch >= kFolded || r >= kKH || s >= kKW) return -1;
    return (((long long)n * kInC + c) * kKH + r) * kKW + s;
}

// Output pixel m's window corner in the image, -1 past M.
__host__ __device__ __forceinline__ int image_corner(int m)
{
    if (m >= kBatch * kOutH * kOutW) return -1;
    const int b = m / (kOutH * kOutW), p = m % (kOutH * kOutW);
    return ((b * kImgH + p / kOutW) * kImgW + p % kOutW) * kImgC;
}

// Tap k's offset from a window's corner (k < kImageK).
__host__ __device__ __forceinline__ int image_tap(int k) { return (k / kRunK) * kImgW * kImgC + k % kRunK; }
