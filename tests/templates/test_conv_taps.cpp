// The implicit-GEMM convolutions gather x through parts/conv_taps.cuh: a table of tap offsets
// with packed shifts, and each output pixel's window corner. Compiled here for the host, the
// gather must give exactly the direct convolution's sums for 1-, 2- and 3-D shapes with stride,
// padding and dilation, and read nothing for taps past K or pixels past M. The same holds for the
// prepared image of conv_wgmma_image (parts/conv_image_taps.cuh): its runs, with the stride folded
// into the channels, give the direct convolution's sums; and for the slabs of conv_wgmma_slab
// (parts/conv_slab_taps.cuh), each tile's reads from its slab.
#include <QtTest>

#include <vector>

// What the parts need of CUDA, on the host.
#define __device__
#define __host__
#define __forceinline__ inline
struct int2 {
    int x, y;
};
static int2 make_int2(int a, int b) { return {a, b}; }

namespace {

constexpr int outSize(int in, int k, int stride, int pad, int dil)
{
    return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

struct Mismatch {
    int sums = 0, wrong = 0, pixel = -1, channel = -1;
    double got = 0, want = 0;
};

// Each shape defines the constants the templates define, then includes the part and the check.
namespace wide3d {
constexpr int kBatch = 2, kInC = 3, kInD = 5, kInH = 6, kInW = 7, kKD = 3, kKH = 3, kKW = 2;
constexpr int kStrideD = 2, kStrideH = 1, kStrideW = 2, kPadD = 1, kPadH = 2, kPadW = 0, kDilD = 1, kDilH = 2,
              kDilW = 1;
#include "conv_taps_check.inc"
} // namespace wide3d

namespace dilated3d { // no padding, dilation in depth
constexpr int kBatch = 1, kInC = 4, kInD = 4, kInH = 4, kInW = 4, kKD = 2, kKH = 2, kKW = 2;
constexpr int kStrideD = 1, kStrideH = 1, kStrideW = 1, kPadD = 0, kPadH = 0, kPadW = 0, kDilD = 2, kDilH = 1,
              kDilW = 1;
#include "conv_taps_check.inc"
} // namespace dilated3d

namespace strided2d {
constexpr int kBatch = 2, kInC = 2, kInD = 1, kInH = 9, kInW = 8, kKD = 1, kKH = 3, kKW = 3;
constexpr int kStrideD = 1, kStrideH = 2, kStrideW = 1, kPadD = 0, kPadH = 2, kPadW = 1, kDilD = 1, kDilH = 2,
              kDilW = 3;
#include "conv_taps_check.inc"
} // namespace strided2d

namespace paddedDepth { // a depth of 1 padded by 1 with stride 3: one output depth, all of it padding
constexpr int kBatch = 2, kInC = 2, kInD = 1, kInH = 5, kInW = 6, kKD = 1, kKH = 3, kKW = 3;
constexpr int kStrideD = 3, kStrideH = 1, kStrideW = 1, kPadD = 1, kPadH = 1, kPadW = 1, kDilD = 1, kDilH = 1,
              kDilW = 1;
#include "conv_taps_check.inc"
} // namespace paddedDepth

namespace long1d { // a row longer than the 2-D row shift's marker
constexpr int kBatch = 2, kInC = 2, kInD = 1, kInH = 1, kInW = 20000, kKD = 1, kKH = 1, kKW = 5;
constexpr int kStrideD = 1, kStrideH = 1, kStrideW = 2, kPadD = 0, kPadH = 0, kPadW = 4, kDilD = 1, kDilH = 1,
              kDilW = 2;
#include "conv_taps_check.inc"
} // namespace long1d

// Transposed convolutions, phase by phase (parts/conv_phases.cuh).
namespace doubling2d { // 4x4, stride 2, padding 1: every phase has 2x2 taps
constexpr int kBatch = 2, kInC = 3, kInD = 1, kInH = 5, kInW = 4, kKD = 1, kKH = 4, kKW = 4;
constexpr int kStrideD = 1, kStrideH = 2, kStrideW = 2, kPadD = 0, kPadH = 1, kPadW = 1, kDilD = 1, kDilH = 1,
              kDilW = 1, kOutPadD = 0, kOutPadH = 1, kOutPadW = 0;
#include "conv_phases_check.inc"
} // namespace doubling2d

namespace uneven3d { // 3x3x3, stride 2, padding 1, output padding 1: phases of 1 and 2 taps a dim
constexpr int kBatch = 2, kInC = 2, kInD = 3, kInH = 4, kInW = 3, kKD = 3, kKH = 3, kKW = 3;
constexpr int kStrideD = 2, kStrideH = 2, kStrideW = 2, kPadD = 1, kPadH = 1, kPadW = 1, kDilD = 1, kDilH = 1,
              kDilW = 1, kOutPadD = 1, kOutPadH = 1, kOutPadW = 1;
#include "conv_phases_check.inc"
} // namespace uneven3d

namespace dilated1d { // kernel 5, stride 3, dilation 2, padding 1: taps 3 apart within a phase
constexpr int kBatch = 2, kInC = 2, kInD = 1, kInH = 1, kInW = 9, kKD = 1, kKH = 1, kKW = 5;
constexpr int kStrideD = 1, kStrideH = 1, kStrideW = 3, kPadD = 0, kPadH = 0, kPadW = 1, kDilD = 1, kDilH = 1,
              kDilW = 2, kOutPadD = 0, kOutPadH = 0, kOutPadW = 2;
#include "conv_phases_check.inc"
} // namespace dilated1d

namespace emptyPhases2d { // stride 2, dilation 2, no padding: the odd phases get no tap at all
constexpr int kBatch = 1, kInC = 2, kInD = 1, kInH = 3, kInW = 4, kKD = 1, kKH = 2, kKW = 3;
constexpr int kStrideD = 1, kStrideH = 2, kStrideW = 2, kPadD = 0, kPadH = 0, kPadW = 0, kDilD = 1, kDilH = 2,
              kDilW = 2, kOutPadD = 0, kOutPadH = 1, kOutPadW = 1;
#include "conv_phases_check.inc"
} // namespace emptyPhases2d

// The prepared image (parts/conv_image_taps.cuh): 2-D and 1-D, undilated.
namespace imageAlexNet { // 11x11, stride 4, padding 2, 3 channels: 48 channels', 3x3 taps (one past the kernel)
constexpr int kBatch = 2, kInC = 3, kInH = 23, kInW = 19, kKH = 11, kKW = 11, kStrideH = 4, kStrideW = 4, kPadH = 2,
              kPadW = 2;
#include "conv_image_check.inc"
} // namespace imageAlexNet

namespace imageSame { // 3x3, stride 1, padding 1, 5 channels padded to 8
constexpr int kBatch = 2, kInC = 5, kInH = 7, kInW = 6, kKH = 3, kKW = 3, kStrideH = 1, kStrideW = 1, kPadH = 1,
              kPadW = 1;
#include "conv_image_check.inc"
} // namespace imageSame

namespace imageUneven { // stride 2 by 3, kernel 3 by 4, no padding: taps past the kernel in both dims
constexpr int kBatch = 1, kInC = 2, kInH = 9, kInW = 14, kKH = 3, kKW = 4, kStrideH = 2, kStrideW = 3, kPadH = 0,
              kPadW = 1;
#include "conv_image_check.inc"
} // namespace imageUneven

namespace image1d { // a 1-D convolution: height 1, stride 2, padding 3
constexpr int kBatch = 2, kInC = 4, kInH = 1, kInW = 40, kKH = 1, kKW = 7, kStrideH = 1, kStrideW = 2, kPadH = 0,
              kPadW = 3;
#include "conv_image_check.inc"
} // namespace image1d

// The slabs of conv_wgmma_slab (parts/conv_slab_taps.cuh), tiles as ideas_conv_slab.cpp picks them.
namespace slabAlexNet { // 11x11, stride 4, padding 2: 16-byte copies from a column before the padding
constexpr int kBatch = 2, kInC = 3, kInH = 60, kInW = 60, kKH = 11, kKW = 11, kStrideH = 4, kStrideW = 4, kPadH = 2,
              kPadW = 2, kDilH = 1, kDilW = 1;
constexpr int kTileW = 14, kTileH = 4, kVec = 4;
#include "conv_slab_check.inc"
} // namespace slabAlexNet

namespace slabDilated { // odd width (4-byte copies), dilation and stride differing by dim
constexpr int kBatch = 2, kInC = 3, kInH = 61, kInW = 59, kKH = 5, kKW = 3, kStrideH = 2, kStrideW = 3, kPadH = 1,
              kPadW = 2, kDilH = 2, kDilW = 1;
constexpr int kTileW = 21, kTileH = 3, kVec = 1;
#include "conv_slab_check.inc"
} // namespace slabDilated

namespace slabWide { // rows wider than a tile: three column tiles, the last of 4 pixels
constexpr int kBatch = 1, kInC = 2, kInH = 9, kInW = 132, kKH = 3, kKW = 3, kStrideH = 1, kStrideW = 1, kPadH = 1,
              kPadW = 1, kDilH = 1, kDilW = 1;
constexpr int kTileW = 64, kTileH = 1, kVec = 4;
#include "conv_slab_check.inc"
} // namespace slabWide

namespace slab1d { // 1-D, stride 2, dilation 2, padding 4
constexpr int kBatch = 2, kInC = 2, kInH = 1, kInW = 300, kKH = 1, kKW = 5, kStrideH = 1, kStrideW = 2, kPadH = 0,
              kPadW = 4, kDilH = 1, kDilW = 2;
constexpr int kTileW = 64, kTileH = 1, kVec = 4;
#include "conv_slab_check.inc"
} // namespace slab1d

} // namespace

class TestConvTaps : public QObject {
    Q_OBJECT
private slots:
    void gatherIsTheConvolution_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("3-D, stride, padding, dilation") << 0;
        QTest::newRow("3-D, dilated depth, no padding") << 1;
        QTest::newRow("2-D, stride, padding, dilation") << 2;
        QTest::newRow("1-D, 20000 long") << 3;
        QTest::newRow("3-D of depth 1, padded in depth") << 4;
        QTest::newRow("transposed 2-D, 4x4 stride 2") << 5;
        QTest::newRow("transposed 3-D, phases of 1 and 2 taps") << 6;
        QTest::newRow("transposed 1-D, stride 3, dilation 2") << 7;
        QTest::newRow("transposed 2-D, phases without taps") << 8;
        QTest::newRow("image: 11x11 stride 4 (space to depth)") << 9;
        QTest::newRow("image: 3x3 stride 1, channels padded") << 10;
        QTest::newRow("image: stride 2x3, taps past the kernel") << 11;
        QTest::newRow("image: 1-D, stride 2") << 12;
        QTest::newRow("slab: 11x11 stride 4, 16-byte copies") << 13;
        QTest::newRow("slab: odd width, dilated, uneven strides") << 14;
        QTest::newRow("slab: column tiles of a wide row") << 15;
        QTest::newRow("slab: 1-D, stride 2, dilation 2") << 16;
    }

