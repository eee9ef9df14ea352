// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row, and the row lives in registers: each thread loads kElems values (kGroups
// float4s, kBlock float4s apart so loads coalesce). The statistics come from registers in two
// exact passes, the mean of d = x - shift (shift: the row's first element) and then the mean of
// (d - mean)^2, and the normalized row is written from registers. One read and one write.
// RMSNorm (kCentre false) takes the mean square of x instead.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch norm_registers grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};       // rows
constexpr long long kLen = {{LEN}};         // elements per row (the normalized dims)
constexpr int kBlock = {{BLOCK}};           // threads per block
constexpr int kElems = {{ELEMS}};           // row values per thread
constexpr int kGroups = kElems / 4;         // float4s per thread
constexpr long long kRowGroups = kLen / 4;  // float4s per row
constexpr int kWarps = kBlock / 32;
constexpr float kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};        // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{OUTPUT}}
{{>block_sum}}

__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }
__device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float squares4(float4 v) { return (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w); }

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_registers({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;
    const float shift = kCentre ? in.at(base) : 0.0f;

    float4 d[kGroups]; // x - shift; slots past the end of the row are never used
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x; // float4 index within the row
        d[g] = k < kRowGroups ? minus(in.at4(base + 4 * k), shift) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }

    float mean = 0.0f; // of x - shift
    if constexpr (kCentre) {
        float s = 0.0f;
#pragma unroll
        for (int g = 0; g < kGroups; ++g)
            if ((long long)g * kBlock + threadIdx.x < kRowGroups)
                s += sum4(d[g]);
        mean = block_sum(s) / kLen;
    }
    float squares = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        if ((long long)g * kBlock + threadIdx.x < kRowGroups)
            squares += squares4(minus(d[g], mean));
    const float rstd = 1.0f / sqrtf(block_sum(squares) / kLen + kEps);

#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x;
        if (k < kRowGroups) {
            const float4 c = minus(d[g], mean);
            store4(out, base + 4 * k, output.at4(base + 4 * k, make_float4(c.x * rstd, c.y * rstd, c.z * rstd, c.w * rstd)));
        }
    }
}
