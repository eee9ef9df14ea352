// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D + epilogue + max pooling, fused: an implicit GEMM on tensor cores whose epilogue pools.
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}}, dilation {{DIL_H}}x{{DIL_W}} -> [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], the epilogue (bias, ReLU, ...),
//   then max pooling {{POOL_KH}}x{{POOL_KW}}, stride {{POOL_SH}}x{{POOL_SW}}, padding {{POOL_PAD_H}}x{{POOL_PAD_W}} -> out [{{BATCH}}, {{OUT_C}}, {{POOL_OUT_H}}, {{POOL_OUT_W}}].
// Idea: the convolution is the implicit GEMM of conv_implicit_gemm (M = output pixels, N = output
// channels, Kdim = C*KH*KW taps gathered through shared tables of precomputed offsets), with
// {{SPLIT}} TF32 pass(es) per product (3: the compensated split a_hi*b_hi + a_hi*b_lo + a_lo*b_hi,
// fp32-accurate; 1: single-pass TF32, loose). The conv output never goes to memory: each block
// writes its tile (after the epilogue) into shared memory, then computes every pooling window that
// touches the tile over the part it holds. A window held entirely by the block is stored; a window
// split between blocks is combined with an atomic float max into `out`, which a first launch fills
// with -inf. One conv pass, no intermediate tensor, ~2 global atomics per split window.
// Tiles: block {{BM}}x{{BN}}x{{BK}}, warp {{WM}}x{{WN}}, {{STAGES}}-stage cp.async pipeline, at least
// {{MIN_BLOCKS}} block(s) per SM. Edge tiles are predicated, so any sizes work.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @launch pool_fill grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 1024)) block(256) args({{OUT}})
// @launch conv_pool grid(cdiv({{BATCH}} * {{OUT_D}} * {{OUT_H}} * {{OUT_W}}, {{BM}}), cdiv({{OUT_C}}, {{BN}})) block(({{BM}} / {{WM}}) * ({{BN}} / {{WN}}) * 32) smem({{STAGES}} * ({{BM}} + {{BN}}) * ({{BK}} + 4) * 4 + cdiv({{IN_C}} * {{KD}} * {{KH}} * {{KW}}, {{BK}}) * {{BK}} * 8 + {{BM}} * 16) args({{X}}, {{WEIGHT}}, {{OUT}}{{EPILOGUE_ARGS}})

{{>conv_mma_tiles}}

// ---- max pooling and the product's passes ----
constexpr int kPoolKH = {{POOL_KH}}, kPoolKW = {{POOL_KW}}, kPoolSH = {{POOL_SH}}, kPoolSW = {{POOL_SW}};
constexpr int kPoolPadH = {{POOL_PAD_H}}, kPoolPadW = {{POOL_PAD_W}};
constexpr int kPoolOutH = {{POOL_OUT_H}}, kPoolOutW = {{POOL_OUT_W}};
constexpr int kSplit = {{SPLIT}};          // TF32 passes per product: 3 (compensated split) or 1
// After the main loop the stages hold the block's conv tile, channel-major: [BN][BM+4].
constexpr int kLdC = kBM + 4;
static_assert(kSplit == 1 || kSplit == 3, "SPLIT is 1 (TF32) or 3 (3xTF32)");
static_assert(kBN * kLdC <= kStages * kStageFloats, "the conv tile must fit where the stages were");

// x = hi + lo, both TF32.
__device__ __forceinline__ void split_tf32(unsigned x, unsigned &hi, unsigned &lo)
{
    const float f = __uint_as_float(x);
    hi = to_tf32(f);
    lo = to_tf32(f - __uint_as_float(hi));
}


