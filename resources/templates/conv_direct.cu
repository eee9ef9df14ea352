// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A convolution of any rank computed directly in fp32: {{OP}}, groups {{GROUPS}}.
//   x [{{BATCH}}, {{IN_C}}, {{IN_D}}, {{IN_H}}, {{IN_W}}] -> [{{BATCH}}, {{OUT_C}}, {{OUT_D}}, {{OUT_H}}, {{OUT_W}}]
//   (a 1-D or 2-D convolution has its missing dims at 1), window {{KD}}x{{KH}}x{{KW}}, stride
//   {{SD}}x{{SH}}x{{SW}}, padding {{PD}}x{{PH}}x{{PW}}, dilation {{DD}}x{{DH}}x{{DW}}.
// Each thread computes {{CO}} neighbouring output channels of one group at one output position: it
// reads each input value of the window once for all of them, and the weights it multiplies by are
// the same for the whole warp (consecutive threads take consecutive positions), so L1 broadcasts
// them. A transposed convolution is computed the same way, by gathering: output o takes input i
// through tap k where i * stride = o + padding - k * dilation. Offsets are 64-bit.
// @problem {{PROBLEM}}
// @precision fp32
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_direct grid({{GRID}}) block({{BLOCK}}) args({{X}}, {{WEIGHT}}, {{CONV_OUT}}{{EPILOGUE_ARGS}})
{{#POOL}}
// @launch pool_windows grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 256)) block(256) args(act, {{OUT}})
{{/POOL}}

{{>conv_direct_sizes}}

constexpr int kCinG = kInC / kGroups, kCoutG = kOutC / kGroups; // channels of one group
constexpr int kCoTiles = (kCoutG + kCo - 1) / kCo;
constexpr long long kSlots = kBatch * kGroups * kCoTiles * kOutSp;

// The input position that output position `o` reads through tap `k` along one dim, or -1 when
// it falls in the padding (or, transposed, between the strided inputs).
template <int kStride, int kPad, int kDil, int kIn>
__device__ __forceinline__ int source(int o, int k)
{
    if constexpr (!kTransposed) {
        const int i = o * kStride - kPad + k * kDil;
        return i >= 0 && i < kIn ? i : -1;
    } else {
        const int q = o + kPad - k * kDil;
        if (q < 0 || q % kStride != 0)
            return -1;
        const int i = q / kStride;
        return i < kIn ? i : -1;
    }
}

// Weight [out][in / groups][taps], or transposed [in][out / groups][taps].
__device__ __forceinline__ long long weightAt(int g, int ci, int coLocal, int tap)
{
    if constexpr (kTransposed)
        return ((long long)(g * kCinG + ci) * kCoutG + coLocal) * kTaps + tap;
    else
        return ((long long)(g * kCoutG + coLocal) * kCinG + ci) * kTaps + tap;
}

extern "C" __global__ void __launch_bounds__(kBlock)
conv_direct(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    const auto epilogue = [&](float acc, long long sp, long long co, long long n) -> float { return {{EPILOGUE}}; };
    for (long long s = (long long)blockIdx.x * kBlock + threadIdx.x; s < kSlots; s += (long long)gridDim.x * kBlock) {
        const long long sp = s % kOutSp; // output position, innermost
        const long long rest = s / kOutSp;
        const int tile = int(rest % kCoTiles);
        const int g = int(rest / kCoTiles % kGroups);
        const long long n = rest / kCoTiles / kGroups;
        const int ow = int(sp % kOutW), oh = int(sp / kOutW % kOutH), od = int(sp / ((long long)kOutW * kOutH));
        const int co0 = tile * kCo; // first output channel within the group

        float acc[kCo];
#pragma unroll
        for (int c = 0; c < kCo; ++c)
            acc[c] = 0.0f;
        const float *xg = x + (n * kInC + (long long)g * kCinG) * kInSp;
        for (int ci = 0; ci < kCinG; ++ci) {
            const float *xc = xg + ci * kInSp;
#pragma unroll 1
            for (int kd = 0; kd < kKD; ++kd) {
                const int id = source<kSD, kPD, kDD, kInD>(od, kd);
                if (id < 0)
                    continue;
#pragma unroll 4
                for (int kh = 0; kh < kKH; ++kh) {
                    const int ih = source<kSH, kPH, kDH, kInH>(oh, kh);
                    if (ih < 0)
                        continue;
                    const float *row = xc + ((long long)id * kInH + ih) * kInW;
#pragma unroll 4
                    for (int kw = 0; kw < kKW; ++kw) {
                        const int iw = source<kSW, kPW, kDW, kInW>(ow, kw);
                        if (iw < 0)
                            continue;
                        const float v = __ldg(row + iw);
                        const int tap = (kd * kKH + kh) * kKW + kw;
#pragma unroll
                        for (int c = 0; c < kCo; ++c) {
                            // Past the group's last channel (kCoutG not a multiple of kCo) the
                            // last one is read again and its sum never stored.
                            const int co = min(co0 + c, kCoutG - 1);
                            acc[c] = fmaf(v, __ldg(w + weightAt(g, ci, co, tap)), acc[c]);
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int c = 0; c < kCo; ++c) {
            if (co0 + c >= kCoutG)
                break;
            const long long co = (long long)g * kCoutG + co0 + c;
            out[(n * kOutC + co) * kOutSp + sp] = epilogue(acc[c], sp, co, n);
        }
    }
}
{{#POOL}}

// ---- the pooling of the convolution's result ----
{{>conv_pool}}
{{/POOL}}
