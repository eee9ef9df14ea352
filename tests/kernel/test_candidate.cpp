// Candidate directives: parsing, checking against a problem, resolving launch expressions.
#include "kernel/candidate.h"

#include <QtTest>

using namespace kf;

namespace {

// A small softmax-like problem: x [B, N] -> out [B, N], plus a parameter w [N].
Problem smallProblem()
{
    Problem p;
    p.name = "softmax";
    p.constants = {{"B", 8}, {"N", 1024}};
    InputSpec x;
    x.name = "x";
    x.shape = {8, 1024};
    p.inputs.push_back(x);
    ParamSpec w;
    w.name = "w";
    w.shape = {1024};
    p.params.push_back(w);
    TensorSpec out;
    out.name = "out";
    out.shape = {8, 1024};
    p.outputs.push_back(out);
    return p;
}

const char *kGood = R"(// A two-pass softmax.
// @precision tf32x3
// @scratch stats float32 x.shape[0]*2
// @launch row_stats grid(x.shape[0]) block(256) args(x, stats)
//   @launch normalize grid(cdiv(x.numel, 1024), 2) block(32, 8) smem(256*4) cluster(2, 1, 1) args(x, stats, out, i32(x.shape[1]), i64(out.numel), f32(-1.5e-3), N, N * 2, w)
extern "C" __global__ void row_stats(const float* x, float* stats) {}
int y = 3; // @launch this is not a directive: code comes first
extern "C" __global__ void normalize(const float* x, const float* stats, float* out, int n, long long m, float e, int a, int b, const float* w) {}
)";

} // namespace

