// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A transposed convolution of any rank computed directly in fp32, a warp's outputs in one phase:
// {{OP}}, groups 1.
//   x [{{BATCH}}, {{IN_C}}, {{IN_D}}, {{IN_H}}, {{IN_W}}] -> [{{BATCH}}, {{OUT_C}}, {{OUT_D}}, {{OUT_H}}, {{OUT_W}}]
//   (a 1-D or 2-D convolution has its missing dims at 1), window {{KD}}x{{KH}}x{{KW}}, stride
//   {{SD}}x{{SH}}x{{SW}}, padding {{PD}}x{{PH}}x{{PW}}, dilation {{DD}}x{{DH}}x{{DW}}.
// Output o takes input i through tap k where i * stride = o + padding - k * dilation: which taps
// an output takes depends on o modulo the stride (its phase). A thread per output position would
// give neighbouring lanes different phases, so a warp would walk every tap with most lanes idle;
// here consecutive threads take the outputs of one phase along a row (o = j * stride + phase), so
// a warp walks only its phase's taps, and its input loads are one contiguous run. Each thread keeps
// {{CO}} output channels; the weights, [input channel][tap][output channel] in shared memory,
// are read 16 bytes at a time at one address for the whole warp (a broadcast), so each input
// value costs a load and CO / 4 shared reads for CO multiply-adds. Offsets are 64-bit.
// @problem {{PROBLEM}}
// @precision fp32
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_phased grid({{GRID}}) block({{BLOCK}}) smem({{SMEM}}) args({{X}}, {{WEIGHT}}, {{CONV_OUT}}{{EPILOGUE_ARGS}})
{{#POOL}}
// @launch pool_windows grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 256)) block(256) args(act, {{OUT}})
{{/POOL}}

{{>conv_direct_sizes}}
static_assert(kTransposed && kGroups == 1, "transposed, groups 1");
static_assert(kCo % 4 == 0, "16-byte weight reads");

constexpr int kCoTiles = (kOutC + kCo - 1) / kCo;
constexpr int kCoPad = kCoTiles * kCo; // output channels in shared memory, zero past kOutC
constexpr int kWeights = kInC * kTaps * kCoPad;
constexpr int kRowJ = (kOutW + kSW - 1) / kSW; // outputs of one phase in a row, at most
constexpr long long kSlots = kBatch * kCoTiles * kOutD * kOutH * kSW * kRowJ;

__host__ __device__ constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

// The taps of one dim that output position `o` takes: k = first + m * kStep for m < count, the
// input position in = at - m * kAtStep (checked against the input's bounds by the caller). The
// valid taps of a phase are one arithmetic run, so no list is kept.
template <int kK, int kStride, int kPad, int kDil>
struct Taps {
    static constexpr int kStep = kStride / gcd(kStride, kDil), kAtStep = kDil / gcd(kStride, kDil);
    int first = 0, count = 0, at = 0;
    __device__ __forceinline__ explicit Taps(int o)
    {
#pragma unroll
        for (int k = 0; k < (kStep < kK ? kStep : kK); ++k) {
            const int q = o + kPad - k * kDil;
            if (count == 0 && q % kStride == 0) {
                first = k, at = q / kStride;
                count = (kK - 1 - k) / kStep + 1;
            }
        }
    }
};

extern "C" __global__ void __launch_bounds__(kBlock)
conv_phased(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    const auto epilogue = [&](float acc, long long sp, long long co, long long n) -> float { return {{EPILOGUE}}; };
    // Weight [in][out][taps] -> [in][tap][out], once per block (the grid is a few blocks per SM).
    extern __shared__ float4 weights4[];
    float *weights = reinterpret_cast<float *>(weights4);
    for (int i = threadIdx.x; i < kWeights; i += kBlock) {
        const int co = i % kCoPad, tap = i / kCoPad % kTaps, ci = i / (kCoPad * kTaps);
        weights[i] = co < kOutC ? __ldg(w + ((long long)ci * kOutC + co) * kTaps + tap) : 0.0f;
    }
    __syncthreads();

    for (long long s = (long long)blockIdx.x * kBlock + threadIdx.x; s < kSlots; s += (long long)gridDim.x * kBlock) {
        const int j = int(s % kRowJ);
        long long rest = s / kRowJ;
        const int phase = int(rest % kSW);
        rest /= kSW;
        const int oh = int(rest % kOutH), od = int(rest / kOutH % kOutD);
        rest /= (long long)kOutH * kOutD;
        const int tile = int(rest % kCoTiles);
        const long long n = rest / kCoTiles;
        const int ow = j * kSW + phase;
        if (ow >= kOutW)
            continue;
        using TapsD = Taps<kKD, kSD, kPD, kDD>;
        using TapsH = Taps<kKH, kSH, kPH, kDH>;
        using TapsW = Taps<kKW, kSW, kPW, kDW>;
        const TapsD td(od);
        const TapsH th(oh);
        const TapsW tw(ow);

        float acc[kCo];
#pragma unroll
        for (int c = 0; c < kCo; ++c)
            acc[c] = 0.0f;
        const float *xn = x + n * kInC * kInSp;
        const float4 *wTile = weights4 + tile * (kCo / 4);
        for (int ci = 0; ci < kInC; ++ci) {
            const float *xc = xn + ci * kInSp;
            for (int a = 0; a < td.count; ++a) {
                const int id = td.at - a * TapsD::kAtStep;
                if (id < 0 || id >= kInD)
                    continue;
                for (int b = 0; b < th.count; ++b) {
                    const int ih = th.at - b * TapsH::kAtStep;
                    if (ih < 0 || ih >= kInH)
                        continue;
                    const float *row = xc + ((long long)id * kInH + ih) * kInW;
                    const int tapRow = ((td.first + a * TapsD::kStep) * kKH + th.first + b * TapsH::kStep) * kKW;
                    for (int e = 0; e < tw.count; ++e) {
                        const int iw = tw.at - e * TapsW::kAtStep;
                        if (iw < 0 || iw >= kInW)
                            continue;
                        const float v = __ldg(row + iw);
                        const float4 *wt = wTile + ((ci * kTaps + tapRow + tw.first + e * TapsW::kStep) * kCoPad) / 4;
#pragma unroll
                        for (int q = 0; q < kCo / 4; ++q) {
                            const float4 f = wt[q];
                            acc[4 * q] = fmaf(v, f.x, acc[4 * q]);
                            acc[4 * q + 1] = fmaf(v, f.y, acc[4 * q + 1]);
                            acc[4 * q + 2] = fmaf(v, f.z, acc[4 * q + 2]);
                            acc[4 * q + 3] = fmaf(v, f.w, acc[4 * q + 3]);
                        }
                    }
                }
            }
        }
        const long long sp = ((long long)od * kOutH + oh) * kOutW + ow;
#pragma unroll
        for (int c = 0; c < kCo; ++c) {
            const int co = tile * kCo + c;
            if (co >= kOutC)
                break;
            out[(n * kOutC + co) * kOutSp + sp] = epilogue(acc[c], sp, co, n);
        }
    }
}
{{#POOL}}

// ---- the pooling of the convolution's result ----
{{>conv_pool}}
{{/POOL}}
