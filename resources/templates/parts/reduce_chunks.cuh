// The first pass of a reduction spread over the GPU: kSplit blocks per row, block b reducing
// chunk b % kSplit (kChunk loads of kVec floats) of row b / kSplit into a partial in scratch, each
// thread with kUnroll loads in flight. Rows are read 16 bytes at a time when each starts on a
// 16-byte boundary (kLen a multiple of 4, or one row); the last block of a row also takes the
// kLen % 4 elements after its whole float4 groups. Needs kRows, kLen, kSplit, kBlock, kUnroll, kInterleave, the
// Input and Reduction structs; include reduction_tree after it.
constexpr int kVec = kLen >= 4 && (kLen % 4 == 0 || kRows == 1) ? 4 : 1; // floats per load
constexpr long long kGroups = kLen / kVec;                    // whole loads per row
constexpr long long kChunk = (kGroups + kSplit - 1) / kSplit; // loads per block
static_assert(kChunk > 0, "every block has loads to make");
static_assert(sizeof(Reduction::Acc) <= 16, "a partial has 16 bytes of scratch");

{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_chunks({{IN_PARAMS}}, Reduction::Acc* __restrict__ partials)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = blockIdx.x / kSplit, part = blockIdx.x % kSplit;
    // Chunked: the block walks its own kChunk loads. Interleaved: the row's blocks take turns of
    // kBlock loads, so what the whole grid has in flight lies in one narrow window of the row.
    const long long begin = kInterleave ? part * kBlock : part * kChunk; // in loads
    const long long end = kInterleave || begin + kChunk >= kGroups ? kGroups : begin + kChunk;
    constexpr long long kStride = kInterleave ? (long long)kSplit * kBlock : kBlock; // between a thread's loads
    const long long base = row * kLen;
    Reduction::Acc acc = Reduction::identity();
    for (long long g = begin + threadIdx.x; g < end; g += kStride * kUnroll) {
        float4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (g + u * kStride < end)
                v[u] = load(in, base + kVec * (g + u * kStride));
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (g + u * kStride < end)
                acc = fold(acc, v[u], kVec * (g + u * kStride));
    }
    if constexpr (kVec == 4 && kLen % 4 != 0) {
        if (blockIdx.x % kSplit == kSplit - 1 && threadIdx.x < kLen % 4) {
            const long long j = kGroups * 4 + threadIdx.x;
            acc = Reduction::combine(acc, Reduction::lift(in.at(base + j), j));
        }
    }
    acc = block_reduce<kBlock>(acc);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = acc;
}

// A row's kSplit partials combined by kThreads threads in a fixed order; every thread gets the value.
template <int kThreads>
__device__ Reduction::Acc row_partials(const Reduction::Acc* __restrict__ partials, long long row)
{
    Reduction::Acc acc = Reduction::identity();
    for (int s = threadIdx.x; s < kSplit; s += kThreads)
        acc = Reduction::combine(acc, partials[row * kSplit + s]);
    return block_reduce<kThreads>(acc);
}
