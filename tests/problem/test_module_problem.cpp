// Module problems (docs/formats.md, "Module problems"): the file points at a saved TorchScript
// module; loading it reads the module's bytes into the problem, and the text a session keeps carries
// them ([module_data]). No libtorch here: the bytes are only carried.
#include "problem/problem.h"

#include <QtCore/QFile>
#include <QtCore/QTemporaryDir>
#include <QtTest/QTest>

using namespace kf;

namespace {

const char *kModuleProblem = R"(name = "kb_linear"
description = "imported"
[[inputs]]
name = "x"
shape = [4, 8]
[[params]]
name = "linear_weight"
attribute = "linear.weight"
shape = [16, 8]
init = "fan_in_uniform"
[[params]]
name = "scale"
shape = [16]
init = "ones"
[[outputs]]
name = "out"
shape = [4, 16]
[reference]
module = "kb_linear.pt"
torch = "2.5.1"
method = "script"
source = '''
class Model(nn.Module):
    def forward(self, x):
        return self.linear(x) * self.scale
'''
)";

// Bytes with a NUL and high bytes, as a zip file has.
const std::string kModuleBytes = std::string("PK\x03\x04\0\xff module bytes", 20);

void write(const QString &path, const std::string &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes.data(), qint64(bytes.size()));
}

} // namespace

