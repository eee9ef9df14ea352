// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Pooling over the last one, two or three dims with windows of many taps (an adaptive average
// pooling to a few outputs, a large max pooling): a warp per output window. The lanes take the
// window's taps in turn, so the 32 lanes of a warp read 32 consecutive inputs of a window row (one
// or more whole cache lines) instead of 32 threads reading 32 windows a window's width apart. Each
// lane keeps the maximum (NaN wins, as in PyTorch) or the sum of its taps, the warp merges them by
// shuffles, and lane 0 divides an average by the window's size as PyTorch counts it. The input
// comes through Input (any elementwise ops before the pooling) and the output through Output (any
// after it); indices are 64-bit.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch pool_warp grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

{{>pool_window_sizes}}
constexpr int kWarps = kBlock / 32;
constexpr int kTaps = kKD * kKH * kKW;
constexpr long long kWindows = kPlanes * kOD * kOH * kOW;
static_assert(kBlock % 32 == 0, "whole warps");

{{INPUT}}
{{OUTPUT}}
extern "C" __global__ void __launch_bounds__(kBlock)
pool_warp({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const int lane = threadIdx.x % 32;
    for (long long win = (long long)blockIdx.x * kWarps + threadIdx.x / 32; win < kWindows;
         win += (long long)gridDim.x * kWarps) {
        const int ow = int(win % kOW), oh = int(win / kOW % kOH), od = int(win / ((long long)kOW * kOH) % kOD);
        const long long plane = win / ((long long)kOW * kOH * kOD) * kD * kH * kW;
        const int d0 = od * kSD - kPD, h0 = oh * kSH - kPH, w0 = ow * kSW - kPW;
        float acc = kMax ? -__int_as_float(0x7f800000) : 0.0f;
#pragma unroll 4
        for (int t = lane; t < kTaps; t += 32) {
            const int j = t % kKW, i = t / kKW % kKH, a = t / (kKW * kKH);
            const int d = d0 + a * kDD, h = h0 + i * kDH, w = w0 + j * kDW;
            if (d < 0 || d >= kD || h < 0 || h >= kH || w < 0 || w >= kW)
                continue;
            acc = merge(acc, in.at(plane + ((long long)d * kH + h) * kW + w));
        }
#pragma unroll
        for (int step = 16; step > 0; step >>= 1)
            acc = merge(acc, __shfl_xor_sync(0xffffffffu, acc, step));
        if (lane == 0) {
            float v = acc;
            if constexpr (!kMax)
                v = acc / float(window_count(d0, h0, w0));
            out[win] = output.at(win, v);
        }
    }
}
