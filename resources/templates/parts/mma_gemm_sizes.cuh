// ---- problem sizes and tile shapes ----
// Those of every mma.sync GEMM (mma_gemm_tiles in TF32, gemm_mma_fp16); each then sets its MMA
// depth kMmaK and its shared-memory stage layout.
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}};  // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)
// The tensor-core tiles read A's rows K-contiguous; the ideas refuse an A stored [K, M].
constexpr bool kTransA = {{TRANS_A}};
static_assert(!kTransA, "the mma templates read A stored [M, K]");

constexpr int kBM = {{BM}}, kBN = {{BN}}, kBK = {{BK}};  // block tile
constexpr int kWM = {{WM}}, kWN = {{WN}};                // warp tile
constexpr int kGroupM = {{GROUP_M}};
constexpr int kMinBlocks = {{MIN_BLOCKS}};

constexpr int kWarpsM = kBM / kWM, kWarpsN = kBN / kWN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMmaM = 16, kMmaN = 8;                      // the m16n8 output tile of mma.sync
constexpr int kFragsM = kWM / kMmaM, kFragsN = kWN / kMmaN;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesM = cdiv(kM, kBM), kTilesN = cdiv(kN, kBN), kTilesK = cdiv(kK, kBK);

// 16-byte global accesses when every row starts on a 16-byte boundary, else 4-byte ones.
constexpr int kVecA = (kK % 4 == 0 && kBatchStrideA % 4 == 0) ? 4 : 1;
constexpr int kVecB = ((kTransB ? kK : kN) % 4 == 0 && kBatchStrideB % 4 == 0) ? 4 : 1;

static_assert(kBM % kWM == 0 && kBN % kWN == 0, "the warp tile must divide the block tile");
static_assert(kWM % kMmaM == 0 && kWN % 16 == 0, "warp tile: WM a multiple of 16, WN of 16");
