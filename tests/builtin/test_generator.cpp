// The built-in generator: what it supports, how it plans ideas from measurements (never the same
// idea twice on a parent, prerequisites first), the drafts it writes, and how it repairs a point.
#include "gen/builtin/builtin_generator.h"
#include "gen/builtin/catalogue.h"
#include "gen/builtin/planner.h"
#include "support.h"

#include <QtTest>

#include <map>
#include <set>

using namespace kf;
using namespace kf::builtin;

namespace {

GenContext shippedContext(const QString &name)
{
    return test::contextFor(test::shippedProblem(name), test::shippedGraph(name));
}

// A correct kernel measured at `ms`, as the search would hand it back.
KernelRecord measured(std::int64_t node, const Draft &d, double ms)
{
    KernelRecord k;
    k.node = node;
    k.ideaId = d.params.value("idea", "");
    k.source = d.source;
    k.params = d.params;
    k.result.verdict = Verdict::Correct;
    Timing t;
    t.medianMs = ms;
    k.result.timing = t;
    return k;
}

// The time the tests pretend a draft takes: the cost model's, so the search behaves as the model
// predicts and the test can follow it.
double pretendMs(const GenContext &ctx, const Draft &d)
{
    auto p = recognise(ctx.loaded.graph, ctx.problem);
    const Target t = makeTarget(*p, ctx.problem, 132, 9);
    const IdeaDef *def = findIdea(d.params.value("idea", ""));
    return memoryFloorMs(ctx) * def->estimate(t, pointFromJson(d.params)).relative();
}

// Checks one batch: no idea is proposed where it was tried, and every idea's needs are
// established or proposed before it in the batch.
void checkBatch(const GenContext &ctx, const std::vector<Idea> &ideas)
{
    std::set<std::string> established;
    for (const IdeaRecord &r : ctx.tried)
        if (r.correct > 0) established.insert(catalogueId(r.ideaId));
    std::set<std::pair<std::int64_t, std::string>> seen;
    for (const IdeaRecord &r : ctx.tried) seen.insert({r.parentNode, r.ideaId});
    for (const Idea &i : ideas) {
        QVERIFY2(seen.insert({i.parentNode, i.id}).second, ("repeated on its parent: " + i.id).c_str());
        QVERIFY(!i.why.empty() && !i.text.empty() && !i.title.empty());
        const IdeaDef *def = findIdea(catalogueId(i.id));
        QVERIFY2(def, i.id.c_str());
        if (!isTuneId(i.id))
            for (const std::string &n : def->needs)
                QVERIFY2(established.count(n), (i.id + " comes before " + n).c_str());
        established.insert(catalogueId(i.id));
    }
}

// Runs `rounds` rounds of a scripted search and returns the ideas in the order proposed.
std::vector<std::string> scriptedSearch(GenContext &ctx, Generator &g, int rounds, int ideasPerRound, int drafts)
{
    std::vector<std::string> order;
    std::int64_t nextNode = 1;
    std::vector<KernelRecord> kernels;
    for (int round = 1; round <= rounds; ++round) {
        ctx.round = round;
        auto ideas = g.proposeIdeas(ctx, ideasPerRound);
        if (!ideas) qFatal("%s", ideas.error().text().c_str());
        checkBatch(ctx, *ideas);
        for (const Idea &idea : *ideas) {
            order.push_back(idea.id);
            auto ds = g.implement(ctx, idea, drafts);
            if (!ds) qFatal("%s", ds.error().text().c_str());
            IdeaRecord rec;
            rec.node = nextNode++;
            rec.round = round;
            rec.ideaId = idea.id;
            rec.title = idea.title;
            rec.parentNode = idea.parentNode;
            for (const Draft &d : *ds) {
                kernels.push_back(measured(nextNode++, d, pretendMs(ctx, d)));
                rec.bestMs = rec.bestMs > 0 ? std::min(rec.bestMs, kernels.back().result.timing->medianMs)
                                            : kernels.back().result.timing->medianMs;
                ++rec.correct;
            }
            ctx.tried.push_back(rec);
        }
        std::sort(kernels.begin(), kernels.end(), [](const KernelRecord &a, const KernelRecord &b) {
            return a.result.timing->medianMs < b.result.timing->medianMs;
        });
        ctx.topK.assign(kernels.begin(), kernels.begin() + std::min<std::size_t>(3, kernels.size()));
    }
    return order;
}

} // namespace

