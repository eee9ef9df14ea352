// Problem files: parsing, validation errors (file, line, field), the shipped problems, lookup.
#include "problem/problem.h"

#include <QtCore/QDir>
#include <QtCore/QDirIterator>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QRegularExpression>
#include <QtCore/QSet>
#include <QtCore/QTemporaryDir>
#include <QtTest/QTest>

using namespace kf;

namespace {

// A small valid problem; malformed cases below each change one line of it.
const char *kValid = R"(name = "t"
description = "test problem"
[constants]
N = 8
[variants.small]
N = 2
[[inputs]]
name = "x"
shape = ["N", 4]
dtype = "float32"
[[params]]
name = "w"
shape = [4]
init = "ones"
[[outputs]]
name = "out"
shape = ["N", 4]
[reference]
source = '''
def forward(x: Tensor, w: Tensor) -> Tensor:
    return x * w
'''
)";

// kValid with 1-based line `line` replaced by `replacement` (removed when it is null).
QString withLine(int line, const char *replacement)
{
    QStringList lines = QString::fromUtf8(kValid).split('\n');
    if (replacement)
        lines[line - 1] = QString::fromUtf8(replacement);
    else
        lines.removeAt(line - 1);
    return lines.join('\n');
}

QString problemsDir() { return QStringLiteral(KF_SOURCE_DIR "/problems"); }

