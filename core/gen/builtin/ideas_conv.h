#pragma once
// Internal to the convolution ideas: a convolution as the implicit-GEMM templates see it, shared by
// the gathering templates (ideas_conv.cpp) and the prepared-image one (ideas_conv_image.cpp).
#include "gen/builtin/ideas.h"

#include <cstdint>
#include <string>

namespace kf::builtin::ideas {

// A 1-D or 2-D convolution is the 3-D one of depth (and height) 1: the same memory, fewer taps.
struct Conv {
    std::int64_t batch = 0, inC = 0, inD = 1, inH = 1, inW = 0, outC = 0, kd = 1, kh = 1, kw = 0, outD = 1, outH = 1,
                 outW = 0;
    std::int64_t strideD = 1, strideH = 1, strideW = 1, padD = 0, padH = 0, padW = 0, dilD = 1, dilH = 1, dilW = 1;
    // Transposed: one GEMM per output phase (stride per dim of them) over ceil(out / stride)
    // pixels per dim and the taps of the phase with most (parts/conv_phases.cuh).
    bool transposed = false;
    std::int64_t phaseTaps = 0;
    std::int64_t pixels() const { return outD * outH * outW; }
    std::int64_t gemmM() const { return batch * pixels(); }
    std::int64_t taps() const { return inC * kd * kh * kw; }
    std::int64_t phases() const { return transposed ? strideD * strideH * strideW : 1; }
    std::int64_t rowsM() const // GEMM rows of one phase
    {
        if (!transposed)
            return gemmM();
        auto q = [](std::int64_t out, std::int64_t s) { return (out + s - 1) / s; };
        return batch * q(outD, strideD) * q(outH, strideH) * q(outW, strideW);
    }
    std::int64_t tapsK() const { return transposed ? inC * phaseTaps : taps(); } // GEMM depth
    std::int64_t rows() const { return rowsM() * phases(); }                     // over all phases
    int tapBytes() const { return transposed ? 12 : 8; } // the tap table, and the weight offsets
    // Whether the gather packs depth shifts too: the rule of kDeep in parts/conv_taps.cuh.
    bool deep() const { return inD > 1 || kd > 1 || outD > 1 || padD > 0; }
    double flops() const { return 2.0 * double(rows()) * double(outC) * double(tapsK()); } // as computed
    // The GEMM, for an estimate's words.
    std::string gemmText() const
    {
        return " over " + std::to_string(rows()) + " pixels x " + std::to_string(outC) + " channels x " +
            std::to_string(tapsK()) + " taps" + (transposed ? " in " + std::to_string(phases()) + " phases" : "");
    }
};

// The pattern's convolution (groups 1), with a transposed one's phases; all zero when it has none.
Conv conv(const Target &);
// "" when the pattern is a convolution with only an elementwise epilogue, else why not;
// `transposedToo` admits transposed ones (the templates that gather them phase by phase).
std::string plainConv(const Target &, bool transposedToo = false);
// "" when the pattern is a convolution followed by a 2-D pooling the pooling pass computes.
std::string pooledConv(const Target &);
// The placeholders every convolution template shares: sizes, operands, the epilogue for `id`.
TemplateValues convValues(const std::string &id, const Target &);

} // namespace kf::builtin::ideas
