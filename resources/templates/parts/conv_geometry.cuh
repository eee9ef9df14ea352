// A convolution as the implicit GEMM sees it (a 1-D or 2-D one has its missing dims at 1).
constexpr int kBatch = {{BATCH}}, kInC = {{IN_C}}, kInD = {{IN_D}}, kInH = {{IN_H}}, kInW = {{IN_W}};
constexpr int kOutC = {{OUT_C}}, kKD = {{KD}}, kKH = {{KH}}, kKW = {{KW}};
constexpr int kStrideD = {{STRIDE_D}}, kStrideH = {{STRIDE_H}}, kStrideW = {{STRIDE_W}};
constexpr int kPadD = {{PAD_D}}, kPadH = {{PAD_H}}, kPadW = {{PAD_W}};
constexpr int kDilD = {{DIL_D}}, kDilH = {{DIL_H}}, kDilW = {{DIL_W}};
constexpr int kOutD = {{OUT_D}}, kOutH = {{OUT_H}}, kOutW = {{OUT_W}};

constexpr int kPixels = kOutD * kOutH * kOutW;
constexpr int kGemmM = kBatch * kPixels;   // output pixels
constexpr int kGemmN = kOutC;              // output channels
constexpr int kGemmK = kInC * kKD * kKH * kKW; // taps
