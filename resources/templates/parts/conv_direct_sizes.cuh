// The direct convolutions' sizes (a 1-D or 2-D convolution has its missing dims at 1), and those
// of the pooling pass after a 2-D one (0 without one).
constexpr long long kBatch = {{BATCH}};
constexpr int kInC = {{IN_C}}, kOutC = {{OUT_C}}, kGroups = {{GROUPS}};
constexpr int kInD = {{IN_D}}, kInH = {{IN_H}}, kInW = {{IN_W}};
constexpr int kOutD = {{OUT_D}}, kOutH = {{OUT_H}}, kOutW = {{OUT_W}};
constexpr int kKD = {{KD}}, kKH = {{KH}}, kKW = {{KW}};
constexpr int kSD = {{SD}}, kSH = {{SH}}, kSW = {{SW}};
constexpr int kPD = {{PD}}, kPH = {{PH}}, kPW = {{PW}};
constexpr int kDD = {{DD}}, kDH = {{DH}}, kDW = {{DW}};
constexpr bool kTransposed = {{TRANSPOSED}};
constexpr int kBlock = {{BLOCK}};
constexpr int kCo = {{CO}}; // output channels per thread
constexpr int kTaps = kKD * kKH * kKW;
constexpr long long kInSp = (long long)kInD * kInH * kInW, kOutSp = (long long)kOutD * kOutH * kOutW;

constexpr int kPixels = kOutH * kOutW;
constexpr int kPoolKH = {{POOL_KH}}, kPoolKW = {{POOL_KW}}, kPoolSH = {{POOL_SH}}, kPoolSW = {{POOL_SW}};
constexpr int kPoolPadH = {{POOL_PAD_H}}, kPoolPadW = {{POOL_PAD_W}};
constexpr int kPoolOutH = {{POOL_OUT_H}}, kPoolOutW = {{POOL_OUT_W}};
constexpr bool kPool = kPoolKH > 0;
