#pragma once
// Internal to the catalogue: the idea families (one file each) and the helpers they share.
#include "gen/builtin/catalogue.h"
#include "gen/builtin/codegen.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kf::builtin::ideas {

void addElementwise(std::vector<IdeaDef> &);
void addReduce(std::vector<IdeaDef> &);
void addReduceFused(std::vector<IdeaDef> &);
void addSoftmax(std::vector<IdeaDef> &);
void addNorm(std::vector<IdeaDef> &);
void addGemm(std::vector<IdeaDef> &);
void addConv(std::vector<IdeaDef> &);
void addConvDirect(std::vector<IdeaDef> &);
void addConvImage(std::vector<IdeaDef> &);
void addConvSlab(std::vector<IdeaDef> &);
void addGemv(std::vector<IdeaDef> &);
void addPool(std::vector<IdeaDef> &);
void addNormalize(std::vector<IdeaDef> &);
void addScan(std::vector<IdeaDef> &);

// A matrix-product idea that also answers for patterns with a tail (catalogue_products.cpp), and
// the candidate file of such a pattern.
IdeaDef forProducts(IdeaDef);
Result<std::string> renderProducts(const IdeaDef &, const Target &, const Point &);
// A chain's candidate file from its rendered stages (namespace name and text, in order; together
// they write every product), then the tail with the idea the cost model ranks first; `title` heads it.
Result<std::string> chainFile(const Target &, const std::vector<std::pair<std::string, std::string>> &stages,
                              const std::string &title);
// The target of stage i of a chain alone, on the chain's GPU.
Target productTarget(const Target &, std::size_t i);

inline std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// DRAM traffic over the minimum when the input is read `inputReads` times and the affine
// parameters `paramReads` times (the output is written once).
double traffic(const Target &, double inputReads, double paramReads = 1);
// Fraction of the GPU a grid keeps busy: half of an SM's 2048 threads in flight per SM is taken
// as enough to saturate memory with vector loads.
double busy(const Target &, double blocks, int threadsPerBlock);
std::string gridText(double blocks, int threadsPerBlock); // "16 blocks of 1024 threads"
std::string timesText(double reads);                      // "once", "twice", "three times"

// "" when `n` is a multiple of `by`, else the reason.
std::string multipleOf(std::int64_t n, std::int64_t by, const std::string &what);
// Registers a thread needs to hold `elems` floats plus the kernel's own state, against the SM's
// 65536 registers shared by `block` threads: "" when it fits without spilling.
std::string registersFit(int elems, int block);

// How well a kernel that holds `elems` floats per thread in registers, with `block` threads per
// block, hides memory latency: its bytes in flight per SM against the ~32 KB that keep an H100/H200
// SM's share of bandwidth busy; 1 when it has enough.
double inFlight(int elems, int block);
// "" when `threads` threads of `elems` values each (float4s) hold a row, or a chunk of one, of `span`
// elements without leaving more than half of them empty, in registers that fit; else why not.
std::string holds(std::int64_t span, int threads, int elems);
// A row held across a thread-block cluster of CLUSTER blocks of BLOCK threads, ELEMS values each
// (softmax_cluster, norm_cluster): "" when the point holds the row, else why not; and its cost, at
// `efficiency` of copy bandwidth for a full, well-occupied cluster.
std::string clusterRowFits(const Target &, const Point &);
Estimate clusterRowEstimate(const Target &, const Point &, double efficiency);

// Placeholders of every row template: ROWS, OUTER, LEN, INNER, INPUT (the Input struct), IN_PARAMS,
// IN_ARGS, IN_LAUNCH; and but for softmax and reductions, OUTPUT (the Output struct: what each
// output element is made of, from the row op's value), OUT_PARAMS, OUT_ARGS, OUT_LAUNCH.
// With `held`, Input and Output also have raw(i) and at_held(i, h[, acc]) for that tensor
// (emitProgram), for a kernel that keeps it in registers.
TemplateValues rowValues(const Target &, Loads loads = Loads::ReadOnly, const std::string &held = "");
// The Output program: the pattern's epilogue, after a norm's affine weight and bias.
EwProgram outputProgram(const Target &);
// The one tensor `program` reads, when it reads it only in place (readsOnlyInPlace), else "": what a
// kernel may load raw and hand to at_held.
std::string onlyTensorInPlace(const EwProgram &program);
// LayerNorm / RMSNorm: EPS, CENTRE (false for RMSNorm).
TemplateValues normValues(const Target &);

std::string doubleLiteral(double); // "1e-05"

