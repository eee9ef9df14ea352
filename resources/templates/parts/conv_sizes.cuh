// Conv2D problem sizes (and the fused pooling's, 0 without one) as the implicit GEMM sees them.
constexpr int kBatch = {{BATCH}}, kInC = {{IN_C}}, kInH = {{IN_H}}, kInW = {{IN_W}};
constexpr int kOutC = {{OUT_C}}, kKH = {{KH}}, kKW = {{KW}};
constexpr int kStrideH = {{STRIDE_H}}, kStrideW = {{STRIDE_W}}, kPadH = {{PAD_H}}, kPadW = {{PAD_W}};
constexpr int kDilH = {{DIL_H}}, kDilW = {{DIL_W}};
constexpr int kOutH = {{OUT_H}}, kOutW = {{OUT_W}};
constexpr int kPoolKH = {{POOL_KH}}, kPoolKW = {{POOL_KW}}, kPoolSH = {{POOL_SH}}, kPoolSW = {{POOL_SW}};
constexpr int kPoolPadH = {{POOL_PAD_H}}, kPoolPadW = {{POOL_PAD_W}};
constexpr int kPoolOutH = {{POOL_OUT_H}}, kPoolOutW = {{POOL_OUT_W}};
constexpr bool kPool = kPoolKH > 0;

constexpr int kPixels = kOutH * kOutW;
constexpr int kGemmM = kBatch * kPixels;   // output pixels
constexpr int kGemmN = kOutC;              // output channels
constexpr int kGemmK = kInC * kKH * kKW;   // taps
