// The values of a tensor-core tile image: TF32 parts kept in floats, or fp16, or bf16.
// OperandType<kSixteen, kBf16>::Type names the type. split_value<T> splits x into hi + lo, each
// rounded to nearest in T (a single-pass product keeps hi alone); pack16<T> packs the 16 bytes of
// T that values already exact in T make (4 floats, or 8 16-bit values).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

{{>tf32_split}}

template <bool kSixteen, bool kBf16> struct OperandType { using Type = float; };
template <> struct OperandType<true, false> { using Type = __half; };
template <> struct OperandType<true, true> { using Type = __nv_bfloat16; };
template <typename T> constexpr bool kIsFp16 = false;
template <> constexpr bool kIsFp16<__half> = true;

template <typename T>
__device__ __forceinline__ void split_value(float x, float &hi, float &lo)
{
    if constexpr (sizeof(T) == 4) {
        hi = to_tf32(x);
        lo = to_tf32(x - hi);
    } else if constexpr (kIsFp16<T>) {
        hi = __half2float(__float2half_rn(x));
        lo = __half2float(__float2half_rn(x - hi));
    } else {
        hi = __bfloat162float(__float2bfloat16_rn(x));
        lo = __bfloat162float(__float2bfloat16_rn(x - hi));
    }
}

template <typename T>
__device__ __forceinline__ float4 pack16(const float *v)
{
    if constexpr (sizeof(T) == 4) {
        return make_float4(v[0], v[1], v[2], v[3]);
    } else {
        unsigned w[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if constexpr (kIsFp16<T>) {
                const __half2 h = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
                w[i] = *reinterpret_cast<const unsigned *>(&h);
            } else {
                const __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
                w[i] = *reinterpret_cast<const unsigned *>(&h);
            }
        }
        return make_float4(__uint_as_float(w[0]), __uint_as_float(w[1]), __uint_as_float(w[2]), __uint_as_float(w[3]));
    }
}