QStringList shippedFiles()
{
    QStringList files;
    QDirIterator it(problemsDir(), {"*.toml"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        files << it.next();
    files.sort();
    return files;
}

Result<Problem> parse(const QString &text, const std::string &variant = {})
{
    return parseProblem(text.toStdString(), "bad.toml", variant);
}

} // namespace

class TestProblem : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // findProblem must see the source tree's problems even outside ctest.
        qputenv("KERNELFORGE_PROBLEMS", problemsDir().toUtf8());
    }

    void enums()
    {
        for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::Bool})
            QCOMPARE(parseDType(toString(t)), std::optional<DType>(t));
        for (Dist d : {Dist::Uniform, Dist::Normal, Dist::Laplace, Dist::LogNormal, Dist::Exponential})
            QCOMPARE(parseDist(toString(d)), std::optional<Dist>(d));
        for (Policy p : {Policy::Strict, Policy::Loose})
            QCOMPARE(parsePolicy(toString(p)), std::optional<Policy>(p));
        QCOMPARE(toString(DType::F32), std::string("float32"));
        QCOMPARE(toString(DType::I64), std::string("int64"));
        QCOMPARE(parseDType("fp16"), std::optional<DType>(DType::F16));
        QVERIFY(!parseDType("float33"));
        QVERIFY(!parseDist("gauss"));
        QVERIFY(!parsePolicy("lenient"));
        QCOMPARE(elementSize(DType::F32), std::size_t(4));
        QCOMPARE(elementSize(DType::BF16), std::size_t(2));
        QCOMPARE(elementSize(DType::F64), std::size_t(8));
        QCOMPARE(elementSize(DType::I64), std::size_t(8));
        QCOMPARE(elementSize(DType::Bool), std::size_t(1));
        QCOMPARE(tolerance(Policy::Strict), 1e-4);
        QCOMPARE(tolerance(Policy::Loose), 1e-2);
    }

    void derivedBytes()
    {
        Problem p;
        InputSpec x;
        x.name = "x";
        x.shape = {4096, 65536};
        p.inputs.push_back(x);
        ParamSpec w;
        w.name = "w";
        w.shape = {96, 3, 11, 11};
        w.dtype = DType::F16;
        p.params.push_back(w);
        TensorSpec idx;
        idx.name = "out";
        idx.shape = {4096};
        idx.dtype = DType::I64;
        p.outputs.push_back(idx);
        TensorSpec scalar;
        scalar.name = "s";
        p.outputs.push_back(scalar);
        QCOMPARE(scalar.numel(), std::int64_t(1));
        const double expected = 4096.0 * 65536 * 4 + 96 * 3 * 11 * 11 * 2 + 4096 * 8 + 4;
        QCOMPARE(p.derivedBytes(), expected);
        QCOMPARE(p.bytes(), expected);
        p.bytesMoved = 123.0;
        QCOMPARE(p.bytes(), 123.0);
        QCOMPARE(p.tensor("w")->name, std::string("w"));
        QVERIFY(p.tensor("out")->dtype == DType::I64);
        QVERIFY(p.tensor("x") == &p.inputs[0]);
        QVERIFY(!p.tensor("nope"));
    }

    void valid()
    {
        auto r = parse(QString::fromUtf8(kValid));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        const Problem &p = *r;
        QCOMPARE(p.name, std::string("t"));
        QCOMPARE(p.path, std::string("bad.toml"));
        QCOMPARE(p.text, std::string(kValid));
        QCOMPARE(p.variant, std::string());
        QCOMPARE(p.constants.at("N"), std::int64_t(8));
        QCOMPARE(p.inputs[0].shape, (std::vector<std::int64_t>{8, 4}));
        QCOMPARE(p.inputs[0].distributions,
                 (std::vector<Dist>{Dist::Uniform, Dist::Normal, Dist::Laplace, Dist::LogNormal, Dist::Exponential}));
        QCOMPARE(p.params[0].init, std::string("ones"));
        QCOMPARE(p.outputs[0].shape, (std::vector<std::int64_t>{8, 4}));
        QVERIFY(p.policy == Policy::Strict);
        QVERIFY(!p.normalization);
        QVERIFY(!p.flops);
        QCOMPARE(p.bytes(), double(8 * 4 * 4 + 4 * 4 + 8 * 4 * 4));
        QVERIFY(QString::fromStdString(p.referenceSource).contains("def forward"));

        auto small = parse(QString::fromUtf8(kValid), "small");
        QVERIFY(small.ok());
        QCOMPARE(small->variant, std::string("small"));
        QCOMPARE(small->constants.at("N"), std::int64_t(2));
        QCOMPARE(small->inputs[0].shape, (std::vector<std::int64_t>{2, 4}));
        QCOMPARE(small->outputs[0].shape, (std::vector<std::int64_t>{2, 4}));

        // Declared counts describe the main sizes: a variant derives its own.
        const QString declared =
            QString::fromUtf8(kValid).replace("[constants]", "flops = 1e9\nbytes = 2e9\n[constants]");
        auto full = parse(declared);
        QVERIFY(full.ok());
        QCOMPARE(*full->flops, 1e9);
        QCOMPARE(full->bytes(), 2e9);
        auto smallDeclared = parse(declared, "small");
        QVERIFY(smallDeclared.ok());
        QVERIFY(!smallDeclared->flops);
        QCOMPARE(smallDeclared->bytes(), double(2 * 4 * 4 + 4 * 4 + 2 * 4 * 4));

        auto missing = parse(QString::fromUtf8(kValid), "huge");
        QVERIFY(!missing.ok());
        QVERIFY(QString::fromStdString(missing.error().text()).contains("huge"));
    }

    void options()
    {
        // Distributions keep the problem's own first; parameters keep their initializer ranges.
        QString text = QString::fromUtf8(kValid);
        text.replace(
            "dtype = \"float32\"",
            "dtype = \"float32\"\ninit = \"lognormal\"\ndistributions = [\"uniform\", \"exponential\", \"lognormal\"]");
        text.replace("init = \"ones\"", "init = \"uniform\"\nlow = -2\nhigh = 0.5");
        text.replace("description = \"test problem\"",
                     "description = \"test\"\npolicy = \"loose\"\nnormalization = true\nflops = 1e9\nbytes = 2048");
        auto r = parse(text);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        QCOMPARE(r->inputs[0].distributions, (std::vector<Dist>{Dist::LogNormal, Dist::Uniform, Dist::Exponential}));
        QCOMPARE(r->params[0].init, std::string("uniform"));
        QCOMPARE(r->params[0].low, -2.0);
        QCOMPARE(r->params[0].high, 0.5);
        QVERIFY(r->policy == Policy::Loose);
        QVERIFY(r->normalization);
        QCOMPARE(*r->flops, 1e9);
        QCOMPARE(r->bytes(), 2048.0);

        // fan_in: an expression over constants, or derived from a weight's trailing dimensions.
        QString conv = QString::fromUtf8(kValid);
        conv.replace("shape = [4]\ninit = \"ones\"", "shape = [4, 3, \"N\"]\ninit = \"fan_in_uniform\"");
        conv.replace("def forward(x: Tensor, w: Tensor)", "def forward(x: Tensor, w: Tensor, eps: float = 1e-5)");
        auto c = parse(conv);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().text().c_str());
        QCOMPARE(c->params[0].fanIn, std::int64_t(24));
        conv.replace("init = \"fan_in_uniform\"", "init = \"fan_in_uniform\"\nfan_in = \"3*N\"");
        auto c2 = parse(conv, "small");
        QVERIFY2(c2.ok(), c2.ok() ? "" : c2.error().text().c_str());
        QCOMPARE(c2->params[0].fanIn, std::int64_t(6));
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("field");   // empty: a TOML syntax error, which has no field
        QTest::addColumn<QString>("mention"); // in the message

        const QString base = QString::fromUtf8(kValid);
        QTest::newRow("missing name") << withLine(1, nullptr) << 1 << "name"
                                      << "missing";
        QTest::newRow("name not a string") << withLine(1, "name = 3") << 1 << "name"
                                           << "string";
        QTest::newRow("bad dtype") << withLine(10, "dtype = \"float33\"") << 10 << "inputs[0].dtype"
                                   << "float33";
        QTest::newRow("unknown constant") << withLine(9, "shape = [\"M\", 4]") << 9 << "inputs[0].shape[0]"
                                          << "\"M\"";
        QTest::newRow("negative dim") << withLine(9, "shape = [\"N\", -4]") << 9 << "inputs[0].shape[1]"
                                      << "positive";
        QTest::newRow("zero dim expr") << withLine(9, "shape = [\"N-8\", 4]") << 9 << "inputs[0].shape[0]"
                                       << "positive";
        QTest::newRow("float dim") << withLine(9, "shape = [2.5, 4]") << 9 << "inputs[0].shape[0]"
                                   << "integer";
        QTest::newRow("bad expression") << withLine(9, "shape = [\"N $ 2\", 4]") << 9 << "inputs[0].shape[0]"
                                        << "\"$\"";
        QTest::newRow("div by zero") << withLine(9, "shape = [\"N/0\", 4]") << 9 << "inputs[0].shape[0]"
                                     << "division by zero";
        QTest::newRow("shape not array") << withLine(9, "shape = \"N\"") << 9 << "inputs[0].shape"
                                         << "array";
        QTest::newRow("missing shape") << withLine(9, nullptr) << 7 << "inputs[0].shape"
                                       << "missing";
        QTest::newRow("bad toml syntax") << withLine(10, "dtype = float32") << 10 << ""
                                         << "TOML";
        QTest::newRow("unterminated string") << withLine(12, "name = \"w") << 12 << ""
                                             << "TOML";
        QTest::newRow("duplicate table") << withLine(5, "[constants]") << 5 << ""
                                         << "TOML";
        QTest::newRow("duplicate tensor name") << withLine(12, "name = \"x\"") << 12 << "params[0].name"
                                               << "duplicate";
        QTest::newRow("output named like input") << withLine(8, "name = \"out\"") << 16 << "outputs[0].name"
                                                 << "duplicate";
        QTest::newRow("bad output name") << withLine(16, "name = \"y\"") << 16 << "outputs[0].name"
                                         << "\"out\"";
        QTest::newRow("tensor name not identifier") << withLine(8, "name = \"x-1\"") << 8 << "inputs[0].name"
                                                    << "identifier";
        QTest::newRow("unknown input init") << withLine(10, "init = \"gauss\"") << 10 << "inputs[0].init"
                                            << "gauss";
        QTest::newRow("unknown param init") << withLine(14, "init = \"xavier\"") << 14 << "params[0].init"
                                            << "xavier";
        QTest::newRow("fan_in missing on 1-d") << withLine(14, "init = \"fan_in_uniform\"") << 11 << "params[0].fan_in"
                                               << "required";
        QTest::newRow("low on ones") << withLine(14, "init = \"ones\"\nlow = 1") << 15 << "params[0].low"
                                     << "uniform";
        QTest::newRow("typo key") << withLine(9, "shpae = [\"N\", 4]") << 9 << "inputs[0].shpae"
                                  << "unknown key";
        QTest::newRow("unknown top-level key") << withLine(2, "descripton = \"x\"") << 2 << "descripton"
                                               << "unknown key";
        QTest::newRow("constant not integer") << withLine(4, "N = 8.5") << 4 << "constants.N"
                                              << "integer";
        QTest::newRow("variant unknown constant") << withLine(6, "M = 2") << 6 << "variants.small.M"
                                                  << "not in [constants]";
        QTest::newRow("unknown policy") << withLine(2, "policy = \"lenient\"") << 2 << "policy"
                                        << "lenient";
        QTest::newRow("negative flops") << withLine(2, "flops = -1") << 2 << "flops"
                                        << "positive";
        QTest::newRow("unknown reference key") << withLine(19, "src = '''") << 19 << "reference.src"
                                               << "unknown key";
        QTest::newRow("no def forward") << withLine(20, "def fwd(x: Tensor, w: Tensor) -> Tensor:") << 19
                                        << "reference.source"
                                        << "def forward";
        QTest::newRow("forward args mismatch")
            << withLine(20, "def forward(x: Tensor) -> Tensor:") << 20 << "reference.source"
            << "(x, w)";
        QTest::newRow("forward args order")
            << withLine(20, "def forward(w: Tensor, x: Tensor) -> Tensor:") << 20 << "reference.source"
            << "(x, w)";
        QString noReference = base;
        noReference.truncate(noReference.indexOf("[reference]"));
        QTest::newRow("missing reference") << noReference << 1 << "reference"
                                           << "missing";
        QString emptyReference = noReference + "[reference]\n";
        QTest::newRow("reference without source") << emptyReference << 18 << "reference.source"
                                                  << "missing";
        QString noOutputs = base;
        noOutputs.remove("[[outputs]]\nname = \"out\"\nshape = [\"N\", 4]\n");
        QTest::newRow("missing outputs") << noOutputs << 1 << "outputs"
                                         << "[[outputs]]";
    }
    void malformed()
    {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(QString, field);
        QFETCH(QString, mention);
        auto r = parse(text);
        QVERIFY2(!r.ok(), "a malformed file parsed");
        const Error &e = r.error();
        const QString where = QString::fromStdString(e.where);
        const QString all = QString::fromStdString(e.text());
        QCOMPARE(QString::fromStdString(toString(e.code)), QStringLiteral("parse"));
        QString expectedWhere = QStringLiteral("bad.toml:%1").arg(line);
        if (!field.isEmpty())
            expectedWhere += ": " + field;
        QCOMPARE(where, expectedWhere);
        QVERIFY2(QString::fromStdString(e.message).contains(mention), qPrintable(all));
    }

    void loadErrors()
    {
        auto r = loadProblemFile("/nonexistent/x.toml");
        QVERIFY(!r.ok());
        QCOMPARE(toString(r.error().code), std::string("io"));
        QCOMPARE(r.error().where, std::string("/nonexistent/x.toml"));

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto write = [&](const QString &name, const QString &text) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text.toUtf8());
        };
        QDir(dir.path()).mkpath("sub");
        write("sub/good.toml", QString::fromUtf8(kValid));
        write("bad.toml", withLine(10, "dtype = \"float33\""));
        write("notes.txt", "ignored");
        ProblemListing listing = listProblems(dir.path().toStdString());
        QCOMPARE(listing.problems.size(), std::size_t(1));
        QCOMPARE(listing.errors.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(listing.errors[0].where).contains("bad.toml:10"));
        QVERIFY(QString::fromStdString(listing.problems[0].path).endsWith("sub/good.toml"));

        QVERIFY(!listProblems("/nonexistent").errors.empty());
    }

    void shipped_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString &f : shippedFiles())
            QTest::newRow(qPrintable(QDir(problemsDir()).relativeFilePath(f))) << f;
    }
    void shipped()
    {
        QFETCH(QString, file);
        auto full = loadProblemFile(file.toStdString());
        QVERIFY2(full.ok(), full.ok() ? "" : full.error().text().c_str());
        auto small = loadProblemFile(file.toStdString(), "small");
        QVERIFY2(small.ok(), small.ok() ? "" : small.error().text().c_str());

        for (const Problem *p : {&*full, &*small}) {
            QVERIFY(!p->outputs.empty());
            QVERIFY(!p->inputs.empty());
            QVERIFY(!p->description.empty());
        }
        QVERIFY2(full->flops && *full->flops > 0, "flops must be declared");
        QVERIFY2(full->bytesMoved && *full->bytesMoved > 0, "bytes must be declared");
        QVERIFY2(!small->flops && !small->bytesMoved, "a variant's counts come from its own sizes");
        QCOMPARE(QString::fromStdString(full->name), QFileInfo(file).completeBaseName());
        // Declared bytes follow the contract's rule: every input and parameter read once and
        // every output written once.
        QVERIFY2(
            std::abs(*full->bytesMoved - full->derivedBytes()) <= 1e-3 * full->derivedBytes(),
            qPrintable(QStringLiteral("declared %1, derived %2").arg(*full->bytesMoved).arg(full->derivedBytes())));
        // The small variant is what CPU tests build: it must really be small.
        std::int64_t smallElements = 0;
        for (const auto &t : small->inputs)
            smallElements += t.numel();
        for (const auto &t : small->params)
            smallElements += t.numel();
        for (const auto &t : small->outputs)
            smallElements += t.numel();
        QVERIFY2(smallElements <= 20000, qPrintable(QString::number(smallElements)));
        QVERIFY(full->inputs[0].numel() > small->inputs[0].numel());
        QVERIFY(QString::fromStdString(full->referenceSource).contains(QRegularExpression("def forward\\(.*\\) -> ")));
    }

    void shippedSet()
    {
        QSet<QString> names;
        int level1 = 0, level2 = 0;
        for (const QString &f : shippedFiles()) {
            auto p = loadProblemFile(f.toStdString());
            QVERIFY(p.ok());
            const QString name = QString::fromStdString(p->name);
            QVERIFY2(!names.contains(name), qPrintable("duplicate problem name " + name));
            names.insert(name);
            level1 += f.contains("/level1/");
            level2 += f.contains("/level2/");
        }
        QVERIFY(level1 >= 10);
        QVERIFY(level2 >= 6);
        QVERIFY(listProblems(problemsDir().toStdString()).errors.empty());

        // Kernels are written against these names and shapes.
        auto seed = [](const char *name) {
            auto r = loadProblemFile(QStringLiteral(KF_SOURCE_DIR "/problems/seed/%1.toml").arg(name).toStdString());
            if (!r.ok())
                qWarning("%s", r.error().text().c_str());
            return r;
        };
        auto mm = seed("matmul");
        QVERIFY(mm.ok());
        QCOMPARE(mm->inputs[0].name, std::string("A"));
        QCOMPARE(mm->inputs[1].name, std::string("B"));
        QCOMPARE(mm->outputs[0].shape, (std::vector<std::int64_t>{4096, 4096}));
        QCOMPARE(*mm->flops, 2.0 * 4096 * 4096 * 4096);
        auto conv = seed("conv2d");
        QVERIFY(conv.ok());
        QCOMPARE(conv->inputs[0].shape, (std::vector<std::int64_t>{100, 3, 224, 224}));
        QCOMPARE(conv->params[0].name, std::string("weight"));
        QCOMPARE(conv->params[0].shape, (std::vector<std::int64_t>{96, 3, 11, 11}));
        QCOMPARE(conv->params[0].fanIn, std::int64_t(363));
        QCOMPARE(conv->params[1].name, std::string("bias"));
        QCOMPARE(conv->params[1].fanIn, std::int64_t(363));
        QCOMPARE(conv->outputs[0].shape, (std::vector<std::int64_t>{100, 96, 55, 55}));
        auto pool = seed("conv2d_relu_maxpool");
        QVERIFY(pool.ok());
        QCOMPARE(pool->outputs[0].shape, (std::vector<std::int64_t>{100, 96, 27, 27}));
        auto sm = seed("softmax");
        QVERIFY(sm.ok());
        QCOMPARE(sm->inputs[0].shape, (std::vector<std::int64_t>{4096, 65536}));
        auto ln = seed("layernorm");
        QVERIFY(ln.ok());
        QVERIFY(ln->normalization);
        QCOMPARE(ln->inputs[0].shape, (std::vector<std::int64_t>{16, 64, 256, 256}));
        QCOMPARE(ln->params[0].init, std::string("ones"));
        QCOMPARE(ln->params[1].init, std::string("zeros"));
    }

    void find_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("name");
        QTest::newRow("by name") << "softmax"
                                 << "softmax";
        QTest::newRow("by relative path") << "seed/matmul"
                                          << "matmul";
        QTest::newRow("by file path") << QStringLiteral(KF_SOURCE_DIR "/problems/seed/layernorm.toml") << "layernorm";
    }
    void find()
    {
        QFETCH(QString, query);
        QFETCH(QString, name);
        auto r = findProblem(query.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        QCOMPARE(QString::fromStdString(r->name), name);
        QVERIFY(!r->text.empty());
        auto small = findProblem(query.toStdString(), "small");
        QVERIFY(small.ok());
        QCOMPARE(small->variant, std::string("small"));
        QVERIFY(small->inputs[0].numel() < r->inputs[0].numel());
    }

    void findErrors()
    {
        auto r = findProblem("no_such_problem");
        QVERIFY(!r.ok());
        QCOMPARE(toString(r.error().code), std::string("not-found"));
        QVERIFY(QString::fromStdString(r.error().message).contains("no_such_problem"));
        const auto path = problemSearchPath();
        QVERIFY(!path.empty());
        QCOMPARE(QDir(QString::fromStdString(path.front())).canonicalPath(), QDir(problemsDir()).canonicalPath());
    }

    void searchPathFromSourceTree()
    {
        // Without the variable, a program started inside the checkout still finds its problems.
        const QByteArray saved = qgetenv("KERNELFORGE_PROBLEMS");
        const QString cwd = QDir::currentPath();
        qunsetenv("KERNELFORGE_PROBLEMS");
        QVERIFY(QDir::setCurrent(QStringLiteral(KF_SOURCE_DIR "/tests/problem")));
        const auto path = problemSearchPath();
        auto r = findProblem("matmul", "small");
        QDir::setCurrent(cwd);
        qputenv("KERNELFORGE_PROBLEMS", saved);
        QStringList folders;
        for (const auto &p : path)
            folders << QDir(QString::fromStdString(p)).canonicalPath();
        QVERIFY2(folders.contains(QDir(problemsDir()).canonicalPath()), qPrintable(folders.join(", ")));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        QCOMPARE(r->inputs[0].shape, (std::vector<std::int64_t>{16, 16}));
    }
};

QTEST_APPLESS_MAIN(TestProblem)
#include "test_problem.moc"