class TestModuleProblem : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void loadsTheModuleIntoTheText()
    {
        const QString toml = m_dir.filePath("kb_linear.toml");
        write(toml, kModuleProblem);
        write(m_dir.filePath("kb_linear.pt"), kModuleBytes);
        auto p = loadProblemFile(toml.toStdString());
        QVERIFY2(p, p ? "" : p.error().text().c_str());
        QVERIFY(p->isModule());
        QCOMPARE(p->modulePath, std::string("kb_linear.pt"));
        QCOMPARE(p->moduleTorch, std::string("2.5.1"));
        QVERIFY(p->module);
        QCOMPARE(*p->module, kModuleBytes);
        QVERIFY(QString::fromStdString(p->referenceSource).contains("class Model"));
        QCOMPARE(p->params[0].attribute, std::string("linear.weight"));
        QCOMPARE(p->params[1].attribute, std::string("scale")); // a parameter of the model itself
        QCOMPARE(p->params[0].fanIn, std::int64_t(8));

        // The text stays the file's own; the text a session keeps carries the module, and parsing
        // it elsewhere gives the same module.
        QVERIFY(!QString::fromStdString(p->text).contains("[module_data]"));
        const std::string whole = textWithModule(*p);
        QVERIFY(QString::fromStdString(whole).contains("[module_data]"));
        QCOMPARE(textWithModule(*parseProblem(whole, "sent.toml")), whole); // not appended twice
        auto again = parseProblem(whole, "sent.toml");
        QVERIFY2(again, again ? "" : again.error().text().c_str());
        QVERIFY(again->module);
        QCOMPARE(*again->module, kModuleBytes);
        QCOMPARE(again->params.size(), std::size_t(2));
    }

    // The numbers among get_inputs()'s items, for tools/compile-baseline.py: integers, floats,
    // booleans and TOML's inf are all numbers forward may take.
    void takesFixedNumbers()
    {
        QString text = QString::fromUtf8(kModuleProblem);
        text.replace("method = \"script\"",
                     "method = \"script\"\nnumbers = [{ position = 1, value = 3.14 }, "
                     "{ position = 2, value = true }, { position = 3, value = -inf }, "
                     "{ position = 4, value = 2 }]");
        text += "\n[module_data]\nbase64 = \"UEsDBA==\"\n";
        auto p = parseProblem(text.toStdString(), "numbers.toml", {});
        QVERIFY2(p, p ? "" : p.error().text().c_str());
    }

    void textWithoutTheModuleIsRefused()
    {
        auto p = parseProblem(kModuleProblem, "kb.toml");
        QVERIFY(!p);
        QVERIFY2(QString::fromStdString(p.error().text()).contains("kb.toml:19: reference.module"),
                 p.error().text().c_str());
        QVERIFY(QString::fromStdString(p.error().message).contains("[module_data]"));
    }

    void missingModuleFile()
    {
        QTemporaryDir dir;
        const QString toml = dir.filePath("kb_linear.toml");
        write(toml, kModuleProblem);
        auto p = loadProblemFile(toml.toStdString());
        QVERIFY(!p);
        QCOMPARE(toString(p.error().code), std::string("io"));
        QVERIFY2(QString::fromStdString(p.error().text()).contains("kb_linear.toml:19: reference.module"),
                 p.error().text().c_str());
        QVERIFY(QString::fromStdString(p.error().message).contains("kb_linear.pt"));
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("attribute without a module") << "module = \"kb_linear.pt\""
                                                    << "# no module"
                                                    << "bad.toml:8: params[0].attribute"
                                                    << "only to module problems";
        QTest::newRow("empty attribute") << "attribute = \"linear.weight\""
                                         << "attribute = \"\""
                                         << "bad.toml:8: params[0].attribute"
                                         << "module attribute";
        QTest::newRow("attribute twice") << "name = \"scale\""
                                         << "name = \"scale\"\nattribute = \"linear.weight\""
                                         << "bad.toml:12: params[1].attribute"
                                         << "already another parameter's";
        QTest::newRow("bad method") << "method = \"script\""
                                    << "method = \"compile\""
                                    << "bad.toml:21: reference.method"
                                    << "\"script\" or \"trace\"";
        QTest::newRow("numbers not an array") << "method = \"script\""
                                              << "method = \"script\"\nnumbers = 3.14"
                                              << "bad.toml:22: reference.numbers"
                                              << "array of";
        QTest::newRow("number without a position") << "method = \"script\""
                                                   << "method = \"script\"\nnumbers = [{ value = 3.14 }]"
                                                   << "bad.toml:22: reference.numbers[0]"
                                                   << "position = N";
        QTest::newRow("number that is a string") << "method = \"script\""
                                                 << "method = \"script\"\nnumbers = [{ position = 1, value = \"pi\" }]"
                                                 << "bad.toml:22: reference.numbers[0]"
                                                 << "value = NUMBER";
        QTest::newRow("empty module") << "module = \"kb_linear.pt\""
                                      << "module = \"\""
                                      << "bad.toml:19: reference.module"
                                      << "module's file";
    }

    void malformed()
    {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, where);
        QFETCH(QString, message);
        QString text = QString::fromUtf8(kModuleProblem);
        QVERIFY(text.contains(from));
        text.replace(from, to);
        // The module's bytes are there, so the error is about the line changed.
        text += "\n[module_data]\nbase64 = \"UEsDBA==\"\n";
        auto p = parseProblem(text.toStdString(), "bad.toml", {});
        QVERIFY(!p);
        const QString got = QString::fromStdString(p.error().text());
        QVERIFY2(got.startsWith(where) && got.contains(message), qPrintable(got));
    }

    void moduleDataNeedsAModuleProblem()
    {
        const std::string text = "name = \"t\"\n[[inputs]]\nname = \"x\"\nshape = [2]\n[[outputs]]\nname = \"out\"\n"
                                 "shape = [2]\n[reference]\nsource = '''\ndef forward(x: Tensor) -> Tensor:\n"
                                 "    return x\n'''\n[module_data]\nbase64 = \"UEsDBA==\"\n";
        auto p = parseProblem(text, "t.toml");
        QVERIFY(!p);
        QVERIFY2(QString::fromStdString(p.error().text()).startsWith("t.toml:13: module_data"),
                 p.error().text().c_str());
    }
};

QTEST_GUILESS_MAIN(TestModuleProblem)
#include "test_module_problem.moc"