    void gatherIsTheConvolution()
    {
        QFETCH(int, which);
        const Mismatch m = which == 0 ? wide3d::check()
            : which == 1              ? dilated3d::check()
            : which == 2              ? strided2d::check()
            : which == 3              ? long1d::check()
            : which == 4              ? paddedDepth::check()
            : which == 5              ? doubling2d::check()
            : which == 6              ? uneven3d::check()
            : which == 7              ? dilated1d::check()
            : which == 8              ? emptyPhases2d::check()
            : which == 9              ? imageAlexNet::check()
            : which == 10             ? imageSame::check()
            : which == 11             ? imageUneven::check()
            : which == 12             ? image1d::check()
            : which == 13             ? slabAlexNet::check()
            : which == 14             ? slabDilated::check()
            : which == 15             ? slabWide::check()
                                      : slab1d::check();
        QVERIFY2(m.sums > 0, "the shape has sums to compare");
        QVERIFY2(m.wrong == 0,
                 qPrintable(QString("%1 of %2 sums differ; first at pixel %3, channel %4: %5 instead of %6")
                                .arg(m.wrong)
                                .arg(m.sums)
                                .arg(m.pixel)
                                .arg(m.channel)
                                .arg(m.got)
                                .arg(m.want)));
    }
};

QTEST_APPLESS_MAIN(TestConvTaps)
#include "test_conv_taps.moc"
