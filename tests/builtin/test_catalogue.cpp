// The catalogue: every idea is well formed, and every template renders, parses, resolves against
// its problem and compiles with NVRTC for sm_90a without spills, at several parameter points and
// for several problems of its patterns (no GPU needed). Also the template renderer itself.
#include "gen/builtin/catalogue.h"
#include "gen/builtin/pattern.h"
#include "gen/builtin/templates.h"
#include "kernel/candidate.h"
#include "support.h"
#include "worker/compiler.h"

#include <QRegularExpression>
#include <QtTest>

#include <set>

using namespace kf;
using namespace kf::builtin;
using kf::test::node;

namespace {

// Problems outside the shipped set that exercise edges: sizes that are not multiples of 4 (no
// float4 path, elementwise tails), a broadcast along a middle dim, a row op with a prologue.
struct Extra {
    const char *name;
    std::string toml;
    std::vector<OpNode> graph;
};

std::vector<Extra> extras()
{
    const char *head = "name = \"%s\"\ndescription = \"edge sizes\"\n";
    auto toml = [&](const char *name, const std::string &rest) {
        return QString::asprintf(head, name).toStdString() + rest;
    };
    auto ref = [](const std::string &args) {
        return "[reference]\nsource = '''\ndef forward(" + args + ") -> Tensor:\n    return x\n'''\n";
    };
    std::vector<Extra> out;
    out.push_back({"odd_elementwise",
                   toml("odd_elementwise",
                        "[[inputs]]\nname = \"x\"\nshape = [7, 5, 9]\n[[params]]\nname = \"s\"\n"
                        "shape = [5, 1]\ninit = \"ones\"\n[[outputs]]\nname = \"out\"\nshape = [7, 5, 9]\n" +
                            ref("x: Tensor, s: Tensor")),
                   {node("aten::mul", {"%x.1", "%s.1"}, {"%2"}, {{7, 5, 9}, {5, 1}}, {{7, 5, 9}}, {nullptr, nullptr}),
                    node("aten::gelu", {"%2", "%3"}, {"%4"}, {{7, 5, 9}, {}}, {{7, 5, 9}}, {nullptr, "none"})}});
    // The activations without a chain of their own elsewhere: each idea renders and compiles them.
    const std::vector<std::int64_t> a{6, 7, 11};
    out.push_back({"odd_activations",
                   toml("odd_activations", "[[inputs]]\nname = \"x\"\nshape = [6, 7, 11]\n[[outputs]]\nname = "
                                           "\"out\"\nshape = [6, 7, 11]\n" + ref("x: Tensor")),
                   {node("aten::selu", {"%x.1"}, {"%2"}, {a}, {a}, {nullptr}),
                    node("aten::log_sigmoid", {"%2"}, {"%3"}, {a}, {a}, {nullptr}),
                    node("aten::celu", {"%3", "%4"}, {"%5"}, {a, {}}, {a}, {nullptr, 2.0}),
                    node("aten::softshrink", {"%5", "%6"}, {"%7"}, {a, {}}, {a}, {nullptr, 0.25}),
                    node("aten::hardshrink", {"%7", "%8"}, {"%9"}, {a, {}}, {a}, {nullptr, 0.1}),
                    node("aten::threshold", {"%9", "%10", "%11"}, {"%12"}, {a, {}, {}}, {a}, {nullptr, 0.0, -1.0}),
                    node("aten::tan", {"%12"}, {"%13"}, {a}, {a}, {nullptr}),
                    node("aten::atan", {"%13"}, {"%14"}, {a}, {a}, {nullptr}),
                    node("aten::sinh", {"%14"}, {"%15"}, {a}, {a}, {nullptr}),
                    node("aten::cosh", {"%15"}, {"%16"}, {a}, {a}, {nullptr}),
                    node("aten::log2", {"%16"}, {"%17"}, {a}, {a}, {nullptr}),
                    node("aten::exp2", {"%17"}, {"%18"}, {a}, {a}, {nullptr}),
                    node("aten::log10", {"%18"}, {"%19"}, {a}, {a}, {nullptr}),
                    node("aten::floor", {"%19"}, {"%20"}, {a}, {a}, {nullptr}),
                    node("aten::ceil", {"%20"}, {"%21"}, {a}, {a}, {nullptr}),
                    node("aten::trunc", {"%21"}, {"%22"}, {a}, {a}, {nullptr}),
                    node("aten::round", {"%22"}, {"%23"}, {a}, {a}, {nullptr}),
                    node("aten::sign", {"%23"}, {"%24"}, {a}, {a}, {nullptr})}});
    // A product along the middle dim, kept: every reduction idea renders and compiles it.
    out.push_back({"odd_prod",
                   toml("odd_prod", "[[inputs]]\nname = \"x\"\nshape = [5, 9, 13]\n[[outputs]]\nname = "
                                    "\"out\"\nshape = [5, 1, 13]\n" + ref("x: Tensor")),
                   {node("aten::prod", {"%x.1", "%2", "%3", "%4"}, {"%5"}, {{5, 9, 13}, {}, {}, {}}, {{5, 1, 13}},
                         {nullptr, 1, true, nullptr})}});
    out.push_back({"odd_prod_all",
                   toml("odd_prod_all", "[[inputs]]\nname = \"x\"\nshape = [5, 9, 13]\n[[outputs]]\nname = "
                                        "\"out\"\nshape = []\n" + ref("x: Tensor")),
                   {node("aten::prod", {"%x.1", "%2"}, {"%3"}, {{5, 9, 13}, {}}, {{}}, {nullptr, nullptr})}});
    out.push_back({"odd_softmax",
                   toml("odd_softmax",
                        "[[inputs]]\nname = \"x\"\nshape = [6, 1001]\n[[outputs]]\nname = \"out\"\n"
                        "shape = [6, 1001]\n" +
                            ref("x: Tensor")),
                   {node("aten::mul", {"%x.1", "%2"}, {"%3"}, {{6, 1001}, {}}, {{6, 1001}}, {nullptr, 0.5}),
                    node("aten::log_softmax", {"%3", "%4", "%5"}, {"%6"}, {{6, 1001}, {}, {}}, {{6, 1001}},
                         {nullptr, -1, nullptr})}});
    // Weight and bias named like the templates' own variables (b, shift): renamed in the kernel.
    out.push_back(
        {"odd_layernorm",
         toml("odd_layernorm",
              "[[inputs]]\nname = \"x\"\nshape = [3, 998]\n[[params]]\nname = \"b\"\n"
              "shape = [998]\ninit = \"ones\"\n[[params]]\nname = \"shift\"\nshape = [998]\n"
              "init = \"zeros\"\n[[outputs]]\nname = \"out\"\nshape = [3, 998]\n" +
                  ref("x: Tensor, b: Tensor, shift: Tensor")),
         {node("aten::layer_norm", {"%x.1", "%2", "%b.1", "%shift.1", "%5", "%6"}, {"%7"},
               {{3, 998}, {}, {998}, {998}, {}, {}}, {{3, 998}}, {nullptr, {998}, nullptr, nullptr, 1e-5, true})}});
    out.push_back(
        {"odd_argmin",
         toml("odd_argmin",
              "[[inputs]]\nname = \"x\"\nshape = [5, 7, 3]\n[[outputs]]\nname = \"out\"\n"
              "shape = [5, 3]\ndtype = \"int64\"\n" +
                  ref("x: Tensor")),
         {node("aten::argmin", {"%x.1", "%2", "%3"}, {"%4"}, {{5, 7, 3}, {}, {}}, {{5, 3}}, {nullptr, 1, false})}});
    return out;
}

struct Case {
    QString label;
    Problem problem;
    std::vector<OpNode> graph;
};

// Every shipped problem at both sizes, and the edge cases.
const std::vector<Case> &cases()
{
    static const std::vector<Case> all = [] {
        std::vector<Case> v;
        for (const QString &name : test::shippedNames())
            for (const std::string variant : {"", "small"})
                v.push_back({name + (variant.empty() ? "" : "@small"), test::shippedProblem(name, variant),
                             test::shippedGraph(name)});
        for (Extra &e : extras())
            v.push_back({e.name, test::problemFromToml(e.toml), e.graph});
        // The edges of the patterns the shipped problems lack come in odd sizes at their small variant.
        for (const QString &name : test::ownNames())
            for (const std::string variant : {"small", ""})
                v.push_back({(variant.empty() ? "" : "odd ") + name + (variant.empty() ? "" : "@small"),
                             test::ownProblem(name, variant), test::ownGraph(name)});
        return v;
    }();
    return all;
}

// The error of a result, or "" (QVERIFY2 builds its message even when the check passes).
template <typename T>
std::string errorOf(const Result<T> &r)
{
    return r.ok() ? std::string() : r.error().text();
}

// Up to three points spread over the ranked list: the best, one from the middle, the last.
std::vector<Point> spread(const std::vector<Point> &points)
{
    if (points.size() <= 3)
        return points;
    return {points.front(), points[points.size() / 2], points.back()};
}

} // namespace

