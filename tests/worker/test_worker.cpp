// The real worker on the paths that need no GPU: handshake, every shipped problem's reference
// compiled by libtorch and run at its small size, compile-only mode, and a clear "needs a GPU".
#include "support.h"

#include "kernel/candidate.h"

#include <QDirIterator>
#include <QTest>
#include <sys/wait.h>

using namespace kf;

class TestWorker : public QObject {
    Q_OBJECT
private slots:
    void handshake()
    {
        WorkerClient w(test::workerConfig());
        QVERIFY2(w.start().ok(), "the worker starts");
        const Hello &h = *w.info();
        QCOMPARE(h.protocol, kProtocolVersion);
        QVERIFY(!h.torch.empty());
        if (!h.gpu.present)
            QVERIFY2(!h.gpu.reason.empty(), "without a GPU the worker says why");
    }

    void shippedProblems_data()
    {
        QTest::addColumn<QString>("path");
        QDirIterator it(QStringLiteral(KF_SOURCE_DIR "/problems"), {"*.toml"}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString p = it.next();
            QTest::newRow(qPrintable(QDir(KF_SOURCE_DIR).relativeFilePath(p))) << p;
        }
    }
    // Each reference compiles as TorchScript and produces the declared outputs (small sizes).
    void shippedProblems()
    {
        QFETCH(QString, path);
        auto p = loadProblemFile(path.toStdString(), "small");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().text().c_str());
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        auto l = w.load(*p);
        QVERIFY2(l.ok(), l.ok() ? "" : l.error().text().c_str());
        QVERIFY2(!l->graph.empty(), "the op graph is returned");
        QVERIFY(l->flops > 0);
        QVERIFY(l->bytes > 0);
        for (const OpNode &n : l->graph)
            QVERIFY2(n.op.rfind("prim::", 0) == 0 || !n.outputShapes.empty(), n.op.c_str());
    }

    // diag(d) @ B costs a multiply per output element: counted as a full product, the physical
    // floor would sit above a correct kernel that scales the rows, and mark it suspect.
    void diagonalProductCountsItsScaling()
    {
        auto p = loadProblemFile(KF_SOURCE_DIR "/tests/builtin/data/problems/diag_scaled_rows.toml", "small");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().text().c_str());
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        auto l = w.load(*p);
        QVERIFY2(l.ok(), l.ok() ? "" : l.error().text().c_str());
        bool sawProduct = false;
        for (const OpNode &n : l->graph)
            if (n.op == "aten::matmul") {
                sawProduct = true;
                QCOMPARE(n.flops, 30.0 * 22.0);
            }
        QVERIFY(sawProduct);
        QCOMPARE(l->flops, 30.0 * 22.0);
    }

    void badReferenceNamesTheFile()
    {
        auto p = test::seedProblem("softmax", "small");
        // Problems travel by content: change the text that is sent.
        const auto at = p.text.find("torch.softmax(x, dim=1)");
        QVERIFY(at != std::string::npos);
        p.text.replace(at, 23, "torch.no_such_op(x)");
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        auto l = w.load(p);
        QVERIFY(!l.ok());
        QVERIFY2(l.error().where.find("softmax.toml") != std::string::npos, l.error().text().c_str());
    }

    void wrongDeclaredOutputShape()
    {
        auto p = test::seedProblem("softmax", "small");
        const std::string declared = "[[outputs]]\nname = \"out\"\nshape = [\"B\", \"N\"]";
        const auto at = p.text.find(declared);
        QVERIFY(at != std::string::npos);
        p.text.replace(at, declared.size(), "[[outputs]]\nname = \"out\"\nshape = [\"B\", \"B\"]");
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        auto l = w.load(p);
        QVERIFY(!l.ok());
        QVERIFY2(l.error().message.find("declares") != std::string::npos, l.error().text().c_str());
    }

    void compileOnlyMode()
    {
        WorkerConfig c = test::workerConfig();
        c.argv.push_back("--compile");
        WorkerClient w(c);
        QVERIFY(w.start().ok());
        const std::string src = test::readText(KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu");
        auto cand = parseCandidate(src);
        QVERIFY2(cand.ok(), cand.ok() ? "" : cand.error().text().c_str());
        std::vector<std::string> kernels;
        for (const auto &l : cand->launches)
            kernels.push_back(l.kernel);
        auto out = w.compile(src, kernels, "sm_90a");
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().text().c_str());
        if (!out->ok)
            QFAIL(out->log.c_str());
        QVERIFY(!out->cubin.empty());
    }

    // The worker's refusals carry the codes docs/protocol.md gives them.
    void errorCodesAreTheDocumentedOnes()
    {
        auto codeOf = [](WorkerClient &w, nlohmann::json request) {
            auto r = w.request(std::move(request), std::chrono::milliseconds(60'000));
            return r.ok() ? std::string("ok") : toString(r.error().code);
        };
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        QCOMPARE(codeOf(w, {{"op", "no_such_op"}}), std::string("unknown-op"));
        QCOMPARE(codeOf(w, {{"op", "baseline"}}), std::string("no-problem"));
        QCOMPARE(codeOf(w, {{"op", "load"}}), std::string("bad-request")); // no "problem" field
        QCOMPARE(codeOf(w, {{"op", "load"}, {"problem", ""}, {"module_bytes", "many"}}), std::string("bad-request"));

        WorkerConfig c = test::workerConfig();
        c.argv.push_back("--compile");
        WorkerClient compiler(c);
        QVERIFY(compiler.start().ok());
        QCOMPARE(codeOf(compiler, {{"op", "baseline"}}), std::string("unsupported"));
    }

    // A request whose announced bytes never all come leaves nothing to talk to: the worker says so
    // and exits rather than read the next request as bytes.
    void shortModuleBytesEndTheWorker()
    {
        Process p;
        ProcessOptions o;
        o.argv = test::workerConfig().argv;
        QVERIFY(p.start(o).ok());
        const auto deadline = Clock::now() + std::chrono::seconds(60);
        QCOMPARE(
            p.writeLine(R"({"id":1,"op":"load","problem":"","module_bytes":100})", deadline, "only 20 bytes here."),
            IoStatus::Ok);
        p.closeStdin();
        QVERIFY(p.waitForExit(deadline));
        p.kill(); // reaps it: the group's SIGKILL finds nobody, the status stays the exit's
        p.drainStderr(Clock::now() + std::chrono::seconds(2));
        QVERIFY2(p.waitStatus() && WIFEXITED(*p.waitStatus()) && WEXITSTATUS(*p.waitStatus()) == 2,
                 p.exitDescription().c_str());
        QVERIFY2(QString::fromStdString(p.stderrTail()).contains("100 bytes ended early"), p.stderrTail().c_str());
    }

    // Every test kernel but the two that must not compile builds with NVRTC for sm_90a, and so do
    // the engine's own check kernels (poison, compare, hash), without spills.
    void testKernelsAndCheckKernelsCompile()
    {
        WorkerConfig c = test::workerConfig();
        c.argv.push_back("--compile");
        WorkerClient w(c);
        QVERIFY(w.start().ok());
        QDirIterator it(QStringLiteral(KF_SOURCE_DIR "/tests/kernels"), {"*.cu"}, QDir::Files,
                        QDirIterator::Subdirectories);
        int compiled = 0;
        while (it.hasNext()) {
            const QString path = it.next();
            const std::string src = test::readText(path);
            if (test::expectation(src, "expect") == "compile error")
                continue;
            auto cand = parseCandidate(src);
            QVERIFY2(cand.ok(), qPrintable(path));
            auto out = w.compile(src, kernelNames(*cand), "sm_90a");
            QVERIFY2(out.ok() && out->ok,
                     qPrintable(path + QStringLiteral(": ") +
                                QString::fromStdString(out.ok() ? out->log : out.error().text())));
            ++compiled;
        }
        QVERIFY(compiled >= 19); // every file under tests/kernels but the two compile errors
        auto checks = w.request({{"op", "compile_checks"}, {"arch", "sm_90a"}}, std::chrono::seconds(120));
        QVERIFY2(checks.ok(), checks.ok() ? "" : checks.error().text().c_str());
        const CompileOutput out = (*checks)["compile"].get<CompileOutput>();
        QVERIFY2(out.ok, out.log.c_str());
        QVERIFY(out.loweredNames.count("kf_cmp_f32_f64") && out.loweredNames.count("kf_hash"));
        for (const auto &[name, res] : out.resources)
            QVERIFY2(res.spillStores == 0 && res.spillLoads == 0, name.c_str());
    }

    void evaluationWithoutGpuSaysSo()
    {
        std::string reason;
        if (test::workerHasGpu(&reason))
            QSKIP("this machine has a GPU; the gpu tests cover evaluation");
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        QVERIFY(w.load(test::seedProblem("softmax", "small")).ok());
        const std::string src = test::readText(KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu");
        auto r = w.verify("k", src, "", Policy::Strict, 1);
        QVERIFY(r.ok());
        QCOMPARE(QString::fromStdString(toString(r->verdict)), QStringLiteral("needs gpu"));
        QVERIFY2(r->reason.find("GPU") != std::string::npos, r->reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "test_worker.moc"
