// The pooling templates' geometry: volumes, window, stride, padding, dilation, and how to reduce.
constexpr long long kPlanes = {{PLANES}};            // batch x channels
constexpr int kD = {{IN_D}}, kH = {{IN_H}}, kW = {{IN_W}};     // input volume
constexpr int kOD = {{OUT_D}}, kOH = {{OUT_H}}, kOW = {{OUT_W}}; // output volume
constexpr int kKD = {{KD}}, kKH = {{KH}}, kKW = {{KW}};        // window
constexpr int kSD = {{STRIDE_D}}, kSH = {{STRIDE_H}}, kSW = {{STRIDE_W}};
constexpr int kPD = {{PAD_D}}, kPH = {{PAD_H}}, kPW = {{PAD_W}};
constexpr int kDD = {{DIL_D}}, kDH = {{DIL_H}}, kDW = {{DIL_W}};
constexpr bool kMax = {{MAX}};                       // max pooling; else average
constexpr bool kCountPad = {{COUNT_PAD}};            // average: padded taps count in the divisor
constexpr int kDivisor = {{DIVISOR}};                // average: a fixed divisor, 0 when none
constexpr int kBlock = {{BLOCK}};                    // threads per block