class TestBuiltinCatalogue : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useSourceTemplates(); }

    void ideasAreWellFormed()
    {
        std::set<std::string> ids;
        for (const IdeaDef &d : catalogue()) {
            QVERIFY2(ids.insert(d.id).second, d.id.c_str());
            QVERIFY(!d.title.empty() && !d.text.empty());
            QVERIFY(!d.patterns.empty());
            QVERIFY(d.estimate && d.values);
            for (const ParamDim &p : d.space)
                QVERIFY2(!p.values.empty() && !p.meaning.empty(), p.name.c_str());
            QVERIFY2(loadTemplate(d.templateId()).ok(), d.id.c_str());
        }
        // What an idea needs is in the catalogue and shares one of its patterns.
        for (const IdeaDef &d : catalogue())
            for (const std::string &n : d.needs) {
                const IdeaDef *need = findIdea(n);
                QVERIFY2(need, (d.id + " needs " + n).c_str());
                bool shared = false;
                for (PatternKind k : d.patterns)
                    shared = shared || need->forKind(k);
                QVERIFY2(shared, (d.id + " needs " + n).c_str());
            }
    }

    // Each memory-bound pattern has exactly one idea that needs nothing: where a search starts.
    void oneStartPerPattern()
    {
        for (PatternKind k :
             {PatternKind::Elementwise, PatternKind::Reduce, PatternKind::Softmax, PatternKind::LayerNorm,
              PatternKind::RMSNorm, PatternKind::Pool, PatternKind::Normalize, PatternKind::Scan}) {
            int roots = 0;
            for (const IdeaDef &d : catalogue())
                roots += d.forKind(k) && d.needs.empty() ? 1 : 0;
            QVERIFY2(roots == 1, toString(k).c_str());
        }
    }

    // No template fixes a size: integer literals above a warp's 32 would be problem sizes or
    // tile shapes outside the parameter space.
    void templatesFixNoSizes()
    {
        for (const IdeaDef &d : catalogue()) {
            if (d.forKind(PatternKind::Matmul) || d.forKind(PatternKind::Conv))
                continue;
            QString code;
            for (const QString &line : QString::fromStdString(*loadTemplate(d.templateId())).split('\n'))
                code += line.section("//", 0, 0) + '\n';
            code.remove(QRegularExpression(R"(\{\{[^}]*\}\})"));
            code.remove(QRegularExpression(R"(\b\d+\.\d*(e[+-]?\d+)?f?)"));
            code.remove(QRegularExpression(R"(0x[0-9a-fA-F]+u?)"));
            auto it = QRegularExpression(R"(\b\d+\b)").globalMatch(code);
            while (it.hasNext()) {
                auto m = it.next();
                QVERIFY2(m.captured(0).toInt() <= 32, qPrintable(QString::fromStdString(d.id) + ": " + m.captured(0)));
            }
        }
    }

    // Every idea of the memory-bound families finds at least one problem to work on.
    void everyIdeaApplies()
    {
        for (const IdeaDef &d : catalogue()) {
            if (d.forKind(PatternKind::Matmul) || d.forKind(PatternKind::Conv))
                continue;
            bool applies = false;
            for (const Case &c : cases()) {
                auto p = recognise(c.graph, c.problem);
                if (p && d.whyNot(makeTarget(*p, c.problem, 132, 9)).empty())
                    applies = true;
            }
            QVERIFY2(applies, d.id.c_str());
        }
    }

    void validPointsAreRanked()
    {
        auto p = recognise(test::shippedGraph("seed/softmax"), test::shippedProblem("seed/softmax"));
        QVERIFY(p.ok());
        Target t = makeTarget(*p, test::shippedProblem("seed/softmax"), 132, 9);
        const IdeaDef *cluster = findIdea("softmax_cluster");
        auto points = validPoints(*cluster, t);
        QVERIFY(points.size() >= 3);
        for (const Point &pt : points)
            QVERIFY(cluster->check(t, pt).empty());
        for (std::size_t i = 1; i < points.size(); ++i)
            QVERIFY(cluster->estimate(t, points[i - 1]).relative() <=
                    cluster->estimate(t, points[i]).relative() * 1.0101);
        // 65536 per row: 8 blocks of 512 threads holding 16 values each, exactly.
        QCOMPARE(points.front(), (Point{{"BLOCK", 512}, {"CLUSTER", 8}, {"ELEMS", 16}}));
        // Rows that fit one block's registers make the register idea valid, and no other size does.
        QVERIFY(!findIdea("softmax_row_in_registers")->whyNot(t).empty());
    }

    // norm_grid's layout, over row lengths, row counts and SM counts: its chunks cover the row, the
    // last one holds something, every chunk fits its block's threads, and the grid is at most one
    // block per SM (all of them must be resident at once), whole rows of blocks.
    void gridRowsAreCoveredByResidentBlocks()
    {
        const Problem ln = test::shippedProblem("seed/layernorm");
        auto p = recognise(test::shippedGraph("seed/layernorm"), ln);
        QVERIFY(p.ok());
        const IdeaDef *grid = findIdea("norm_grid");
        QVERIFY(grid);
        auto number = [](const QString &text, const char *pattern) {
            const QRegularExpressionMatch m = QRegularExpression(pattern).match(text);
            return m.hasMatch() ? m.captured(1).toLongLong() : -1;
        };
        int rendered = 0;
        for (int sms : {132, 114, 78, 16})
            for (std::int64_t rows : {1, 3, 16, 256})
                for (std::int64_t len : {4194304, 2097152, 524288, 1000004, 262148, 4325376}) {
                    Target t = makeTarget(*p, ln, sms, 9);
                    t.pattern.row.outer = rows;
                    t.pattern.row.len = len;
                    const std::string why = grid->whyNot(t);
                    if (len <= std::int64_t(sms) * 8192 * 4)
                        QVERIFY2(why.empty(), why.c_str());
                    if (!why.empty())
                        continue;
                    const std::vector<Point> points = validPoints(*grid, t);
                    QVERIFY(!points.empty());
                    auto source = renderIdea(*grid, t, points.front());
                    QVERIFY(source.ok());
                    const QString text = QString::fromStdString(*source);
                    const std::int64_t perRow = number(text, R"(kPerRow = (\d+);)"),
                                       span = number(text, R"(kSpan = (\d+);)"),
                                       blocks = number(text, R"(@launch norm_grid grid\((\d+)\))"),
                                       threads = number(text, R"(block\((\d+)\))"),
                                       groups = number(text, R"(kGroups = (\d+) / 4;)") / 4;
                    const QString where = QString("sms %1, rows %2, len %3: %4 blocks of %5 per row, span %6")
                                              .arg(sms)
                                              .arg(rows)
                                              .arg(len)
                                              .arg(blocks)
                                              .arg(perRow)
                                              .arg(span);
                    QVERIFY2(perRow > 0 && span > 0 && blocks > 0 && threads > 0, qPrintable(where));
                    QVERIFY2(perRow * span * 4 >= len && (perRow - 1) * span * 4 < len, qPrintable(where));
                    QVERIFY2(blocks <= sms && blocks % perRow == 0 && blocks / perRow <= rows, qPrintable(where));
                    QVERIFY2(span <= 8192 && groups * threads >= span, qPrintable(where));
                    ++rendered;
                }
        QVERIFY(rendered >= 60);
    }

    // Shared memory is the GPU's, as measured: a GPU with less of it gets fewer conv ring points,
    // each within its limit, and the rendered kernel checks the measured value.
    void sharedMemoryIsTheGpus()
    {
        const Problem conv = test::shippedProblem("seed/conv2d");
        auto p = recognise(test::shippedGraph("seed/conv2d"), conv);
        QVERIFY(p.ok());
        Target big = makeTarget(*p, conv, 132, 9);
        QCOMPARE(big.smemPerBlock, kDefaultSmemPerBlock);
        Target small = big;
        small.smemPerBlock = 100 * 1024;
        small.smemPerSm = 102 * 1024;
        const IdeaDef *wg = findIdea("conv_wgmma");
        const std::size_t all = validPoints(*wg, big).size(), fit = validPoints(*wg, small).size();
        QVERIFY2(fit < all, qPrintable(QString("%1 of %2 points").arg(fit).arg(all)));
        auto source = renderIdea(*wg, small, validPoints(*wg, small).front());
        QVERIFY(source.ok());
        QVERIFY(QString::fromStdString(*source).contains("<= 102400,"));
    }

    void rendersAndCompiles_data()
    {
        QTest::addColumn<QString>("idea");
        QTest::addColumn<int>("caseIndex");
        // Each idea on up to three problems of its patterns (the shipped ones at full size first).
        // Matrix products and convolutions have their own test (test_compute.cpp).
        for (const IdeaDef &d : catalogue()) {
            if (d.forKind(PatternKind::Matmul) || d.forKind(PatternKind::Conv))
                continue;
            int used = 0;
            std::set<QString> seen;
            for (std::size_t i = 0; i < cases().size() && used < 3; ++i) {
                const Case &c = cases()[i];
                auto p = recognise(c.graph, c.problem);
                if (!p || !d.whyNot(makeTarget(*p, c.problem, 132, 9)).empty())
                    continue;
                QString base = c.label.section('@', 0, 0);
                if (seen.count(base) && !c.label.startsWith("odd"))
                    continue;
                seen.insert(base);
                QTest::newRow(qPrintable(QString::fromStdString(d.id) + " " + c.label))
                    << QString::fromStdString(d.id) << int(i);
                ++used;
            }
            // The edge cases always, when the idea takes them.
            for (std::size_t i = 0; i < cases().size(); ++i) {
                const Case &c = cases()[i];
                if (!c.label.startsWith("odd") || seen.count(c.label.section('@', 0, 0)))
                    continue;
                auto p = recognise(c.graph, c.problem);
                if (!p || !d.whyNot(makeTarget(*p, c.problem, 132, 9)).empty())
                    continue;
                QTest::newRow(qPrintable(QString::fromStdString(d.id) + " " + c.label))
                    << QString::fromStdString(d.id) << int(i);
            }
        }
    }

    void rendersAndCompiles()
    {
        QFETCH(QString, idea);
        QFETCH(int, caseIndex);
        const Case &c = cases()[std::size_t(caseIndex)];
        const IdeaDef *def = findIdea(idea.toStdString());
        QVERIFY(def);
        auto pattern = recognise(c.graph, c.problem);
        QVERIFY(pattern.ok());
        const Target t = makeTarget(*pattern, c.problem, 132, 9);
        for (const Point &point : spread(validPoints(*def, t))) {
            const std::string where = def->id + " at " + pointText(point) + " for " + c.label.toStdString();
            auto source = renderIdea(*def, t, point);
            QVERIFY2(source.ok(), (where + ": " + errorOf(source)).c_str());
            QVERIFY2(source->find("{{") == std::string::npos, where.c_str());
            QVERIFY2(source->find("Built-in idea " + def->id + ": " + pointText(point)) != std::string::npos,
                     where.c_str());

            auto cand = parseCandidate(*source);
            QVERIFY2(cand.ok(), (where + ": " + errorOf(cand)).c_str());
            QCOMPARE(cand->problem, c.problem.name);
            QVERIFY(cand->precision == Precision::FP32);
            auto plan = resolveCandidate(*cand, c.problem);
            QVERIFY2(plan.ok(), (where + ": " + errorOf(plan)).c_str());

            std::vector<std::string> kernels;
            for (const LaunchDecl &l : cand->launches)
                kernels.push_back(l.kernel);
            CompileOptions options;
            options.arch = "sm_90a";
            auto out = compileCuda(*source, kernels, options);
            QVERIFY2(out.ok(), (where + ": " + errorOf(out)).c_str());
            if (!out->ok)
                qWarning("%s\n%s\n%s", where.c_str(), out->log.c_str(), source->c_str());
            QVERIFY2(out->ok, where.c_str());
            for (const std::string &k : kernels) {
                QVERIFY2(out->resources.count(k), (where + ": no resources for " + k).c_str());
                const KernelResources &r = out->resources.at(k);
                QVERIFY2(r.spillStores == 0 && r.spillLoads == 0, (where + ": " + k + " spills").c_str());
                QVERIFY2(r.registers > 0, where.c_str());
            }
        }
    }

    void rendererPlaceholdersAndSections()
    {
        const std::string text = "a {{X}} b\n  {{#ON}}\nkept {{X}}\n  {{/ON}}\n{{^ON}}\ndropped\n{{/ON}}\nend\n";
        auto r = renderTemplate(text, {{"X", "1"}, {"ON", "1"}}, "t.cu");
        QVERIFY(r.ok());
        QCOMPARE(*r, std::string("a 1 b\nkept 1\nend\n"));
        r = renderTemplate(text, {{"X", "2"}, {"ON", "0"}}, "t.cu");
        QCOMPARE(*r, std::string("a 2 b\ndropped\nend\n"));
        r = renderTemplate("{{Y}}", {{"X", "1"}}, "t.cu");
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.error().message).contains("{{Y}}"));
        QVERIFY(!renderTemplate("{{#A}}x", {{"A", "1"}}, "t.cu").ok());
        QVERIFY(!renderTemplate("x{{/A}}", {{"A", "1"}}, "t.cu").ok());
        QVERIFY(!renderTemplate("{{A", {{"A", "1"}}, "t.cu").ok());
        // Trailing comments of neighbouring lines line up whatever the values' widths.
        r = renderTemplate("int a = {{V}}; // one\nint bb = 2; // two\n", {{"V", "123456"}}, "t.cu");
        QCOMPARE(*r, std::string("int a = 123456; // one\nint bb = 2;     // two\n"));
    }

    void templatesAreFoundThroughTheEnvironment()
    {
        const QByteArray saved = qgetenv("KERNELFORGE_TEMPLATES");
        qputenv("KERNELFORGE_TEMPLATES", "/nonexistent:" KF_SOURCE_DIR "/resources/templates");
        auto path = templateSearchPath();
        QVERIFY(!path.empty());
        QVERIFY(QString::fromStdString(path.front()).endsWith("resources/templates"));
        qputenv("KERNELFORGE_TEMPLATES", saved);
        QVERIFY(!loadTemplate("no_such_idea").ok());
    }
};

QTEST_GUILESS_MAIN(TestBuiltinCatalogue)
#include "test_catalogue.moc"
