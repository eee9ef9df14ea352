// The integer expressions of problem shapes and launch directives.
#include "util/expr.h"

#include <QtTest/QTest>

using namespace kf;

namespace {

ExprEnv testEnv()
{
    ExprEnv env;
    env.constants = {{"N", 4096}, {"B", 16}, {"K", 3}, {"ZERO", 0}};
    env.shapes = {{"x", {16, 64, 256}}, {"out", {4096}}, {"s", {}}};
    return env;
}

} // namespace

class TestExpr : public QObject {
    Q_OBJECT
private slots:
    void values_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qlonglong>("expected");
        // Arithmetic and literals.
        QTest::newRow("literal") << "42" << 42LL;
        QTest::newRow("spaces") << "  7 " << 7LL;
        QTest::newRow("add") << "1+2" << 3LL;
        QTest::newRow("sub chain is left-assoc") << "10-3-2" << 5LL;
        QTest::newRow("div chain is left-assoc") << "64/4/2" << 8LL;
        QTest::newRow("mod") << "17 % 5" << 2LL;
        QTest::newRow("large") << "4096*4096*4096" << 68719476736LL;
        // Precedence.
        QTest::newRow("mul before add") << "2+3*4" << 14LL;
        QTest::newRow("parens") << "(2+3)*4" << 20LL;
        QTest::newRow("div before sub") << "10-6/3" << 8LL;
        QTest::newRow("nested parens") << "((1+2)*(3+4))%5" << 1LL;
        // Unary minus and C semantics of / and %.
        QTest::newRow("unary minus") << "-5+2" << -3LL;
        QTest::newRow("double minus") << "--5" << 5LL;
        QTest::newRow("unary binds tighter") << "-2*3" << -6LL;
        QTest::newRow("unary plus") << "+4" << 4LL;
        QTest::newRow("div truncates toward zero") << "-7/2" << -3LL;
        QTest::newRow("mod sign follows dividend") << "-7%3" << -1LL;
        // Constants and functions.
        QTest::newRow("constant") << "N" << 4096LL;
        QTest::newRow("constant expr") << "N/B + K" << 259LL;
        QTest::newRow("cdiv exact") << "cdiv(N, 256)" << 16LL;
        QTest::newRow("cdiv rounds up") << "cdiv(N+1, 256)" << 17LL;
        QTest::newRow("cdiv negative") << "cdiv(-7, 2)" << -3LL;
        QTest::newRow("min") << "min(B, K)" << 3LL;
        QTest::newRow("max") << "max(B, K*10)" << 30LL;
        QTest::newRow("nested calls") << "max(min(1,2), cdiv(9,4))" << 3LL;
        // Tensor shapes.
        QTest::newRow("numel") << "x.numel" << 262144LL;
        QTest::newRow("ndim") << "x.ndim" << 3LL;
        QTest::newRow("shape[0]") << "x.shape[0]" << 16LL;
        QTest::newRow("shape[-1]") << "x.shape[-1]" << 256LL;
        QTest::newRow("shape[-3]") << "x.shape[-3]" << 16LL;
        QTest::newRow("shape index expr") << "x.shape[K-2]" << 64LL;
        QTest::newRow("shape in grid") << "cdiv(out.numel, 1024) * 2" << 8LL;
        QTest::newRow("0-d numel") << "s.numel" << 1LL;
        QTest::newRow("0-d ndim") << "s.ndim" << 0LL;
        QTest::newRow("spaces around dot") << "x . shape [ 1 ]" << 64LL;
    }
    void values()
    {
        QFETCH(QString, text);
        QFETCH(qlonglong, expected);
        auto r = evalExpr(text.toStdString(), testEnv(), "test");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        QCOMPARE(qlonglong(*r), expected);
    }

    void errors_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("mention"); // the message must name the offending token
        QTest::newRow("unknown name") << "N*M"
                                      << "\"M\"";
        QTest::newRow("unknown tensor") << "y.numel"
                                        << "\"y\"";
        QTest::newRow("unknown property") << "x.size"
                                          << "\"size\"";
        QTest::newRow("unknown function") << "ceil(N, 2)"
                                          << "\"ceil\"";
        QTest::newRow("tensor without property") << "x + 1"
                                                 << "\"x\"";
        QTest::newRow("div by zero") << "N / ZERO"
                                     << "division by zero";
        QTest::newRow("mod by zero") << "N % 0"
                                     << "division by zero";
        QTest::newRow("cdiv by zero") << "cdiv(N, 0)"
                                      << "division by zero";
        QTest::newRow("bad token") << "N $ 2"
                                   << "\"$\"";
        QTest::newRow("trailing token") << "N 2"
                                        << "\"2\"";
        QTest::newRow("float literal") << "1.5"
                                       << "\"1\"";
        QTest::newRow("number glued to name") << "12abc"
                                              << "\"12abc\"";
        QTest::newRow("empty") << ""
                               << "empty";
        QTest::newRow("blank") << "   "
                               << "empty";
        QTest::newRow("missing operand") << "N +"
                                         << "end of expression";
        QTest::newRow("unclosed paren") << "(N + 1"
                                        << "end of expression";
        QTest::newRow("missing comma") << "min(1 2)"
                                       << "\"2\"";
        QTest::newRow("index out of range") << "x.shape[3]"
                                            << "out of range";
        QTest::newRow("negative index out of range") << "x.shape[-4]"
                                                     << "out of range";
        QTest::newRow("overflow") << "N*N*N*N*N*N"
                                  << "overflow";
        QTest::newRow("literal too large") << "99999999999999999999"
                                           << "too large";
    }
    void errors()
    {
        QFETCH(QString, text);
        QFETCH(QString, mention);
        auto r = evalExpr(text.toStdString(), testEnv(), "cand.cu:3 grid");
        QVERIFY2(!r.ok(), qPrintable("expected an error for " + text));
        QCOMPARE(QString::fromStdString(r.error().where), QStringLiteral("cand.cu:3 grid"));
        QCOMPARE(QString::fromStdString(toString(r.error().code)), QStringLiteral("expr"));
        const QString message = QString::fromStdString(r.error().message);
        QVERIFY2(message.contains(mention), qPrintable(message));
        QVERIFY2(QString::fromStdString(r.error().text()).startsWith("cand.cu:3 grid: "), qPrintable(message));
    }
};

QTEST_APPLESS_MAIN(TestExpr)
#include "test_expr.moc"