// One BK-deep slice of the warp tile, one 8-deep step at a time (one step's fragments live).
__device__ __forceinline__ void mma_stage(float (&acc)[kFragsM][kFragsN][4], const float *sA, const float *sB,
                                          int warpRow, int warpCol, int lane)
{
#pragma unroll 1
    for (int kk = 0; kk < kBK; kk += kMmaK) {
        unsigned aHi[kFragsM][4], aLo[kFragsM][4], bHi[kFragsN][2], bLo[kFragsN][2];
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) {
            unsigned a[4];
            load_frag_a(a, sA, warpRow + i * kMmaM, kk, lane);
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                if constexpr (kSplit == 3) split_tf32(a[r], aHi[i][r], aLo[i][r]);
                else aHi[i][r] = to_tf32(__uint_as_float(a[r]));
            }
        }
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
            unsigned b[2][2];
            load_frag_b2(b, sB, warpCol + j * kMmaN, kk, lane);
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    if constexpr (kSplit == 3) split_tf32(b[jj][r], bHi[j + jj][r], bLo[j + jj][r]);
                    else bHi[j + jj][r] = to_tf32(__uint_as_float(b[jj][r]));
                }
        }
        // Small terms first, so they are not lost against the large running sum.
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) {
                if constexpr (kSplit == 3) {
                    mma_tf32(acc[i][j], aLo[i], bHi[j]);
                    mma_tf32(acc[i][j], aHi[i], bLo[j]);
                }
                mma_tf32(acc[i][j], aHi[i], bHi[j]);
            }
    }
}

// ---- pooling ----
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
        if (i0 + q * 256 < kCount) out[i0 + q * 256] = -__int_as_float(0x7f800000);
}

// Pools every window that touches the conv tile held in sC ([BN][BM+4], rows m0 .. m1-1).
__device__ __forceinline__ void pool_tile(float *__restrict__ out, const float *sC, int m0, int n0)
{
    const int m1 = min(m0 + kBM, kGemmM);
    for (int b = m0 / kPixels; b <= (m1 - 1) / kPixels; ++b) {
        // Conv rows of image b in the tile, and the pooled rows whose windows reach them.
        const int ohLo = max(m0 - b * kPixels, 0) / kOutW;
        const int ohHi = (min(m1 - b * kPixels, kPixels) - 1) / kOutW;
        const int firstReach = ohLo + kPoolPadH - kPoolKH + 1;
        const int phLo = firstReach <= 0 ? 0 : (firstReach + kPoolSH - 1) / kPoolSH;
        const int phHi = min(kPoolOutH - 1, (ohHi + kPoolPadH) / kPoolSH);
        const int rowsPh = phHi - phLo + 1;
        const int items = rowsPh * kPoolOutW * kBN;
        for (int it = threadIdx.x; it < items; it += kThreads) {
            const int pw = it % kPoolOutW, ph = phLo + (it / kPoolOutW) % rowsPh, n = it / (kPoolOutW * rowsPh);
            if (n0 + n >= kGemmN) continue;
            float v = -__int_as_float(0x7f800000);
            int held = 0, valid = 0;
#pragma unroll
            for (int kh = 0; kh < kPoolKH; ++kh)
#pragma unroll
                for (int kw = 0; kw < kPoolKW; ++kw) {
                    const int oh = ph * kPoolSH - kPoolPadH + kh, ow = pw * kPoolSW - kPoolPadW + kw;
                    if (oh < 0 || oh >= kOutH || ow < 0 || ow >= kOutW) continue;
                    ++valid;
                    const int m = b * kPixels + oh * kOutW + ow;
                    if (m < m0 || m >= m1) continue;
                    ++held;
                    v = fmaxf(v, sC[n * kLdC + (m - m0)]);
                }
            if (held == 0) continue;
            float *dst = out + (((long long)b * kOutC + n0 + n) * kPoolOutH + ph) * kPoolOutW + pw;
            if (held == valid) *dst = v;           // the whole window is in this block
            else atomic_max_float(dst, v);         // shared with a neighbouring block
        }
    }
}

// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
conv_pool(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
{{>conv_mma_mainloop}}

    __syncthreads(); // every warp is done with the stages: they now hold the conv tile

    // Epilogue: a function of acc, row (the output pixel m) and col (the output channel), into sC.
    float *sC = smem;
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = warpRow + i * kMmaM + g + 8 * h;
            if (m0 + r >= kGemmM) continue;
#pragma unroll
            for (int j = 0; j < kFragsN; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int c = warpCol + j * kMmaN + 2 * t + e;
                    if (n0 + c < kGemmN) sC[c * kLdC + r] = epilogue(acc[i][j][2 * h + e], m0 + r, n0 + c);
                }
        }
    __syncthreads();
    pool_tile(out, sC, m0, n0);
}
