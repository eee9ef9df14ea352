// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row, and the row lives in registers: each thread loads kElems values (kGroups
// float4s, kBlock float4s apart so loads coalesce), the block reduces the maximum and the sum of
// exponentials from registers, and the outputs are written from registers. One read and one
// write of the row. Slots past the end of the row hold -FLT_MAX, whose exp is 0.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch softmax_registers grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kElems = {{ELEMS}};              // row values per thread
constexpr int kGroups = kElems / 4;            // float4s per thread
constexpr long long kRowGroups = kLen / 4;     // float4s per row

{{INPUT}}
{{OUTPUT}}
{{^LOG}}
// softmax keeps exp(x - max) in registers; the output scales it by 1 / sum.
__device__ __forceinline__ float exp_sum(float4& v, float m)
{
    v = make_float4(expf(v.x - m), expf(v.y - m), expf(v.z - m), expf(v.w - m));
    return (v.x + v.y) + (v.z + v.w);
}
__device__ __forceinline__ float4 finish4(float4 v, float, float row_sum)
{
    const float scale = 1.0f / row_sum;
    return make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale);
}
{{/LOG}}
{{#LOG}}
// log_softmax keeps x in registers; the output is x - max - log(sum).
__device__ __forceinline__ float exp_sum(float4& v, float m)
{
    return (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
}
__device__ __forceinline__ float4 finish4(float4 v, float row_max, float row_sum)
{
    const float shift = row_max + logf(row_sum);
    return make_float4(v.x - shift, v.y - shift, v.z - shift, v.w - shift);
}
{{/LOG}}

{{>block_max_sum}}

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_registers({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;

    float4 v[kGroups];
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x; // float4 index within the row
        v[g] = k < kRowGroups ? in.at4(base + 4 * k) : make_float4(kLowest, kLowest, kLowest, kLowest);
    }

    float m = kLowest;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        m = fmaxf(m, fmaxf(fmaxf(v[g].x, v[g].y), fmaxf(v[g].z, v[g].w)));
    m = block_max(m);

    float s = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        s += exp_sum(v[g], m);
    s = block_sum(s);

#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x;
        if (k < kRowGroups)
            store4(out, base + 4 * k, output.at4(base + 4 * k, finish4(v[g], m, s)));
    }
}
