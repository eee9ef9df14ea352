// @expect wrong
// @problem softmax
// Writes 0 to every output element. Softmax outputs at the seed size are ~1/65536 = 1.5e-5, so
// a plain allclose(atol=1e-4) would accept this; the scale-aware rule
// |out - ref| <= tol * (|ref| + rms(ref)) does not (the error equals |ref|, far above 1e-4 of it).
// @precision fp32
// @launch write_zeros grid(cdiv(out.numel, 256)) block(256) args(out, i64(out.numel))

extern "C" __global__ void write_zeros(float* __restrict__ out, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 0.0f;
}