class TestBuiltinGenerator : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useSourceTemplates(); }

    void supports_data()
    {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("message");
        QTest::newRow("softmax") << "seed/softmax" << true << "";
        QTest::newRow("layernorm") << "seed/layernorm" << true << "";
        QTest::newRow("rmsnorm") << "level1/rmsnorm" << true << "";
        QTest::newRow("argmax") << "level1/argmax_dim" << true << "";
        QTest::newRow("batchnorm") << "level1/batchnorm" << true << "";
        QTest::newRow("matmul") << "seed/matmul" << false << "aten::matmul";
        QTest::newRow("conv2d") << "seed/conv2d" << false << "aten::conv2d";
        QTest::newRow("maxpool") << "level1/maxpool2d" << false << "aten::max_pool2d";
    }

    void supports()
    {
        QFETCH(QString, problem);
        QFETCH(bool, ok);
        QFETCH(QString, message);
        auto g = makeBuiltinGenerator();
        QCOMPARE(QString::fromStdString(g->name()), QString("builtin"));
        const Status st = g->supports(shippedContext(problem));
        QCOMPARE(st.ok(), ok);
        if (!ok) {
            const QString text = QString::fromStdString(st.error().message);
            QVERIFY2(text.contains(message) && text.contains("LLM"), qPrintable(text));
        }
    }

    void supportsNamesAnUnknownOp()
    {
        GenContext ctx = shippedContext("level1/relu");
        ctx.loaded.graph = {test::node("aten::cumsum", {"%x.1", "%2", "%3"}, {"%4"}, {{4, 256}, {}, {}}, {{4, 256}},
                                       {nullptr, 1, nullptr})};
        const Status st = makeBuiltinGenerator()->supports(ctx);
        QVERIFY(!st.ok());
        QVERIFY(QString::fromStdString(st.error().message).contains("aten::cumsum"));
        QVERIFY(QString::fromStdString(st.error().message).contains("LLM"));
        QVERIFY(!makeBuiltinGenerator()->proposeIdeas(ctx, 3).ok());
    }

    // Nothing measured: the simplest correct idea first, then what builds on it.
    void firstRoundStartsSimple()
    {
        GenContext ctx = shippedContext("seed/softmax");
        auto ideas = makeBuiltinGenerator()->proposeIdeas(ctx, 4);
        QVERIFY(ideas.ok());
        QVERIFY(ideas->size() >= 2);
        QCOMPARE((*ideas)[0].id, std::string("softmax_three_pass"));
        QCOMPARE((*ideas)[0].parentNode, std::int64_t(0));
        QVERIFY(QString::fromStdString((*ideas)[0].why).contains("memory floor"));
        QCOMPARE((*ideas)[1].id, std::string("softmax_online"));
        QVERIFY(QString::fromStdString((*ideas)[1].why).contains("softmax_three_pass"));
        checkBatch(ctx, *ideas);
        QVERIFY(makeBuiltinGenerator()->proposeIdeas(ctx, 1)->size() == 1);
    }

    // The simplest idea failed and nothing is correct: go on with what builds on it.
    void failedStartDoesNotStopTheSearch()
    {
        GenContext ctx = shippedContext("seed/softmax");
        IdeaRecord r;
        r.node = 1;
        r.round = 1;
        r.ideaId = "softmax_three_pass";
        r.failed = 2;
        r.failure = "wrong";
        ctx.tried.push_back(r);
        auto ideas = makeBuiltinGenerator()->proposeIdeas(ctx, 3);
        QVERIFY(ideas.ok() && !ideas->empty());
        for (const Idea &i : *ideas) QVERIFY(i.id != "softmax_three_pass");
        QCOMPARE((*ideas)[0].id, std::string("softmax_online"));
        QVERIFY(QString::fromStdString((*ideas)[0].why).contains("softmax_three_pass failed (wrong)"));
    }

    void scriptedSearchNeverRepeats_data()
    {
        QTest::addColumn<QString>("problem");
        for (const char *p : {"seed/softmax", "seed/layernorm", "level1/rmsnorm", "level1/sum_dim", "level1/max_dim",
                              "level1/gelu", "level2/layernorm_residual", "level1/log_softmax"})
            QTest::newRow(p) << QString(p);
    }

    void scriptedSearchNeverRepeats()
    {
        QFETCH(QString, problem);
        GenContext ctx = shippedContext(problem);
        auto g = makeBuiltinGenerator();
        const std::vector<std::string> order = scriptedSearch(ctx, *g, 6, 3, 2);
        QVERIFY(!order.empty());
        // After a few rounds the best kernel is one the model expects near the memory floor.
        QVERIFY(!ctx.topK.empty());
        QVERIFY2(ctx.topK[0].result.timing->medianMs < 2.0 * memoryFloorMs(ctx), ctx.topK[0].ideaId.c_str());
    }

    // The seed LayerNorm has 16 rows of 4M elements: once the simple kernel is measured, splitting
    // rows across blocks is the idea with the largest expected gain, and the why says so.
    void layerNormSplitsRowsNext()
    {
        GenContext ctx = shippedContext("seed/layernorm");
        auto g = makeBuiltinGenerator();
        scriptedSearch(ctx, *g, 1, 1, 1);
        QCOMPARE(ctx.tried.front().ideaId, std::string("norm_two_pass"));
        auto ideas = g->proposeIdeas(ctx, 3);
        QVERIFY(ideas.ok() && !ideas->empty());
        QCOMPARE((*ideas)[0].id, std::string("norm_split_row"));
        QCOMPARE((*ideas)[0].parentNode, ctx.topK[0].node);
        const QString why = QString::fromStdString((*ideas)[0].why);
        QVERIFY2(why.contains("x the memory floor") && why.contains("16 blocks"), qPrintable(why));
    }

    void implementGivesDistinctPoints()
    {
        GenContext ctx = shippedContext("seed/softmax");
        auto g = makeBuiltinGenerator();
        Idea idea;
        idea.id = "softmax_cluster";
        auto drafts = g->implement(ctx, idea, 4);
        QVERIFY(drafts.ok());
        QCOMPARE(drafts->size(), std::size_t(4));
        std::set<std::string> titles;
        for (const Draft &d : *drafts) {
            QVERIFY(titles.insert(d.title).second);
            QCOMPARE(d.params.value("idea", ""), std::string("softmax_cluster"));
            QVERIFY(d.source.find("cluster(") != std::string::npos);
        }
        QCOMPARE((*drafts)[0].title, std::string("BLOCK=512, CLUSTER=8, ELEMS=16"));

        // A measured point is not generated again.
        ctx.topK.push_back(measured(7, (*drafts)[0], 0.6));
        auto again = g->implement(ctx, idea, 1);
        QVERIFY(again.ok() && again->size() == 1);
        QVERIFY((*again)[0].title != (*drafts)[0].title);

        // Neighbouring points around a measured kernel differ from it in one or two values.
        Idea tune;
        tune.id = tuneId("softmax_cluster", pointFromJson((*drafts)[0].params));
        tune.params = {{"idea", "softmax_cluster"}, {"centre", (*drafts)[0].params}};
        auto near = g->implement(ctx, tune, 3);
        QVERIFY(near.ok() && !near->empty());
        const Point centre = pointFromJson((*drafts)[0].params);
        for (const Draft &d : *near) {
            int differ = 0;
            for (const auto &[k, v] : pointFromJson(d.params)) differ += centre.at(k) != v ? 1 : 0;
            QVERIFY(differ == 1 || differ == 2);
        }
    }

    void tuningFollowsTheBestWhenIdeasRunOut()
    {
        GenContext ctx = shippedContext("level1/relu");
        auto g = makeBuiltinGenerator();
        const std::vector<std::string> order = scriptedSearch(ctx, *g, 5, 2, 2);
        bool tuned = false;
        for (const std::string &id : order) tuned = tuned || isTuneId(id);
        QVERIFY(tuned);
    }

    void repairChangesTheFailingParameter()
    {
        GenContext ctx = shippedContext("seed/softmax");
        auto g = makeBuiltinGenerator();
        Idea idea;
        idea.id = "softmax_cluster";
        auto drafts = g->implement(ctx, idea, 1);
        QVERIFY(drafts.ok() && drafts->size() == 1);

        // Too many resources: a point with fewer values per thread, the rest kept.
        KernelRecord failed;
        failed.ideaId = idea.id;
        failed.source = (*drafts)[0].source;
        failed.params = (*drafts)[0].params;
        failed.result.verdict = Verdict::LaunchError;
        failed.result.reason = "too many resources requested for launch";
        auto fixed = g->repair(ctx, idea, failed);
        QVERIFY(fixed.ok() && fixed->has_value());
        Point before = pointFromJson(failed.params), after = pointFromJson((**fixed).params);
        QVERIFY(after.at("ELEMS") < before.at("ELEMS"));
        QCOMPARE(after.at("CLUSTER"), before.at("CLUSTER"));

        // A wrong result: the idea's riskiest dimension changes.
        Idea online;
        online.id = "softmax_online";
        auto o = g->implement(ctx, online, 1);
        KernelRecord wrong;
        wrong.ideaId = online.id;
        wrong.params = (*o)[0].params;
        wrong.result.verdict = Verdict::Wrong;
        QCOMPARE(pointFromJson(wrong.params).at("VEC"), 4);
        auto vec1 = g->repair(ctx, online, wrong);
        QVERIFY(vec1.ok() && vec1->has_value());
        QCOMPARE(pointFromJson((**vec1).params).at("VEC"), 1);

        // A syntax error is not a parameter's fault.
        KernelRecord syntax = wrong;
        syntax.result.verdict = Verdict::CompileError;
        syntax.result.compileLog = "candidate.cu(12): error: expected a \";\"";
        auto none = g->repair(ctx, online, syntax);
        QVERIFY(none.ok() && !none->has_value());
    }

    void kernelHealthReadsResources()
    {
        GenContext ctx = shippedContext("seed/softmax");
        Idea idea;
        idea.id = "softmax_online";
        auto drafts = makeBuiltinGenerator()->implement(ctx, idea, 1);
        KernelRecord k = measured(3, (*drafts)[0], 1.0);
        KernelResources r;
        r.registers = 64;
        k.result.resources["softmax_online"] = r; // 512 threads: 2 blocks of 16 warps per SM
        KernelHealth h = kernelHealth(k, ctx.problem);
        QCOMPARE(h.registers, 64);
        QCOMPARE(h.threads, 512);
        QCOMPARE(h.occupancy, 0.5);
        QVERIFY(h.note.empty());
        r.registers = 200;
        r.spillStores = 16;
        k.result.resources["softmax_online"] = r;
        h = kernelHealth(k, ctx.problem);
        QVERIFY(h.occupancy < 0.25);
        QVERIFY(QString::fromStdString(h.note).contains("spills"));
    }
};

QTEST_GUILESS_MAIN(TestBuiltinGenerator)
#include "test_generator.moc"
