// The KernelBench importer (tools/kernelbench-import.py) on the files in tests/data/kernelbench
// (both parts, in bounded memory), on files written to trip it (tests/data/kernelbench-robust),
// malformed files, and the worker's side of module problems: the op graph the built-in generator
// reads (the same as a source problem's; tests/kernelbench/expected-coverage.txt says what it
// makes of each file), the module's own parameters, and the errors for a module it cannot load.
// The importer needs Python with PyTorch (Debian's python3-torch in CI); without one those tests
// skip and say so.
#include "eval/worker_client.h"
#include "gen/builtin/coverage.h"
#include "problem/problem.h"

#include <QtCore/QDir>
#include <QtCore/QDirIterator>
#include <QtCore/QFile>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtCore/QStandardPaths>
#include <QtCore/QTemporaryDir>
#include <QtTest/QTest>

#include <map>

using namespace kf;

namespace {

const QString kData = QStringLiteral(KF_SOURCE_DIR "/tests/data");

struct Run {
    int code = -1;
    QString out, err;
};

Run run(const QString &program, const QStringList &args, int timeoutMs)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

// KF_PYTHON, python3 on PATH, or Debian's own (a virtualenv or pyenv python3 may lack torch).
QString pythonWithTorch()
{
    QStringList candidates;
    if (!qEnvironmentVariableIsEmpty("KF_PYTHON"))
        candidates << qEnvironmentVariable("KF_PYTHON");
    candidates << "python3"
               << "/usr/bin/python3";
    for (const QString &p : candidates)
        if (run(p, {"-c", "import torch"}, 120000).code == 0)
            return p;
    return {};
}

void write(const QString &path, const QByteArray &text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
}

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The importer's command, under an address-space limit for each of its processes where prlimit
// exists: it must import every file without making the gigabyte-sized tensors they declare.
std::pair<QString, QStringList> limited(const QString &python, const QStringList &args, qint64 bytes)
{
    const QString prlimit = QStandardPaths::findExecutable("prlimit");
    if (prlimit.isEmpty())
        return {python, args};
    return {prlimit, QStringList{QString("--as=%1").arg(bytes), python} + args};
}

// The .toml files below `dir`, as paths relative to it without the extension ("level1/1_relu").
QStringList problemsIn(const QString &dir)
{
    QStringList out;
    QDirIterator it(dir, {"*.toml"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString rel = QDir(dir).relativeFilePath(it.next());
        out << rel.left(rel.size() - 5);
    }
    out.sort();
    return out;
}

// tests/kernelbench/expected-coverage.txt: file -> the pattern, or "stopped by OP".
std::map<std::string, std::string> expectedCoverage()
{
    std::map<std::string, std::string> table;
    QFile f(QStringLiteral(KF_SOURCE_DIR "/tests/kernelbench/expected-coverage.txt"));
    if (!f.open(QIODevice::ReadOnly))
        return table;
    for (const QString &raw : QString(f.readAll()).split('\n')) {
        const QString line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const int space = line.indexOf(' ');
        table[line.left(space).toStdString()] = line.mid(space).trimmed().toStdString();
    }
    return table;
}

std::vector<std::string> atenOps(const LoadedProblem &l)
{
    std::vector<std::string> ops;
    for (const OpNode &n : l.graph)
        if (n.op.rfind("aten::", 0) == 0)
            ops.push_back(n.op);
    return ops;
}

// A small model that runs on the CPU: the importer checks its module against the eager model,
// and the worker runs it (so its graph has shapes). BatchNorm brings buffers and an input check
// that only raises; `scale` is a plain float attribute.
const char *kSmallModel = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, batch norm, scaled GELU."""

    def __init__(self, features, hidden, scale):
        super().__init__()
        self.linear = nn.Linear(features, hidden)
        self.norm = nn.BatchNorm1d(hidden)
        self.scale = scale

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(self.linear(x))) * self.scale


def get_inputs():
    return [torch.randn(32, 16)]


def get_init_inputs():
    return [16, 24, 0.5]
)";

} // namespace

class TestKernelBench : public QObject {
    Q_OBJECT

    QString m_python;
    QTemporaryDir m_out;   // the imported tests/data/kernelbench
    QTemporaryDir m_small; // the small model, imported
    bool m_imported = false;

    void needPython()
    {
        if (m_python.isEmpty())
            QSKIP("no Python with PyTorch (apt-get install python3-torch, or pip install torch; or set KF_PYTHON): "
                  "the KernelBench importer is not tested here");
    }
    void needWorker()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_WORKER"))
            QSKIP("KERNELFORGE_WORKER is not set (run through ctest with the worker built)");
    }
    QString importer() const { return QStringLiteral(KF_SOURCE_DIR "/tools/kernelbench-import.py"); }

    Result<LoadedProblem> loadInWorker(const Problem &p)
    {
        WorkerClient w;
        if (auto s = w.start(); !s)
            return s.error();
        return w.load(p);
    }

private slots:
    void initTestCase()
    {
        m_python = pythonWithTorch();
        if (m_python.isEmpty())
            qWarning("no Python with PyTorch: the importer tests skip");
    }

    void importsTheFolder()
    {
        needPython();
        // Two files at a time, each process in 6 GB of address space: a CPU with 24 GB imports the
        // folder, though its files declare inputs of up to 8 GB.
        const auto [program, args] =
            limited(m_python, {importer(), kData + "/kernelbench", "-o", m_out.path(), "--jobs", "2"}, 6ll << 30);
        const Run r = run(program, args, 25 * 60 * 1000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("78 of 78 files imported"), qPrintable(r.out));
        m_imported = true;
        const QStringList problems = problemsIn(m_out.path());
        QCOMPARE(problems.size(), 78);
        QCOMPARE(problems.filter(QRegularExpression("^heldout/")).size(), 13); // the held-out part
        for (const QString &f : problems)
            QVERIFY2(loadProblemFile(m_out.filePath(f + ".toml").toStdString()), qPrintable(f));

        // What the files say: inputs from get_inputs(), parameters forward reads, outputs.
        auto conv = loadProblemFile(m_out.filePath("level2/4_conv_bias_tanh.toml").toStdString());
        QVERIFY(conv);
        QCOMPARE(conv->name, std::string("4_conv_bias_tanh"));
        QCOMPARE(conv->inputs[0].shape, (std::vector<std::int64_t>{32, 64, 128, 128}));
        QVERIFY(conv->inputs[0].distributions.front() == Dist::Uniform); // torch.rand
        QCOMPARE(conv->params.size(), std::size_t(2));                   // the conv has no bias of its own
        QCOMPARE(conv->params[0].name, std::string("conv_weight"));
        QCOMPARE(conv->params[0].attribute, std::string("conv.weight"));
        QCOMPARE(conv->params[0].init, std::string("fan_in_uniform"));
        QCOMPARE(conv->params[0].fanIn, std::int64_t(64 * 9));
        QCOMPARE(conv->params[1].attribute, std::string("bias"));
        QCOMPARE(conv->params[1].init, std::string("normal")); // randn * 0.02
        QCOMPARE(conv->outputs[0].shape, (std::vector<std::int64_t>{32, 64, 126, 126}));
        QVERIFY(QString::fromStdString(conv->referenceSource).contains("class Model(nn.Module)"));
        QVERIFY(!conv->moduleTorch.empty());

        auto argmax = loadProblemFile(m_out.filePath("level1/6_argmax_dim.toml").toStdString());
        QVERIFY(argmax);
        QVERIFY(argmax->outputs[0].dtype == DType::I64);
        QVERIFY(argmax->inputs[0].distributions.front() == Dist::Normal); // torch.randn

        auto ln = loadProblemFile(m_out.filePath("level2/5_layernorm_residual.toml").toStdString());
        QVERIFY(ln);
        QCOMPARE(ln->inputs.size(), std::size_t(2));
        QCOMPARE(ln->params[0].init, std::string("ones"));
        QCOMPARE(ln->params[1].init, std::string("zeros"));

        const QByteArray traced = read(m_out.filePath("level2/9_matmul_clamp_traced.toml"));
        QVERIFY(traced.contains("method = \"trace\""));
        QVERIFY(traced.contains("# traced (scripting failed"));

        // A number among get_inputs()'s items: the module fixes it, and the file says where it goes
        // for the original Model (tools/compile-baseline.py).
        auto scalar = loadProblemFile(m_out.filePath("level1/35_scale_by_scalar.toml").toStdString());
        QVERIFY(scalar);
        QCOMPARE(scalar->inputs.size(), std::size_t(1));
        QVERIFY(read(m_out.filePath("level1/35_scale_by_scalar.toml"))
                    .contains("numbers = [{ position = 1, value = 3.14 }]"));

        // Today's sizes: a loss reduced to a scalar, 6 GB rows, a matrix-vector product.
        auto mse = loadProblemFile(m_out.filePath("level1/18_mse_loss.toml").toStdString());
        QVERIFY(mse);
        QCOMPARE(mse->inputs.size(), std::size_t(2));
        QCOMPARE(mse->inputs[1].shape, (std::vector<std::int64_t>{32768, 32768}));
        QVERIFY(mse->outputs[0].shape.empty());
        auto wide = loadProblemFile(m_out.filePath("level1/25_softmax_wide.toml").toStdString());
        QVERIFY(wide);
        QCOMPARE(wide->inputs[0].shape, (std::vector<std::int64_t>{4096, 393216}));
        auto gemv = loadProblemFile(m_out.filePath("level1/21_gemv.toml").toStdString());
        QVERIFY(gemv);
        QCOMPARE(gemv->outputs[0].shape, (std::vector<std::int64_t>{4096, 1}));
        // An input computed from a drawn one (randn * 3, 6 GB): its values come from a smaller run.
        const QByteArray scaled = read(m_out.filePath("heldout/level1/101_hardtanh_wide.toml"));
        QVERIFY2(scaled.contains("(values seen in a run of get_inputs() at a smaller size)"), scaled.constData());
        QVERIFY(scaled.contains("shape = [8192, 196608]"));
    }

    // Files that once stopped the importer: inputs made on the GPU, inputs computed from drawn
    // ones at 4 GB each, module-level helpers, get_inputs() that reads values or returns one tensor.
    void importsWhatOnceStoppedIt()
    {
        needPython();
        QTemporaryDir out;
        const auto [program, args] =
            limited(m_python, {importer(), kData + "/kernelbench-robust", "-o", out.path()}, 4ll << 30);
        const Run r = run(program, args, 10 * 60 * 1000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("4 of 4 files imported"), qPrintable(r.out));

        auto gpu = loadProblemFile(out.filePath("gpu_inputs.toml").toStdString());
        QVERIFY(gpu);
        QCOMPARE(gpu->inputs.size(), std::size_t(3));
        QVERIFY(gpu->inputs[0].distributions.front() == Dist::Normal);           // randn(...).cuda()
        QVERIFY(gpu->inputs[2].distributions.front() == Dist::Uniform);          // rand(..., device="cuda")
        QCOMPARE(gpu->params[0].shape, (std::vector<std::int64_t>{4096, 8192})); // from a nested list

        auto derived = loadProblemFile(out.filePath("derived_inputs.toml").toStdString());
        QVERIFY(derived);
        QCOMPARE(derived->inputs[0].shape, (std::vector<std::int64_t>{32768, 32768}));
        QVERIFY(derived->inputs[0].distributions.front() == Dist::Normal);  // rand * 2 - 1: nearest
        QVERIFY(derived->inputs[1].distributions.front() == Dist::Uniform); // |randn|: nearest
        QVERIFY(read(out.filePath("derived_inputs.toml")).contains("at a smaller size"));

        const QByteArray helpers = read(out.filePath("module_helpers.toml"));
        QVERIFY(helpers.contains("attribute = \"proj.linear.weight\""));
        QVERIFY(!helpers.contains("not run here")); // small: checked against the eager model

        auto values = loadProblemFile(out.filePath("reads_values.toml").toStdString());
        QVERIFY(values);
        QCOMPARE(values->inputs[0].shape, (std::vector<std::int64_t>{256, 512}));
        QCOMPARE(read(out.filePath("reads_values.toml")).contains("method = \"script\""), true);
    }

    // A file that takes too long is stopped, and says so in one line.
    void slowFileTimesOut()
    {
        needPython();
        QTemporaryDir dir;
        write(dir.filePath("slow.py"),
              QByteArray(kSmallModel)
                  .replace("def get_init_inputs():\n", "def get_init_inputs():\n    import time; time.sleep(60)\n"));
        const Run r = run(m_python, {importer(), dir.filePath("slow.py"), "-o", dir.path(), "--timeout", "5"}, 120000);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains("slow.py: importing it took longer than 5 s (--timeout), so it was stopped"),
                 qPrintable(r.out));
    }

    void malformedFiles_data()
    {
        QTest::addColumn<QString>("reason");
        QTest::newRow("syntax") << "syntax_error.py:6: syntax error";
        QTest::newRow("no Model") << "no_model.py: no `class Model(nn.Module)`";
        QTest::newRow("no get_inputs") << "no_get_inputs.py: no `get_inputs()` function";
        QTest::newRow("import") << "import_fails.py:3: running the file failed: ModuleNotFoundError";
        QTest::newRow("constructor")
            << "init_fails.py:9: Model(*get_init_inputs()) failed: ValueError: features must be positive";
        QTest::newRow("forward") << "forward_fails.py:7: forward failed: RuntimeError";
        QTest::newRow("non-tensor input")
            << "non_tensor_input.py: get_inputs() item 1 is a str, neither a tensor nor a number";
        QTest::newRow("small integer range") << "small_int_range.py: input 1 is drawn by randint from [0, 10)";
        QTest::newRow("number output") << "returns_number.py: forward returns a float (output 0)";
        QTest::newRow("killed") << "killed.py: the process importing it was killed by SIGKILL (out of memory?)";
    }

    void malformedFiles()
    {
        needPython();
        QFETCH(QString, reason);
        static Run r;
        static QTemporaryDir out;
        if (r.code == -1)
            r = run(m_python, {importer(), kData + "/kernelbench-malformed", "-o", out.path()}, 10 * 60 * 1000);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains("0 of 10 files imported"), qPrintable(r.out));
        for (const QString &line : r.out.split('\n')) // one line each
            QVERIFY2(line.isEmpty() || line.startsWith("FAILED  /") || line.startsWith("0 of"), qPrintable(line));
        QVERIFY2(r.out.contains(reason), qPrintable(r.out));
        QVERIFY2(r.err.contains("not imported: ") && r.err.contains(reason), qPrintable(r.err)); // the summary
    }

    void badUsage()
    {
        needPython();
        QTemporaryDir out;
        const Run missing = run(m_python, {importer(), "/nonexistent.py", "-o", out.path()}, 120000);
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("/nonexistent.py"));
        const Run noOut = run(m_python, {importer(), kData + "/kernelbench"}, 120000);
        QCOMPARE(noOut.code, 2);
    }

    // What the built-in generator makes of each imported problem: the pattern, or the op that
    // stops it, as tests/kernelbench/expected-coverage.txt says for every file of the folder.
    void coverage()
    {
        needPython();
        needWorker();
        if (!m_imported)
            QSKIP("the folder did not import");
        const std::map<std::string, std::string> expected = expectedCoverage();
        QStringList files;
        for (const auto &[file, want] : expected)
            files << QString::fromStdString(file);
        files.sort();
        QCOMPARE(files, problemsIn(m_out.path())); // one line for every file, none for another
        WorkerClient w;
        QVERIFY(w.start());
        QStringList wrong;
        for (const auto &[file, want] : expected) {
            auto p = loadProblemFile(m_out.filePath(QString::fromStdString(file) + ".toml").toStdString());
            QVERIFY2(p, file.c_str());
            auto loaded = w.load(*p);
            QVERIFY2(loaded, (file + ": " + (loaded ? "" : loaded.error().text())).c_str());
            const builtin::ProblemCoverage c = builtin::coverageOf(loaded->graph, *p, Policy::Strict);
            const std::string got = c.covered ? c.pattern : "stopped by " + c.stoppedBy;
            if (got != want) {
                wrong << QString::fromStdString(file);
                qWarning("%s: expected %s, got %s (%s)", file.c_str(), want.c_str(), got.c_str(), c.reason.c_str());
            }
        }
        QVERIFY2(
            wrong.isEmpty(),
            qPrintable("not as tests/kernelbench/expected-coverage.txt says (the lines above): " + wrong.join(", ")));
    }

    // The module's graph is the one a source problem with the same computation has.
    void sameGraphAsSourceProblem_data()
    {
        QTest::addColumn<QString>("imported");
        QTest::addColumn<QString>("shipped");
        QTest::newRow("conv2d + relu + maxpool") << "level2/3_conv_relu_maxpool"
                                                 << "seed/conv2d_relu_maxpool";
        QTest::newRow("softmax") << "level1/8_softmax"
                                 << "seed/softmax";
        QTest::newRow("rmsnorm") << "level1/11_rmsnorm"
                                 << "level1/rmsnorm";
    }

    void sameGraphAsSourceProblem()
    {
        needPython();
        needWorker();
        if (!m_imported)
            QSKIP("the folder did not import");
        QFETCH(QString, imported);
        QFETCH(QString, shipped);
        auto a = loadProblemFile(m_out.filePath(imported + ".toml").toStdString());
        // The shipped problem's small size runs on the CPU; the ops do not depend on it.
        auto b =
            loadProblemFile((QStringLiteral(KF_SOURCE_DIR "/problems/") + shipped + ".toml").toStdString(), "small");
        QVERIFY(a && b);
        auto la = loadInWorker(*a), lb = loadInWorker(*b);
        QVERIFY2(la && lb, la ? (lb ? "" : lb.error().text().c_str()) : la.error().text().c_str());
        QCOMPARE(atenOps(*la), atenOps(*lb));
        const auto ca = builtin::coverageOf(la->graph, *a, Policy::Strict);
        const auto cb = builtin::coverageOf(lb->graph, *b, Policy::Strict);
        QVERIFY2(ca.pattern == cb.pattern,
                 (ca.pattern + " " + ca.reason + " / " + cb.pattern + " " + cb.reason).c_str());
    }

    void smallModelRunsInTheWorker()
    {
        needPython();
        needWorker();
        write(m_small.filePath("small_linear_bn_gelu.py"), kSmallModel);
        const Run r = run(m_python, {importer(), m_small.filePath("small_linear_bn_gelu.py"), "-o", m_small.path()},
                          5 * 60 * 1000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QByteArray toml = read(m_small.filePath("small_linear_bn_gelu.toml"));
        QVERIFY2(!toml.contains("not run here"), toml.constData()); // small enough to check on the CPU
        auto p = loadProblemFile(m_small.filePath("small_linear_bn_gelu.toml").toStdString());
        QVERIFY2(p, p ? "" : p.error().text().c_str());
        // The parameters and buffers forward reads; num_batches_tracked is read only in training.
        std::vector<std::string> attrs;
        for (const auto &param : p->params)
            attrs.push_back(param.attribute);
        QCOMPARE(attrs,
                 (std::vector<std::string>{"linear.weight", "linear.bias", "norm.running_mean", "norm.running_var",
                                           "norm.weight", "norm.bias"}));
        auto loaded = loadInWorker(*p);
        QVERIFY2(loaded, loaded ? "" : loaded.error().text().c_str());
        // Run on the CPU: every op has its shapes, and the FLOPs come from the graph.
        QCOMPARE(atenOps(*loaded),
                 (std::vector<std::string>{"aten::linear", "aten::batch_norm", "aten::gelu", "aten::mul"}));
        QCOMPARE(loaded->graph.back().outputShapes.front(), (std::vector<std::int64_t>{32, 24}));
        QCOMPARE(loaded->flopsSource, std::string("graph"));
        QVERIFY(loaded->flops > 2.0 * 32 * 24 * 16);
        QCOMPARE(builtin::coverageOf(loaded->graph, *p, Policy::Strict).pattern, std::string("matmul"));
    }

    void undeclaredTensorIsAnError()
    {
        needPython();
        needWorker();
        const QString toml = m_small.filePath("small_linear_bn_gelu.toml");
        if (!QFile::exists(toml))
            QSKIP("the small model did not import");
        // Drop the last [[params]] table (norm.bias): forward still reads it.
        QByteArray text = read(toml);
        const int last = text.lastIndexOf("[[params]]");
        const int next = text.indexOf("[[outputs]]", last);
        text.remove(last, next - last);
        const QString edited = m_small.filePath("edited.toml");
        write(edited, text);
        auto p = loadProblemFile(edited.toStdString());
        QVERIFY(p);
        auto loaded = loadInWorker(*p);
        QVERIFY(!loaded);
        QVERIFY2(
            QString::fromStdString(loaded.error().message).contains("forward reads the module's tensor `norm.bias`"),
            loaded.error().text().c_str());
        QVERIFY(QString::fromStdString(loaded.error().where).contains("edited.toml: reference.module"));
    }

    // Without Python: a module the worker cannot load names the PyTorch that saved it and the
    // worker's libtorch.
    void newerPyTorchIsNamed()
    {
        needWorker();
        QTemporaryDir dir;
        const QByteArray toml = R"(name = "from_the_future"
[[inputs]]
name = "x"
shape = [4]
[[outputs]]
name = "out"
shape = [4]
[reference]
module = "future.pt"
torch = "99.1.0"
)";
        write(dir.filePath("future.toml"), toml);
        write(dir.filePath("future.pt"), "PK\x03\x04 a zip archive from a later format");
        auto p = loadProblemFile(dir.filePath("future.toml").toStdString());
        QVERIFY2(p, p ? "" : p.error().text().c_str());
        WorkerClient w;
        QVERIFY(w.start());
        auto hello = w.hello();
        QVERIFY(hello);
        auto loaded = w.load(*p);
        QVERIFY(!loaded);
        const QString message = QString::fromStdString(loaded.error().message);
        QVERIFY2(message.contains("saved by PyTorch 99.1.0, newer than this worker's libtorch " +
                                  QString::fromStdString(hello->torch)),
                 qPrintable(message));
        QVERIFY(QString::fromStdString(loaded.error().where).contains("future.toml: reference.module"));

        // Saved by an older or the same PyTorch: the load error itself, with both versions.
        write(dir.filePath("future.toml"), QByteArray(toml).replace("99.1.0", "1.0.0"));
        auto old = loadProblemFile(dir.filePath("future.toml").toStdString());
        QVERIFY(old);
        loaded = w.load(*old);
        QVERIFY(!loaded);
        QVERIFY2(QString::fromStdString(loaded.error().message).contains("does not load (saved by PyTorch 1.0.0"),
                 loaded.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestKernelBench)
#include "test_kernelbench.moc"
