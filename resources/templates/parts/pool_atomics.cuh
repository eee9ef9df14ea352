// What a pooling fused into a convolution's tiles combines with: a window split between blocks is
// reduced by each block over the part it holds, then merged into the output with an atomic, onto
// a first launch's fill (-inf for a max, 0 for an average's sum of parts).

// Float max through integer atomics: non-negative floats order as signed ints, negative ones
// reversed as unsigned ints; -inf (the fill) is below everything.
__device__ __forceinline__ void atomic_max_float(float *dst, float v)
{
    v += 0.0f; // -0 -> +0
    if (v >= 0.0f) atomicMax(reinterpret_cast<int *>(dst), __float_as_int(v));
    else atomicMin(reinterpret_cast<unsigned *>(dst), __float_as_uint(v));
}

extern "C" __global__ void pool_fill(float *__restrict__ out)
{
    constexpr long long kCount = (long long)kBatch * kOutC * kPoolOutH * kPoolOutW;
    const long long i0 = (long long)blockIdx.x * 1024 + threadIdx.x;
#pragma unroll
    for (int q = 0; q < 4; ++q)
        if (i0 + q * 256 < kCount) out[i0 + q * 256] = kPoolMax ? -__int_as_float(0x7f800000) : 0.0f;
}
