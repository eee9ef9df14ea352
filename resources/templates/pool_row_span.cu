// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Pooling over the last one, two or three dims with overlapping or adjacent windows along a row
// (a 1-D window is a 2-D one of height 1, a 2-D one a 3-D one of depth 1). Each thread takes kOuts
// adjacent outputs of one output row; for each window row it loads the span of input those outputs
// read (kSpan values) into registers once, 16 bytes at a time where the spans start on 16-byte
// boundaries, and every output takes its taps from there. A thread per output, or one walking each
// window of its few outputs, loads each input once per window it falls in (KW times at stride 1).
// Padding loads as the value that changes nothing (-inf for a maximum, zero for a sum), so the
// windows need no per-tap bounds. The warp then writes its outputs, one contiguous range, through
// shared memory, so each store instruction covers whole lines. The maximum lets NaN win, as in
// PyTorch; an average divides by the window's size as PyTorch counts it. The input comes through
// Input (any elementwise ops before the pooling) and every output through Output (any after it);
// indices are 64-bit.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch pool_span grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

{{>pool_window_sizes}}
constexpr int kOuts = {{OUTS}};                                    // adjacent outputs per thread
constexpr int kSpan = (kOuts - 1) * kSW + (kKW - 1) * kDW + 1;     // inputs a thread's outputs read in a row
constexpr int kRowSlots = (kOW + kOuts - 1) / kOuts;               // threads per output row
constexpr long long kSlots = kPlanes * kOD * kOH * kRowSlots;
constexpr int kWarps = kBlock / 32;
// A thread's span starts at ow0 * kSW - kPW, ow0 a multiple of kOuts: with rows of a multiple of 4
// and kOuts * kSW a multiple of 4, every span starts kLead values past a 16-byte boundary, and a
// 16-byte piece of a row lies wholly inside or wholly outside it.
constexpr bool kLoad4 = kW % 4 == 0 && (kOuts * kSW) % 4 == 0;
constexpr int kLead = kLoad4 ? (4 - kPW % 4) % 4 : 0;
constexpr int kLoaded = kLoad4 ? (kLead + kSpan + 3) / 4 * 4 : kSpan;
static_assert(kBlock % 32 == 0, "whole warps");
// Blocks for half of an SM's 2048 threads: up to 64 registers each (left to itself, ptxas kept 32
// at 256 threads and spilled the span).
constexpr int kMinBlocks = 32 * 32 / kBlock;

{{INPUT}}
{{OUTPUT}}
// The value a tap outside the input adds: nothing.
__device__ __forceinline__ float neutral() { return kMax ? -__int_as_float(0x7f800000) : 0.0f; }

// The span of input row `row` (w from `first`) into v: v[kLead + t] is input column first + t.
__device__ __forceinline__ void load_span(const Input &in, long long row, int first, float (&v)[kLoaded])
{
    if constexpr (kLoad4) {
        const int start = first - kLead; // a multiple of 4
#pragma unroll
        for (int q = 0; q < kLoaded / 4; ++q) {
            const int w = start + 4 * q;
            const float4 f = (w >= 0 && w < kW) ? in.at4(row + w) : make_float4(neutral(), neutral(), neutral(), neutral());
            v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int t = 0; t < kSpan; ++t) {
            const int w = first + t;
            v[t] = (w >= 0 && w < kW) ? in.at(row + w) : neutral();
        }
    }
}

// Place i of a warp's staged outputs.
__device__ __forceinline__ int padded(long long i) { return int(i + i / 32); }

extern "C" __global__ void __launch_bounds__(kBlock, kMinBlocks)
pool_span({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    // A warp's outputs, staged for whole-line stores; one float of padding every 32 keeps both the
    // writes (kOuts apart) and the reads (consecutive) free of bank conflicts.
    __shared__ float staged[kWarps][(32 + 1) * kOuts];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    // The loop runs per warp (its first slot), so every lane reaches the warp's barriers.
    for (long long first = ((long long)blockIdx.x * kBlock + warp * 32); first < kSlots;
         first += (long long)gridDim.x * kBlock) {
        const long long s = first + lane;
        const bool active = s < kSlots;
        const long long r = active ? s / kRowSlots : 0;     // output row: (plane, od, oh)
        const int ow0 = active ? int(s % kRowSlots) * kOuts : 0;
        const int oh = int(r % kOH), od = int(r / kOH % kOD);
        const long long plane = r / ((long long)kOH * kOD) * kD * kH * kW;
        const int d0 = od * kSD - kPD, h0 = oh * kSH - kPH, w0 = ow0 * kSW - kPW;
        float acc[kOuts];
#pragma unroll
        for (int o = 0; o < kOuts; ++o) acc[o] = neutral();
        if (active) {
            for (int a = 0; a < kKD; ++a) {
                const int d = d0 + a * kDD;
                if (d < 0 || d >= kD)
                    continue;
                for (int i = 0; i < kKH; ++i) {
                    const int h = h0 + i * kDH;
                    if (h < 0 || h >= kH)
                        continue;
                    float v[kLoaded];
                    load_span(in, plane + ((long long)d * kH + h) * kW, w0, v);
#pragma unroll
                    for (int o = 0; o < kOuts; ++o)
#pragma unroll
                        for (int j = 0; j < kKW; ++j) acc[o] = merge(acc[o], v[kLead + o * kSW + j * kDW]);
                }
            }
        }
        // Outputs of consecutive slots are consecutive (rows follow rows): the warp's run starts at
        // its first slot's first output.
        const long long base = (first / kRowSlots) * kOW + int(first % kRowSlots) * kOuts;
        const long long mine = r * kOW + ow0 - base;
#pragma unroll
        for (int o = 0; o < kOuts; ++o) {
            if (!active || ow0 + o >= kOW)
                continue;
            float v = acc[o];
            if constexpr (!kMax)
                v /= float(window_count(d0, h0, w0 + o * kSW));
            staged[warp][padded(mine + o)] = v;
        }
        __syncwarp();
        const long long last = min(first + 31, kSlots - 1);
        const long long end = (last / kRowSlots) * kOW + min(int(last % kRowSlots) * kOuts + kOuts, kOW);
#pragma unroll
        for (int q = 0; q < kOuts; ++q) {
            const long long o = base + q * 32 + lane;
            if (o < end)
                out[o] = output.at(o, staged[warp][padded(q * 32 + lane)]);
        }
        __syncwarp();
    }
}
