// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// kSplit blocks per row. Block b works on chunk b / kRows of row b % kRows, so the blocks that run
// at the same time share a chunk of the affine weight and bias, which L2 then serves to every
// row. The first kernel writes each chunk's sums of d and d^2 (d = x - shift, the shift being the
// row's first element; double accumulators) to scratch. The second kernel combines the row's
// kSplit partials with one warp, in the same order in every block, and normalizes its chunk with
// float4 accesses; with kReverse it walks the blocks backwards, starting with the chunks the
// first kernel read last, which L2 may still hold. RMSNorm (kCentre false) sums x^2 only.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials float64 {{PARTIAL_COUNT}}
// @launch norm_partial_sums grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, partials)
// @launch norm_apply grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, partials, {{OUT}})

constexpr long long kRows = {{ROWS}};         // rows
constexpr long long kLen = {{LEN}};           // elements per row (the normalized dims)
constexpr int kSplit = {{SPLIT}};             // blocks per row
constexpr long long kChunk = kLen / kSplit;   // elements per block
constexpr int kBlock = {{BLOCK}};             // threads per block
constexpr int kVec = {{VEC}};                 // floats per load: 4 (float4) or 1
constexpr bool kReverse = {{REVERSE}};        // second kernel in reverse block order
constexpr int kWarps = kBlock / 32;
constexpr double kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};          // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{OUTPUT}}
{{>block_sum_double}}

__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_partial_sums({{IN_PARAMS}}, double* __restrict__ partials)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = blockIdx.x % kRows, part = blockIdx.x / kRows;
    const long long base = row * kLen + part * kChunk;
    const float shift = kCentre ? in.at(row * kLen) : 0.0f;

    double s1 = 0.0, s2 = 0.0;
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kChunk; j += 4 * kBlock) {
            const float4 d = minus(in.at4(base + j), shift);
            s1 += double(d.x) + double(d.y) + double(d.z) + double(d.w);
            s2 += double(d.x) * d.x + double(d.y) * d.y + double(d.z) * d.z + double(d.w) * d.w;
        }
    } else {
        for (long long j = threadIdx.x; j < kChunk; j += kBlock) {
            const double d = in.at(base + j) - shift;
            s1 += d;
            s2 += d * d;
        }
    }
    s1 = block_sum(s1);
    s2 = block_sum(s2);
    if (threadIdx.x == 0) {
        partials[2 * (row * kSplit + part)] = kCentre ? s1 : 0.0;
        partials[2 * (row * kSplit + part) + 1] = s2;
    }
}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_apply({{IN_PARAMS}}{{OUT_PARAMS}}, const double* __restrict__ partials, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long b = kReverse ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long row = b % kRows, part = b / kRows;
    const long long first = part * kChunk; // the chunk's first column
    const long long base = row * kLen + first;
    const float shift = kCentre ? in.at(row * kLen) : 0.0f;

    __shared__ float stats[2]; // mean of x - shift, 1 / sqrt(var + eps)
    if (threadIdx.x < 32) {
        double s1 = 0.0, s2 = 0.0;
        for (int p = threadIdx.x; p < kSplit; p += 32) {
            s1 += partials[2 * (row * kSplit + p)];
            s2 += partials[2 * (row * kSplit + p) + 1];
        }
        s1 = warp_sum(s1);
        s2 = warp_sum(s2);
        if (threadIdx.x == 0) {
            const double mean = s1 / kLen;
            const double var = fmax(s2 / kLen - mean * mean, 0.0);
            stats[0] = float(mean);
            stats[1] = float(1.0 / sqrt(var + kEps));
        }
    }
    __syncthreads();
    const float mean = stats[0], rstd = stats[1];

    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kChunk; j += 4 * kBlock) {
            const float4 d = minus(minus(in.at4(base + j), shift), mean);
            store4(out, base + j,
                   output.at4(base + j, make_float4(d.x * rstd, d.y * rstd, d.z * rstd, d.w * rstd)));
        }
    } else {
        for (long long j = threadIdx.x; j < kChunk; j += kBlock)
            out[base + j] = output.at(base + j, ((in.at(base + j) - shift) - mean) * rstd);
    }
}
