// The protocol's values and their JSON forms: every struct survives a round trip through text,
// keys are snake_case, missing keys keep defaults, and non-finite numbers survive.
#include "eval/protocol.h"
#include "gpu/physical_floor.h"
#include "util/base64.h"

#include <QtTest>

#include <cmath>
#include <limits>
#include <set>

using namespace kf;
using nlohmann::json;

namespace {

// Through text, as on the wire.
template <typename T>
T roundTrip(const T &value, json *wire = nullptr)
{
    json j = value;
    std::string text = j.dump();
    json back = json::parse(text);
    if (wire)
        *wire = back;
    T out = back.get<T>();
    // Serialising again gives the same JSON: nothing was dropped on the way in.
    if (json(out) != j)
        qWarning("round trip differs:\n%s\n%s", j.dump().c_str(), json(out).dump().c_str());
    return out;
}

template <typename T>
bool sameJson(const T &a, const T &b)
{
    return json(a) == json(b);
}

EvalResult sampleResult()
{
    EvalResult r;
    r.verdict = Verdict::Racy;
    r.reason = "two runs on trial 0's inputs differ by 3e-3";
    r.precision = Precision::TF32x3;
    r.policy = Policy::Loose;
    TrialResult t;
    t.index = 2;
    t.seed = 0xfedcba9876543210ull;
    t.distribution = "laplace";
    t.randomParams = true;
    t.maxScaledError = 1.5e-5;
    t.maxAbsError = 2e-6;
    t.tolerance = 1e-2;
    t.passed = true;
    t.kernelbenchPassed = true;
    t.unwritten = 7;
    t.nonFinite = 3;
    t.note = "offset trial";
    r.trials = {t, TrialResult{}};
    r.maxScaledError = 1.5e-5;
    r.kernelbenchPassed = true;
    r.timing = Timing{1.25, 1.2, 1.6, 1.3, 1.21, 1.4, 100};
    r.floorMs = 0.75;
    r.resources["row_max"] = KernelResources{40, 4096, 16, 8, 12};
    r.compileLog = "ptxas info : Used 40 registers";
    r.compileSeconds = 1.3;
    r.sanitizerReport = "========= ERROR SUMMARY: 0 errors";
    return r;
}

} // namespace

class TestProtocol : public QObject {
    Q_OBJECT
private slots:
    // Each code has its own text, and the text reads back as the same code.
    void errorCodesTravelAsTheirText()
    {
        std::set<std::string> texts;
        for (int i = 0; i <= int(ErrorCode::WorkerStart); ++i) {
            const auto code = ErrorCode(i);
            const std::string text = toString(code);
            QVERIFY2(texts.insert(text).second, text.c_str());
            QVERIFY2(errorCodeFrom(text) == code, text.c_str());
        }
        QCOMPARE(toString(ErrorCode::NoGpu), std::string("no-gpu"));
        QVERIFY(errorCodeFrom("from-a-newer-worker") == ErrorCode::Worker);
    }

    void verdictNames_data()
    {
        QTest::addColumn<int>("verdict");
        QTest::addColumn<QString>("name");
        const char *names[] = {"queued",    "compiling", "compile error", "launch error", "wrong",
                               "racy",      "correct",   "crashed",       "timed out",    "suspect",
                               "needs gpu", "sanitizer", "inconsistent",  "engine error"};
        for (int i = 0; i < 14; ++i)
            QTest::newRow(names[i]) << i << QString(names[i]);
    }
    void verdictNames()
    {
        QFETCH(int, verdict);
        QFETCH(QString, name);
        auto v = static_cast<Verdict>(verdict);
        QCOMPARE(QString::fromStdString(toString(v)), name);
        QVERIFY(parseVerdict(name.toStdString()) == v);
    }
    void unknownVerdict()
    {
        QVERIFY(!parseVerdict("great"));
        QVERIFY(!parseVerdict(""));
        QVERIFY_THROWS_EXCEPTION(std::exception, (json{{"verdict", "great"}}.get<EvalResult>()));
    }