class TestCandidate : public QObject {
    Q_OBJECT
private slots:
    void uninitializedScratchKeepsItsCount()
    {
        auto c = parseCandidate("// @scratch tiles float32 cdiv(x.numel, 4) * 2 uninitialized\n"
                                "// @scratch zeroed float32 8\n"
                                "// @launch k grid(1) block(1) args(x, tiles, zeroed, out)\n"
                                "extern \"C\" __global__ void k(const float*, float*, float*, float*) {}\n");
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().text().c_str());
        QCOMPARE(c->scratch[0].countExpr, std::string("cdiv(x.numel, 4) * 2"));
        QVERIFY(!c->scratch[0].zeroed);
        QVERIFY(c->scratch[1].zeroed);
        auto plan = resolveCandidate(*c, smallProblem());
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().text().c_str());
        QCOMPARE(plan->scratch[0].count, std::int64_t(8 * 1024 / 4 * 2));
        QVERIFY(!plan->scratch[0].zeroed);
    }
    void parsesGoodFile()
    {
        auto c = parseCandidate(kGood);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().text().c_str());
        QCOMPARE(c->source, std::string(kGood));
        QCOMPARE(int(c->precision), int(Precision::TF32x3));
        QCOMPARE(c->scratch.size(), std::size_t(1));
        QCOMPARE(c->scratch[0].name, std::string("stats"));
        QCOMPARE(int(c->scratch[0].dtype), int(DType::F32));
        QCOMPARE(c->scratch[0].countExpr, std::string("x.shape[0]*2"));
        QCOMPARE(c->scratch[0].line, 3);
        QVERIFY(c->scratch[0].zeroed);
        QCOMPARE(c->launches.size(), std::size_t(2));

        const LaunchDecl &a = c->launches[0];
        QCOMPARE(a.kernel, std::string("row_stats"));
        QCOMPARE(a.line, 4);
        QCOMPARE(a.grid[0], std::string("x.shape[0]"));
        QCOMPARE(a.grid[1], std::string("1"));
        QCOMPARE(a.smem, std::string("0"));
        QVERIFY(!a.cluster);
        QCOMPARE(a.args.size(), std::size_t(2));
        QCOMPARE(a.args[0].kind, LaunchArg::Kind::Tensor);
        QCOMPARE(a.args[1].kind, LaunchArg::Kind::Scratch);

        const LaunchDecl &b = c->launches[1];
        QCOMPARE(b.line, 5);
        QCOMPARE(b.grid[0], std::string("cdiv(x.numel, 1024)"));
        QCOMPARE(b.grid[1], std::string("2"));
        QCOMPARE(b.block[1], std::string("8"));
        QCOMPARE(b.smem, std::string("256*4"));
        QVERIFY(b.cluster);
        QCOMPARE((*b.cluster)[0], std::string("2"));
        QCOMPARE(b.args.size(), std::size_t(9));
        QCOMPARE(b.args[3].kind, LaunchArg::Kind::Int32);
        QCOMPARE(b.args[3].text, std::string("x.shape[1]"));
        QCOMPARE(b.args[4].kind, LaunchArg::Kind::Int64);
        QCOMPARE(b.args[5].kind, LaunchArg::Kind::Float32);
        QCOMPARE(b.args[5].text, std::string("-1.5e-3"));
        // A bare identifier is decided once the problem is known.
        QCOMPARE(b.args[6].kind, LaunchArg::Kind::Tensor);
        QCOMPARE(b.args[7].kind, LaunchArg::Kind::Int32);
        QCOMPARE(b.args[7].text, std::string("N * 2"));
    }

    void parsesVariants_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<int>("args");
        QTest::addColumn<int>("precision");
        QTest::newRow("default precision, no args") << "// @launch k grid(1) block(1) args()\n"
                                                    << "k" << 0 << int(Precision::FP32);
        QTest::newRow("C++ template name") << "// @precision bf16\n//@launch gemm<128, 64> grid(4) block(128) args(x)\n"
                                           << "gemm<128, 64>" << 1 << int(Precision::BF16);
        QTest::newRow("namespaced name") << "// @launch ns::k block(32) grid(2) args(x,out)\n"
                                         << "ns::k" << 2 << int(Precision::FP32);
        QTest::newRow("scratch after launch, C dtype")
            << "// @launch k grid(1) block(1) args(s)\n// @scratch s half 16\n"
            << "k" << 1 << int(Precision::FP32);
        QTest::newRow("CRLF lines") << "// @precision fp16\r\n// @launch k grid(1) block(1) args(x)\r\n"
                                    << "k" << 1 << int(Precision::FP16);
    }
    void parsesVariants()
    {
        QFETCH(QString, source);
        QFETCH(QString, kernel);
        QFETCH(int, args);
        QFETCH(int, precision);
        auto c = parseCandidate(source.toStdString());
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().text().c_str());
        QCOMPARE(QString::fromStdString(c->launches[0].kernel), kernel);
        QCOMPARE(int(c->launches[0].args.size()), args);
        QCOMPARE(int(c->precision), precision);
    }

    void rejectsMalformed_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("where");   // the error's location
        QTest::addColumn<QString>("message"); // a part of its message

        QTest::newRow("no launch") << "__global__ void k() {}\n"
                                   << "bad.cu"
                                   << "no @launch";
        QTest::newRow("missing block") << "// x\n// @launch k grid(1) args()\n"
                                       << "bad.cu:2"
                                       << "missing block(...)";
        QTest::newRow("missing grid") << "// @launch k block(1) args()\n"
                                      << "bad.cu:1"
                                      << "missing grid(...)";
        QTest::newRow("missing args") << "\n\n// @launch k grid(1) block(1)\n"
                                      << "bad.cu:3"
                                      << "missing args(...)";
        QTest::newRow("missing kernel") << "// @launch grid(1) block(1) args()\n"
                                        << "bad.cu:1"
                                        << "missing kernel";
        QTest::newRow("unknown clause") << "// @launch k grid(1) block(1) threads(4) args()\n"
                                        << "bad.cu:1"
                                        << "unknown clause 'threads'";
        QTest::newRow("clause twice") << "// @launch k grid(1) grid(2) block(1) args()\n"
                                      << "bad.cu:1"
                                      << "grid(...) given twice";
        QTest::newRow("unbalanced") << "// @launch k grid(cdiv(1, 2) block(1) args()\n"
                                    << "bad.cu:1"
                                    << "missing its ')'";
        QTest::newRow("four dims") << "// @launch k grid(1,1,1,1) block(1) args()\n"
                                   << "bad.cu:1"
                                   << "one to three";
        QTest::newRow("empty dim") << "// @launch k grid(1,,1) block(1) args()\n"
                                   << "bad.cu:1"
                                   << "empty expression";
        QTest::newRow("empty arg") << "// @launch k grid(1) block(1) args(x,,y)\n"
                                   << "bad.cu:1"
                                   << "empty argument";
        QTest::newRow("f32 not a number") << "// @launch k grid(1) block(1) args(f32(N))\n"
                                          << "bad.cu:1"
                                          << "takes a number";
        QTest::newRow("unknown directive") << "// @launch k grid(1) block(1) args()\n// @foo bar\n"
                                           << "bad.cu:2"
                                           << "unknown directive @foo";
        QTest::newRow("bad precision") << "// @precision fp8\n// @launch k grid(1) block(1) args()\n"
                                       << "bad.cu:1"
                                       << "unknown precision 'fp8'";
        QTest::newRow("precision twice")
            << "// @precision fp32\n// @precision fp16\n// @launch k grid(1) block(1) args()\n"
            << "bad.cu:2"
            << "given twice";
        QTest::newRow("scratch short") << "// @launch k grid(1) block(1) args()\n// @scratch s float32\n"
                                       << "bad.cu:2"
                                       << "NAME DTYPE COUNT";
        QTest::newRow("scratch dtype") << "// @scratch s float8 4\n// @launch k grid(1) block(1) args()\n"
                                       << "bad.cu:1"
                                       << "unknown dtype 'float8'";
        QTest::newRow("scratch name") << "// @scratch 2s float 4\n// @launch k grid(1) block(1) args()\n"
                                      << "bad.cu:1"
                                      << "not a valid name";
        QTest::newRow("duplicate scratch")
            << "// @scratch s float 4\n// @launch k grid(1) block(1) args(s)\n// @scratch s int32 8\n"
            << "bad.cu:3"
            << "already declared on line 1";
    }
    void rejectsMalformed()
    {
        QFETCH(QString, source);
        QFETCH(QString, where);
        QFETCH(QString, message);
        auto c = parseCandidate(source.toStdString(), "bad.cu");
        QVERIFY(!c.ok());
        QCOMPARE(QString::fromStdString(c.error().where), where);
        QVERIFY2(QString::fromStdString(c.error().message).contains(message), c.error().text().c_str());
        QCOMPARE(toString(c.error().code), std::string("parse"));
    }

    void launchEnvHasEveryTensor()
    {
        ExprEnv env = launchEnv(smallProblem());
        QCOMPARE(env.constants.at("N"), std::int64_t(1024));
        QCOMPARE(env.shapes.at("x"), (std::vector<std::int64_t>{8, 1024}));
        QCOMPARE(env.shapes.at("w"), (std::vector<std::int64_t>{1024}));
        QCOMPARE(env.shapes.at("out"), (std::vector<std::int64_t>{8, 1024}));
    }

    void resolvesGoodFile()
    {
        auto c = parseCandidate(kGood);
        QVERIFY(c.ok());
        Problem p = smallProblem();
        QVERIFY(checkCandidate(*c, p).ok());
        auto plan = resolveCandidate(*c, p);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().text().c_str());
        QCOMPARE(plan->scratch.size(), std::size_t(1));
        QCOMPARE(plan->scratch[0].count, std::int64_t(16));
        const ResolvedLaunch &a = plan->launches[0];
        QCOMPARE(a.grid, (std::array<std::int64_t, 3>{8, 1, 1}));
        QCOMPARE(a.block, (std::array<std::int64_t, 3>{256, 1, 1}));
        QCOMPARE(a.args[0].kind, LaunchArg::Kind::Tensor);
        QCOMPARE(a.args[0].name, std::string("x"));
        QCOMPARE(a.args[1].kind, LaunchArg::Kind::Scratch);
        QCOMPARE(a.args[1].name, std::string("stats"));
        const ResolvedLaunch &b = plan->launches[1];
        QCOMPARE(b.grid, (std::array<std::int64_t, 3>{8, 2, 1}));
        QCOMPARE(b.block, (std::array<std::int64_t, 3>{32, 8, 1}));
        QCOMPARE(b.smem, std::int64_t(1024));
        QVERIFY(b.cluster);
        QCOMPARE(*b.cluster, (std::array<std::int64_t, 3>{2, 1, 1}));
        QCOMPARE(b.args[3].ivalue, std::int64_t(1024));
        QCOMPARE(b.args[4].kind, LaunchArg::Kind::Int64);
        QCOMPARE(b.args[4].ivalue, std::int64_t(8192));
        QCOMPARE(b.args[5].fvalue, -1.5e-3);
        QCOMPARE(b.args[6].kind, LaunchArg::Kind::Int32); // the constant N
        QCOMPARE(b.args[6].ivalue, std::int64_t(1024));
        QCOMPARE(b.args[7].ivalue, std::int64_t(2048));
        QCOMPARE(b.args[8].kind, LaunchArg::Kind::Tensor);
        QCOMPARE(b.args[8].name, std::string("w"));
    }

    void scratchSizeIsUsable()
    {
        auto c = parseCandidate("// @scratch s float 2*N\n// @launch k grid(s.numel / 256) block(256) args(s)\n");
        QVERIFY(c.ok());
        auto plan = resolveCandidate(*c, smallProblem());
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().text().c_str());
        QCOMPARE(plan->launches[0].grid[0], std::int64_t(8));
    }

    void rejectsAgainstProblem_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown arg") << "\n// @launch k grid(1) block(1) args(x, y)\n"
                                     << "c.cu:2"
                                     << "'y' is not a tensor, scratch buffer or constant";
        QTest::newRow("unknown constant") << "// @launch k grid(M) block(1) args()\n"
                                          << "c.cu:1"
                                          << "grid(...).x";
        QTest::newRow("unknown tensor in expr") << "// @launch k grid(1) block(1) args(i32(z.numel))\n"
                                                << "c.cu:1"
                                                << "argument 1";
        QTest::newRow("zero grid") << "// @launch k grid(B - 8) block(1) args()\n"
                                   << "c.cu:1"
                                   << "must be positive";
        QTest::newRow("big block") << "// @launch k grid(1) block(64, 32) args()\n"
                                   << "c.cu:1"
                                   << "2048 threads";
        QTest::newRow("grid y") << "// @launch k grid(1, 70000) block(1) args()\n"
                                << "c.cu:1"
                                << "at most 65535";
        QTest::newRow("negative smem") << "// @launch k grid(1) block(1) smem(-4) args()\n"
                                       << "c.cu:1"
                                       << "negative";
        QTest::newRow("cluster divides grid") << "// @launch k grid(3) block(1) cluster(2,1,1) args()\n"
                                              << "c.cu:1"
                                              << "multiple of cluster";
        QTest::newRow("i32 overflow") << "// @launch k grid(1) block(1) args(N * N * N * 4)\n"
                                      << "c.cu:1"
                                      << "does not fit in 32 bits";
        QTest::newRow("scratch empty") << "// @scratch s float B - 8\n// @launch k grid(1) block(1) args(s)\n"
                                       << "c.cu:1"
                                       << "needs > 0";
        QTest::newRow("scratch is a tensor") << "// @launch k grid(1) block(1) args()\n\n// @scratch x float 4\n"
                                             << "c.cu:3"
                                             << "name of a problem tensor";
        QTest::newRow("scratch is a constant") << "// @scratch N float 4\n// @launch k grid(1) block(1) args()\n"
                                               << "c.cu:1"
                                               << "name of a problem constant";
    }
    void rejectsAgainstProblem()
    {
        QFETCH(QString, source);
        QFETCH(QString, where);
        QFETCH(QString, message);
        auto c = parseCandidate(source.toStdString(), "c.cu");
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().text().c_str());
        auto st = checkCandidate(*c, smallProblem(), "c.cu");
        QVERIFY(!st.ok());
        QCOMPARE(QString::fromStdString(st.error().where), where);
        QVERIFY2(QString::fromStdString(st.error().message).contains(message), st.error().text().c_str());
        QVERIFY(!resolveCandidate(*c, smallProblem(), "c.cu").ok());
    }

    void precisionNames()
    {
        for (auto p :
             {Precision::FP32, Precision::TF32x3, Precision::TF32, Precision::FP16, Precision::BF16, Precision::BF16x3})
            QVERIFY(parsePrecision(toString(p)) == p);
        QVERIFY(parsePrecision("3xBF16") == Precision::BF16x3);
        QVERIFY(!parsePrecision("fp64"));
    }
};

QTEST_APPLESS_MAIN(TestCandidate)
#include "test_candidate.moc"
