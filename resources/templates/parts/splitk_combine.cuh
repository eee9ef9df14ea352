// With K split into kSlices slices: every output's partial sums ([slice][batch][M][N], of type
// Partial) added in slice order, in double, so the result is the same in every run; then the
// epilogue (a function of acc, row, col and batch) into C.
extern "C" __global__ void __launch_bounds__(256)
splitk_combine(const Partial* __restrict__ partials, float* __restrict__ C{{EPILOGUE_PARAMS}})
{
    const long long outputs = (long long)kBatch * kM * kN;
    const long long o = (long long)blockIdx.x * 256 + threadIdx.x;
    if (o >= outputs)
        return;
    const int batch = int(o / ((long long)kM * kN)), row = int(o / kN % kM), col = int(o % kN);
    double sum = 0.0;
    for (int s = 0; s < kSlices; ++s)
        sum += partials[s * outputs + o];
    const float acc = float(sum);
    C[batch * kBatchStrideC + (long long)row * kN + col] = {{EPILOGUE}};
}
