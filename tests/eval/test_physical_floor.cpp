// The one "faster than physics" rule (core/gpu/physical_floor.h): the floor from the higher of the
// measured and datasheet rates, the 90 % margin, and the note where a launch costs more than the floor.
#include "gpu/physical_floor.h"

#include <QTest>

using namespace kf;

class TestPhysicalFloor : public QObject {
    Q_OBJECT

    static Ceilings measured()
    {
        Ceilings c;
        c.bandwidthGBs = 4000; // GB/s
        c.tflops = {{"fp32", 50}, {"fp16", 700}};
        return c;
    }

private slots:
    void floorIsTheLargerTerm()
    {
        // 8e9 bytes at 4000 GB/s: 2 ms; 1e12 FLOPs at 700 TFLOP/s: 1.43 ms. No datasheet row.
        QVERIFY(qFuzzyCompare(gpu::physicalFloorMs(1e12, 8e9, measured(), "a GPU not in the table"), 2.0));
        // The datasheet's higher rates lower the floor (it must stay a lower bound).
        const double h200 = gpu::physicalFloorMs(1e12, 8e9, measured(), "NVIDIA H200");
        QVERIFY2(h200 < 2.0, qPrintable(QString::number(h200)));
    }

    void ceilingsMeasuredBesideOtherWorkAreImplausible()
    {
        // What a worker under compute-sanitizer measured on an H200 and once cached for every worker
        // after it: a hundred times too slow.
        Ceilings slow;
        slow.bandwidthGBs = 2134.9;
        slow.tflops = {{"fp32", 0.396}, {"tf32", 4.66}, {"fp16", 9.34}, {"bf16", 8.58}};
        const std::string why = gpu::implausibleCeilings(slow, "NVIDIA H200");
        QVERIFY2(why.find("bf16 measured 8.58 TFLOP/s, under 40 % of the datasheet's 989") == 0, why.c_str());
        // The H200's real measurement (docs/benchmarks/2026-12-02-h200-engine.md) is plausible.
        Ceilings real;
        real.bandwidthGBs = 4230;
        real.tflops = {{"fp32", 51}, {"tf32", 380}, {"fp16", 760}, {"bf16", 740}};
        QCOMPARE(gpu::implausibleCeilings(real, "NVIDIA H200"), std::string());
        // Bandwidth alone can give it away; a GPU without a datasheet row cannot be judged.
        real.bandwidthGBs = 900;
        QVERIFY(gpu::implausibleCeilings(real, "NVIDIA H200").find("bandwidth") == 0);
        QCOMPARE(gpu::implausibleCeilings(slow, "a GPU not in the table"), std::string());
    }

    void suspectUnderNinetyPercent()
    {
        const auto under = gpu::judgeAgainstFloor(1.7, 0, 8e9, measured(), "GPU", 0.003);
        QVERIFY(under.suspect);
        QVERIFY(under.reason.find("physical floor") != std::string::npos);
        QVERIFY(under.note.empty());
        const auto near = gpu::judgeAgainstFloor(1.85, 0, 8e9, measured(), "GPU", 0.003);
        QVERIFY2(!near.suspect, "within the 10 % margin for timing noise");
    }

    void saysWhenTheCheckCannotTell()
    {
        // 8 KB at 4000 GB/s: 2 ns, far below a 3 µs launch.
        const auto tiny = gpu::judgeAgainstFloor(0.004, 0, 8192, measured(), "GPU", 0.003);
        QVERIFY(!tiny.suspect);
        QVERIFY2(tiny.note.find("below the cost of one launch") != std::string::npos, tiny.note.c_str());
        const auto none = gpu::judgeAgainstFloor(0.004, 0, 0, measured(), "GPU", 0.003);
        QVERIFY(!none.suspect);
        QVERIFY(!none.note.empty());
    }
};

QTEST_GUILESS_MAIN(TestPhysicalFloor)
#include "test_physical_floor.moc"