// Kernels of a thread per VEC adjacent columns (parts/column_groups.cuh): the cost of reading the
// input `reads` times ("reads columns ..."), and their grid.
Estimate columnsEstimate(const Target &, const Point &, double reads, double vec4Efficiency, const std::string &what);
std::string columnsGrid(const Target &, const Point &);

// Blocks per row of a reduction spread over the GPU (parts/reduce_chunks.cuh): BLOCKS_PER_SM
// blocks on every SM, at least one load each.
std::int64_t gridSplit(const Target &, const Point &);

// ---- matrix products and convolutions (ideas_gemm.cpp) ----

// One tile configuration of a tensor-core or register-tiled template, as verified to compile
// without spills: the values of its dims by name.
using TileShape = std::vector<std::pair<std::string, int>>;
// The space of a tiled idea: one dim per name of the shapes (values in order of first use), and a
// check that admits only the listed combinations.
std::vector<ParamDim> tileSpace(const std::vector<TileShape> &shapes, const std::vector<std::string> &meanings);
std::string tileListed(const std::vector<TileShape> &shapes, const Point &);
// The longest K an mma.sync 3xTF32 product may sum on the tensor cores alone under the strict
// tolerance: their fp32 accumulation truncates (measured on an H200, uniform inputs: 1.4e-4 scaled
// error at K = 8192, 1.8e-3 at K = 524288; the seed matmul's K = 4096 passes).
constexpr std::int64_t kLongestTensorCoreSum = 4096;

// "" under the loose policy, else why a reduced-precision product is not admitted.
std::string needsLoose(const Target &, const std::string &what);

// "" where a 3xbf16 split keeps the strict tolerance, else why not: a `what` (a product, a
// convolution) that goes on to a tail, which can magnify its error.
std::string bf16x3Fits(const Target &, const std::string &what);

// A compute-bound kernel: the time of `flops` at `fraction` of the GPU's `peakTflops`, against the
// memory floor of the problem's bytes, spread over `tiles` blocks of `threads` threads with
// `perSm` resident per SM (waves: a partial last wave idles the rest of the GPU).
Estimate computeEstimate(const Target &, double flops, double peakTflops, double fraction, double tiles, int threads,
                         int perSm, const std::string &how);

// The epilogue placeholders of a GEMM or convolution template: EPILOGUE (a float expression of acc,
// row and col), EPILOGUE_PARAMS and EPILOGUE_ARGS. `program` is the pattern's epilogue with the
// product as Acc(0), `bias` an extra leaf added to the product first (tensor "" for none), scaled
// by `beta` while the product is scaled by `alpha`. Kernel parameters avoid the identifiers of
// template `id`.
TemplateValues epilogueValues(const std::string &id, const EwProgram &program, const Leaf &bias, double alpha,
                              double beta, const std::vector<IndexSegment> &index);

// "" when the convolution's result and operands are float32 tensors of the problem, else why not.
std::string convOperands(const Target &);
// "" when the pooling after a 2-D convolution is one parts/conv_pool.cuh computes, else why not.
std::string poolPassTakes(const Target &);
// Whether the implicit-GEMM ideas take the pattern's convolution (with its pooling, if any).
bool onTensorCores(const Target &);
// A 2-D convolution's pooling pass (parts/conv_pool.cuh): POOL_* placeholders, POOL and CONV_OUT
// (the scratch "act" the convolution writes and the pass reads); without a pooling, the same
// placeholders neutral and CONV_OUT the pattern's output.
TemplateValues poolPassValues(TemplateValues, const Target &);
TemplateValues noPoolValues(TemplateValues, const Target &);

// The one product of a Matmul pattern, as the templates take it.
struct Gemm {
    const GemmSpec *spec = nullptr;
    std::int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
    Shape out; // the product's shape, as the epilogue indexes it
};
// "" when the templates take the pattern's product (filled into `g`), else why not.
std::string gemmOf(const Target &, Gemm &g);
// "" when the product's A is stored by rows ([M, K]), else why a template that reads only such an A
// cannot take it.
std::string rowsOfA(const Gemm &g);
// The placeholders every product template shares: M, N, K, BATCH, the batch strides, TRANS_A,
// TRANS_B, A, B and the epilogue (for template `id`).
TemplateValues gemmValues(const std::string &id, const Target &);
// The matrix-vector idea that streams the pattern's product ("gemv_dot", "gemv_stream"), or "":
// the GEMM templates leave such products to it.
std::string gemvTakes(const Target &);

} // namespace kf::builtin::ideas