    void hello()
    {
        Hello h;
        h.worker = "0.1.0";
        h.torch = "2.11.0";
        h.cudaRuntime = 13000;
        h.cudaDriver = 13010;
        h.gpu = GpuInfo{true, "", "NVIDIA H200", "sm_90a", 9, 0, 132, 52428800, 150'000'000'000, 232448, 233472};
        json wire;
        Hello back = roundTrip(h, &wire);
        QVERIFY(sameJson(h, back));
        QCOMPARE(back.gpu.memoryBytes, std::int64_t(150'000'000'000));
        QCOMPARE(wire["cuda_runtime"].get<int>(), 13000);
        QCOMPARE(wire["gpu"]["l2_bytes"].get<std::int64_t>(), 52428800);
        QCOMPARE(wire["gpu"]["smem_per_block_optin"].get<int>(), 232448);
        QCOMPARE(wire["gpu"]["smem_per_sm"].get<int>(), 233472);
        QCOMPARE(wire["protocol"].get<int>(), kProtocolVersion);
    }
    void helloWithoutProtocolIsNoProtocol()
    {
        // A peer that does not name its protocol must fail the version check.
        QCOMPARE(json::object().get<Hello>().protocol, 0);
        GpuInfo none = json{{"present", false}, {"reason", "no CUDA driver (error 35)"}}.get<GpuInfo>();
        QVERIFY(!none.present);
        QCOMPARE(none.reason, std::string("no CUDA driver (error 35)"));
        QCOMPARE(none.sms, 0);
    }
    void ceilingsAndTiming()
    {
        Ceilings c{4020.5, {{"fp32", 51.2}, {"tf32", 378}, {"fp16", 756}, {"bf16", 740}}};
        json wire;
        QVERIFY(sameJson(c, roundTrip(c, &wire)));
        QCOMPARE(wire["bandwidth_gbs"].get<double>(), 4020.5);
        Timing t{1.5, 1.25, 2.5, 1.6, 1.3, 1.9, 100};
        Timing back = roundTrip(t, &wire);
        QCOMPARE(back.p90Ms, 1.9);
        QCOMPARE(back.trials, 100);
        QVERIFY(wire.contains("median_ms") && wire.contains("p10_ms"));
    }
    void loadedProblem()
    {
        LoadedProblem p;
        OpNode n{"aten::conv2d",
                 {"x", "weight", "bias"},
                 {"out"},
                 {{100, 3, 224, 224}, {96, 3, 11, 11}, {96}},
                 {{100, 96, 55, 55}},
                 json::array({nullptr, nullptr, nullptr, json::array({4, 4}), json::array({2, 2})}),
                 2.1e10};
        p.graph = {n, OpNode{"aten::relu", {"out"}, {"r"}, {{}}, {{}}, nullptr, 0}};
        p.flops = 2.1e10;
        p.flopsSource = "graph";
        p.bytes = 1.3e8;
        p.outputs = {TensorSpec{"out", {100, 96, 55, 55}, DType::F32}, TensorSpec{"idx", {4}, DType::I64}};
        json wire;
        LoadedProblem back = roundTrip(p, &wire);
        QVERIFY(sameJson(p, back));
        QCOMPARE(back.graph[0].inputShapes[1], (std::vector<std::int64_t>{96, 3, 11, 11}));
        QCOMPARE(back.graph[0].constants[3][1].get<int>(), 4);
        QVERIFY(back.outputs[1].dtype == DType::I64);
        QCOMPARE(wire["flops_source"].get<std::string>(), std::string("graph"));
        QVERIFY(wire["graph"][0].contains("output_shapes"));
    }
    void evalResult()
    {
        EvalResult r = sampleResult();
        json wire;
        EvalResult back = roundTrip(r, &wire);
        QVERIFY(sameJson(r, back));
        QVERIFY(back.verdict == Verdict::Racy);
        QVERIFY(back.precision == Precision::TF32x3);
        QVERIFY(back.policy == Policy::Loose);
        QCOMPARE(back.trials[0].seed, 0xfedcba9876543210ull);
        QCOMPARE(back.trials[0].unwritten, std::int64_t(7));
        QVERIFY(back.timing.has_value());
        QCOMPARE(back.timing->medianMs, 1.25);
        QCOMPARE(back.resources["row_max"].spillLoads, 12);
        QCOMPARE(wire["verdict"].get<std::string>(), std::string("racy"));
        QVERIFY(wire["trials"][0].contains("kernelbench_passed"));
        QVERIFY(wire.contains("sanitizer_report") && wire.contains("floor_ms"));
    }
    // The seed, the timed runs' check and the peak memory travel and are kept by a session.
    void evalResultWithTimingCheck()
    {
        EvalResult r = sampleResult();
        r.seed = 0x1234567890abcdefull;
        r.peakGpuBytes = 40'000'000'000;
        TimingCheck c;
        c.runs = 100;
        c.inputSets = 5;
        c.worstScaledError = 3e-6;
        c.physicalFloorMs = 0.0004;
        c.launchMs = 0.0025;
        c.floorNote = "the physical floor is below the cost of one launch";
        c.wallSeconds = 0.4;
        c.checkSeconds = 0.1;
        r.timingCheck = c;
        json wire;
        EvalResult back = roundTrip(r, &wire);
        QVERIFY(sameJson(r, back));
        QCOMPARE(back.seed, 0x1234567890abcdefull);
        QCOMPARE(back.peakGpuBytes, std::int64_t(40'000'000'000));
        QVERIFY(back.timingCheck && back.timingCheck->runs == 100 && back.timingCheck->inputSets == 5);
        QCOMPARE(back.timingCheck->floorNote, c.floorNote);
        QVERIFY(wire["timing_check"].contains("check_seconds"));
    }
    // A timed run that failed its check carries no time, and its verdict replaces "correct".
    void timedRunVerdicts()
    {
        TimedRun bad;
        bad.verdict = Verdict::Inconsistent;
        bad.reason = "timed run 3 of 100 failed its check";
        bad.check.runs = 3;
        json wire = bad;
        QVERIFY(!wire.contains("timing"));
        TimedRun back = wire.get<TimedRun>();
        QVERIFY(back.verdict == Verdict::Inconsistent && !back.timing && back.check.runs == 3);

        EvalResult r;
        r.verdict = Verdict::Correct;
        applyTimedRun(r, back);
        QVERIFY(r.verdict == Verdict::Inconsistent);
        QVERIFY(!r.timing);
        QCOMPARE(r.reason, bad.reason);

        TimedRun good;
        good.timing = Timing{0.5, 0.49, 0.6, 0.51, 0.49, 0.55, 100};
        EvalResult ok;
        ok.verdict = Verdict::Correct;
        applyTimedRun(ok, good);
        QVERIFY(ok.verdict == Verdict::Correct && ok.timing && ok.timingCheck);
        // A verdict the verification gave is never overwritten by the timing step.
        EvalResult wrong;
        wrong.verdict = Verdict::Wrong;
        applyTimedRun(wrong, bad);
        QVERIFY(wrong.verdict == Verdict::Wrong);
    }
    void evalResultWithoutTiming()
    {
        EvalResult r = sampleResult();
        r.timing.reset();
        json wire = r;
        QVERIFY(!wire.contains("timing"));
        QVERIFY(!wire.get<EvalResult>().timing);
        wire["timing"] = nullptr;
        QVERIFY(!wire.get<EvalResult>().timing);
    }
    void missingKeysKeepDefaults()
    {
        EvalResult r = json{{"verdict", "correct"}}.get<EvalResult>();
        QVERIFY(r.verdict == Verdict::Correct);
        QVERIFY(r.precision == Precision::FP32);
        QVERIFY(r.trials.empty());
        QVERIFY(!r.timing);
        QCOMPARE(json::object().get<TrialResult>().tolerance, 0.0);
        QCOMPARE(json::object().get<CompileOutput>().cubin, std::string());
        QCOMPARE(json::object().get<LoadedProblem>().graph.size(), std::size_t(0));
        // Keys a newer peer adds are ignored.
        Timing t = json{{"median_ms", 2.0}, {"started_ns", 123}}.get<Timing>();
        QCOMPARE(t.medianMs, 2.0);
        QVERIFY_THROWS_EXCEPTION(std::exception, json::array().get<Timing>());
    }
    void nonFiniteNumbers()
    {
        TrialResult t;
        t.maxScaledError = std::numeric_limits<double>::infinity();
        t.maxAbsError = std::numeric_limits<double>::quiet_NaN();
        json wire;
        TrialResult back = roundTrip(t, &wire);
        QCOMPARE(wire["max_scaled_error"].get<std::string>(), std::string("inf"));
        QVERIFY(std::isinf(back.maxScaledError) && back.maxScaledError > 0);
        QVERIFY(std::isnan(back.maxAbsError));
        QVERIFY(std::isinf(json{{"median_ms", "-inf"}}.get<Timing>().medianMs));
    }
    void compileOutput()
    {
        CompileOutput c;
        c.ok = true;
        c.arch = "sm_90a";
        c.log = "ptxas info    : Used 32 registers, 1024 bytes smem";
        c.diagnostics = {Diagnostic{12, "warning", "variable \"i\" was declared but never referenced"}};
        c.ptx = ".version 8.8\n.target sm_90a";
        for (int i = 0; i < 256; ++i)
            c.cubin += char(i); // NUL, 0xff, invalid UTF-8: all must survive
        c.loweredNames = {{"gemm<128>", "_Z4gemmILi128EEvPKfS1_Pf"}};
        c.resources["gemm<128>"] = KernelResources{128, 49152, 0, 4, 4};
        c.seconds = 1.31;
        c.cached = true;
        json wire;
        CompileOutput back = roundTrip(c, &wire);
        QVERIFY(sameJson(c, back));
        QCOMPARE(back.cubin, c.cubin);
        QCOMPARE(wire["cubin"].get<std::string>(), base64Encode(c.cubin));
        QCOMPARE(back.diagnostics[0].line, 12);
        QCOMPARE(back.loweredNames["gemm<128>"], std::string("_Z4gemmILi128EEvPKfS1_Pf"));
        QVERIFY(wire.contains("lowered_names"));
    }
    void base64Vectors_data()
    {
        QTest::addColumn<QByteArray>("plain");
        QTest::addColumn<QByteArray>("encoded");
        // RFC 4648, section 10.
        QTest::newRow("empty") << QByteArray("") << QByteArray("");
        QTest::newRow("f") << QByteArray("f") << QByteArray("Zg==");
        QTest::newRow("fo") << QByteArray("fo") << QByteArray("Zm8=");
        QTest::newRow("foo") << QByteArray("foo") << QByteArray("Zm9v");
        QTest::newRow("foob") << QByteArray("foob") << QByteArray("Zm9vYg==");
        QTest::newRow("fooba") << QByteArray("fooba") << QByteArray("Zm9vYmE=");
        QTest::newRow("foobar") << QByteArray("foobar") << QByteArray("Zm9vYmFy");
    }
    void base64Vectors()
    {
        QFETCH(QByteArray, plain);
        QFETCH(QByteArray, encoded);
        QCOMPARE(QByteArray::fromStdString(base64Encode(plain.toStdString())), encoded);
        QCOMPARE(QByteArray::fromStdString(base64Decode(encoded.toStdString())), plain);
    }
    void base64Binary()
    {
        std::string bytes;
        for (int n = 0; n < 1000; ++n)
            bytes += char((n * 37 + 11) & 0xff);
        for (std::size_t len : {0, 1, 2, 3, 4, 999, 1000}) {
            std::string part = bytes.substr(0, len);
            QCOMPARE(base64Decode(base64Encode(part)), part);
        }
        // Line breaks (as some encoders insert) are skipped.
        QCOMPARE(base64Decode("Zm9v\nYmFy\r\n"), std::string("foobar"));
    }
    void floor()
    {
        Ceilings c{2000, {{"fp32", 50}, {"tf32", 300}, {"fp16", 600}, {"bf16", 600}}};
        // Memory-bound: 4 GB at 2000 GB/s = 2 ms.
        QCOMPARE(floorMs(1e6, 4e9, Precision::FP32, c), 2.0);
        // Compute-bound: 1 TFLOP at 50 TFLOPS = 20 ms; TF32 at 300; 3xTF32 at 100.
        QCOMPARE(floorMs(1e12, 1e6, Precision::FP32, c), 20.0);
        QVERIFY(qFuzzyCompare(floorMs(3e12, 1e6, Precision::TF32, c), 10.0));
        QVERIFY(qFuzzyCompare(floorMs(3e12, 1e6, Precision::TF32x3, c), 30.0));
        QVERIFY(qFuzzyCompare(floorMs(6e12, 1e6, Precision::BF16, c), 10.0));
        // An unmeasured rate drops the compute term instead of guessing one.
        Ceilings partial{2000, {{"fp32", 50}}};
        QCOMPARE(floorMs(1e12, 4e9, Precision::FP16, partial), 2.0);
        QCOMPARE(floorMs(1e12, 4e9, Precision::FP16, Ceilings{}), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestProtocol)
#include "test_protocol.moc"
