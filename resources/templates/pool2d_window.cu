// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Pooling over the last one, two or three dims (a 1-D window is a 2-D one of height 1, a 2-D one
// a 3-D one of depth 1), each thread kOuts adjacent outputs of one output row: it walks each
// output's window (kKD x kKH x kKW taps, dilated by kDD x kDH x kDW, starting kPD / kPH / kPW before
// the input) and keeps the maximum (NaN wins, as in PyTorch) or the sum, divided by the window's
// size as PyTorch counts it (with or without the padding, or a fixed divisor). Consecutive threads
// take consecutive outputs, so a warp's loads of one input row fall on a few cache lines and L1
// serves the windows' overlap. The input comes through Input (any elementwise ops before the
// pooling) and every output through Output (any after it); indices are 64-bit.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch pool2d grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

{{>pool_window_sizes}}
constexpr int kOuts = {{OUTS}};                      // adjacent outputs per thread
constexpr int kRowSlots = (kOW + kOuts - 1) / kOuts; // threads per output row
constexpr long long kSlots = kPlanes * kOD * kOH * kRowSlots;
constexpr bool kStore4 = kOuts == 4 && kOW % 4 == 0; // 16-byte stores of whole groups

{{INPUT}}
{{OUTPUT}}
// The pooled value of output (od, oh, ow) of the volume that starts at `plane`.
__device__ __forceinline__ float pool_at(const Input &in, long long plane, int od, int oh, int ow)
{
    const int d0 = od * kSD - kPD, h0 = oh * kSH - kPH, w0 = ow * kSW - kPW;
    float acc = kMax ? -__int_as_float(0x7f800000) : 0.0f;
#pragma unroll 2
    for (int a = 0; a < kKD; ++a) {
        const int d = d0 + a * kDD;
        if (d < 0 || d >= kD)
            continue;
#pragma unroll 4
        for (int i = 0; i < kKH; ++i) {
            const int h = h0 + i * kDH;
            if (h < 0 || h >= kH)
                continue;
            const long long row = plane + ((long long)d * kH + h) * kW;
#pragma unroll 4
            for (int j = 0; j < kKW; ++j) {
                const int w = w0 + j * kDW;
                if (w < 0 || w >= kW)
                    continue;
                acc = merge(acc, in.at(row + w));
            }
        }
    }
    if constexpr (kMax)
        return acc;
    else
        return acc / float(window_count(d0, h0, w0));
}

extern "C" __global__ void __launch_bounds__(kBlock)
pool2d({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    for (long long s = (long long)blockIdx.x * kBlock + threadIdx.x; s < kSlots; s += (long long)gridDim.x * kBlock) {
        const long long planeIndex = s / ((long long)kOD * kOH * kRowSlots);
        const int od = int(s / ((long long)kOH * kRowSlots) % kOD);
        const int oh = int(s / kRowSlots % kOH), ow0 = int(s % kRowSlots) * kOuts;
        const long long plane = planeIndex * kD * kH * kW;
        const long long o = ((planeIndex * kOD + od) * kOH + oh) * kOW + ow0; // the first output's index
        if constexpr (kStore4) {
            const float4 v = make_float4(pool_at(in, plane, od, oh, ow0), pool_at(in, plane, od, oh, ow0 + 1),
                                         pool_at(in, plane, od, oh, ow0 + 2), pool_at(in, plane, od, oh, ow0 + 3));
            *reinterpret_cast<float4*>(out + o) = output.at4(o, v);
        } else {
#pragma unroll
            for (int k = 0; k < kOuts; ++k)
                if (ow0 + k < kOW)
                    out[o + k] = output.at(o + k, pool_at(in, plane, od, oh, ow0 + k));
        }
    }
}
