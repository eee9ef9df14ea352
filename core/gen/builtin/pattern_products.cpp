// Matrix products and convolutions followed by more than an elementwise epilogue: a softmax over
// attention scores, a sum or a norm over each row of a linear layer's output, two products
// combined (SwiGLU), a group norm or a sum after a convolution. The products become inputs of the
// rest of the graph, which is recognised as a problem of its own. Row ops in a chain (a group norm
// then a min, a min then a softmax) are split the same way, the first row op being the stage.
#include "gen/builtin/pattern_graph.h"

#include <algorithm>

namespace kf::builtin::detail {

namespace {

// `want`, or `want` with a number after it, that names no tensor or constant of the problem.
std::string freeName(const Problem &problem, const std::string &want)
{
    auto taken = [&](const std::string &n) { return problem.tensor(n) || problem.constants.count(n); };
    std::string name = want;
    for (int k = 2; taken(name); ++k)
        name = want + "_" + std::to_string(k);
    return name;
}

// Adds the input through which the tail reads a product of `shape`, named `want` or close to it;
// its name.
std::string addProduct(Problem &tailProblem, const std::string &want, const Shape &shape)
{
    InputSpec in;
    in.name = freeName(tailProblem, want);
    in.shape = shape;
    tailProblem.inputs.push_back(in);
    return in.name;
}

// The pattern of one stage, writing its result whole to the buffer `name`.
std::shared_ptr<const Pattern> stageOf(Pattern p, const std::string &name, const Shape &shape)
{
    p.feedsTail = true;
    p.output = name;
    p.outDtype = DType::F32;
    p.outShape = shape;
    return std::make_shared<const Pattern>(std::move(p));
}

// The graph after the stages: the nodes that compute a product are gone (`dropped`), and every
// read of a product's value reads the input of that name instead.
std::vector<OpNode> tailNodes(const std::vector<OpNode> &nodes, const std::set<const OpNode *> &dropped,
                              const std::map<std::string, std::string> &renamed)
{
    std::vector<OpNode> out;
    for (const OpNode &n : nodes) {
        if (dropped.count(&n))
            continue;
        OpNode c = n;
        for (std::string &v : c.inputs)
            if (auto it = renamed.find(v); it != renamed.end())
                v = it->second;
        out.push_back(std::move(c));
    }
    return out;
}

// The node of `nodes` that produces `value`.
const OpNode *producerNode(const std::vector<OpNode> &nodes, const std::string &value)
{
    for (const OpNode &n : nodes)
        if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end())
            return &n;
    return nullptr;
}

Status withTail(Pattern &p, const std::vector<OpNode> &nodes, std::shared_ptr<Problem> tailProblem)
{
    auto tail = recognise(nodes, *tailProblem);
    if (!tail)
        return tail.error();
    p.tail = std::make_shared<const Pattern>(std::move(*tail));
    p.tailProblem = std::move(tailProblem);
    return Ok{};
}

// The convolution's stage ends at `end` (the convolution's value, or its pooling's): the nodes up
// to the one that produces it, matched as a convolution with its epilogue and pooling.
Result<Pattern> convThrough(const std::vector<OpNode> &nodes, const Problem &problem, const std::string &end)
{
    const OpNode *last = producerNode(nodes, end);
    if (!last)
        return unsupportedOp("a convolution", "of an unknown value");
    std::vector<OpNode> head(nodes.begin(), nodes.begin() + (last - nodes.data()) + 1);
    std::set<const OpNode *> dropped;
    for (const OpNode &n : nodes)
        if (&n <= last && n.op.rfind("prim::", 0) != 0)
            dropped.insert(&n);
    Graph g(head, problem);
    if (!g.status())
        return g.status().error();
    std::vector<int> anchors;
    for (int i = 0; i < int(g.ops().size()); ++i)
        if (isConvOp(g.ops()[std::size_t(i)].name) || isRowOp(g.ops()[std::size_t(i)]))
            anchors.push_back(i);
    auto stage = matchConv(g, anchors);
    if (!stage)
        return stage.error();
    Pattern p = *stage;
    const Shape shape = g.shape(g.result());
    auto tailProblem = std::make_shared<Problem>(problem);
    const std::string name = addProduct(*tailProblem, "conv_out", shape);
    p.products = {name};
    p.stages = {stageOf(*stage, name, shape)};
    if (auto st = withTail(p, tailNodes(nodes, dropped, {{end, "%" + name}}), std::move(tailProblem)); !st)
        return st.error();
    return p;
}

// The nodes `end` depends on, in graph order; the last produces it.
std::vector<const OpNode *> ancestorsOf(const std::vector<OpNode> &nodes, const std::string &end)
{
    std::set<std::string> need{end};
    std::vector<const OpNode *> out;
    for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
        if (std::none_of(n->outputs.begin(), n->outputs.end(), [&](const std::string &o) { return need.count(o); }))
            continue;
        out.push_back(&*n);
        need.insert(n->inputs.begin(), n->inputs.end());
    }
    std::reverse(out.begin(), out.end());
    return out;
}

// The graph after stages that compute the values `products` maps to their buffers (the nodes of
// `head`): every other node, each read of a stage's value reading its buffer instead, and the
// head's nodes whose values the rest still reads.
std::vector<OpNode> restAfter(const std::vector<OpNode> &nodes, const std::vector<const OpNode *> &head,
                              const std::map<std::string, std::string> &products)
{
    const std::set<const OpNode *> inHead(head.begin(), head.end());
    std::set<std::string> need;
    for (const OpNode &n : nodes)
        if (!inHead.count(&n))
            for (const std::string &v : n.inputs)
                if (!products.count(v))
                    need.insert(v);
    std::set<const OpNode *> kept;
    for (auto n = head.rbegin(); n != head.rend(); ++n)
        if (std::any_of((*n)->outputs.begin(), (*n)->outputs.end(), [&](const std::string &o) { return need.count(o); })) {
            kept.insert(*n);
            need.insert((*n)->inputs.begin(), (*n)->inputs.end());
        }
    std::set<const OpNode *> dropped;
    for (const OpNode *n : head)
        if (!kept.count(n))
            dropped.insert(n);
    return tailNodes(nodes, dropped, products);
}

// The stage that ends at `end` (a row op's result, or an elementwise op after it) recognised as a
// problem of its own writing `want`, and the nodes it takes. Empty when it is not a pattern.
struct Stage {
    Pattern pattern;
    std::string end;
    Shape shape;
    std::vector<const OpNode *> head;
};
std::optional<Stage> stageAt(const std::vector<OpNode> &nodes, const Problem &problem, const std::string &end,
                             const Shape &shape, const std::string &want)
{
    Stage s{{}, end, shape, ancestorsOf(nodes, end)};
    std::vector<OpNode> head;
    for (const OpNode *n : s.head)
        head.push_back(*n);
    Problem stageProblem = problem;
    stageProblem.outputs = {problem.outputs[0]};
    stageProblem.outputs[0].name = want;
    stageProblem.outputs[0].shape = shape;
    stageProblem.outputs[0].dtype = DType::F32;
    auto stage = recognise(head, stageProblem);
    if (!stage || stage->tail)
        return std::nullopt;
    s.pattern = std::move(*stage);
    return s;
}

// The stages, each writing a buffer named after `wants`, and the rest over their results. Empty
// when the rest is not a pattern.
std::optional<Pattern> splitInto(const std::vector<OpNode> &nodes, const Problem &problem,
                                 const std::vector<Stage> &stages, const std::vector<std::string> &wants)
{
    auto tailProblem = std::make_shared<Problem>(problem);
    Pattern p = stages.front().pattern;
    std::vector<const OpNode *> head;
    std::map<std::string, std::string> products;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const std::string name = addProduct(*tailProblem, wants[i], stages[i].shape);
        p.products.push_back(name);
        p.stages.push_back(stageOf(stages[i].pattern, name, stages[i].shape));
        for (const OpNode *n : stages[i].head)
            if (std::find(head.begin(), head.end(), n) == head.end())
                head.push_back(n);
        products[stages[i].end] = "%" + name;
    }
    std::sort(head.begin(), head.end());
    if (!withTail(p, restAfter(nodes, head, products), std::move(tailProblem)))
        return std::nullopt;
    return p;
}

// The values a row op's stage may end at, latest first: its result and the elementwise ops that
// alone read it, one after another (so that they run in its epilogue); never the graph's result,
// which would leave nothing for the rest (and recognise the same graph again).
std::vector<std::string> stageEnds(const Graph &g, const Op &op)
{
    std::vector<std::string> ends{op.out[0]};
    for (auto next = g.consumers(ends.back()); next.size() == 1; next = g.consumers(ends.back())) {
        const Op &c = g.ops()[std::size_t(next[0])];
        if ((!isElementwiseOp(c.name) && !isAlias(c.name)) || isRowOp(c))
            break;
        ends.push_back(c.out[0]);
    }
    ends.erase(std::remove(ends.begin(), ends.end(), g.result()), ends.end());
    std::reverse(ends.begin(), ends.end());
    return ends;
}

std::string wantOf(const Op &op) { return op.name.substr(op.name.find("::") + 2) + "_out"; }

// The other row ops of `rows` that fold along the same rows as `first` (pattern.h), reading only
// the problem's inputs, each as a stage of its own: they go together with the first.
std::vector<std::pair<Stage, std::string>> siblingFolds(const Graph &g, const std::vector<OpNode> &nodes,
                                                        const std::vector<int> &rows, const Pattern &first)
{
    std::vector<std::pair<Stage, std::string>> out;
    if (!foldsAlongRows(first))
        return out;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const Op &op = g.ops()[std::size_t(rows[r])];
        for (const std::string &end : stageEnds(g, op)) {
            // A stage of one row op alone: one that reads another row op's result is a chain.
            auto s = stageAt(nodes, g.problem(), end, g.shape(end), wantOf(op));
            if (s && foldsAlongRows(s->pattern) && sameRows(first, s->pattern)) {
                out.emplace_back(std::move(*s), wantOf(op));
                break;
            }
        }
    }
    return out;
}

} // namespace

Result<Pattern> matchRowStages(const Graph &g, const std::vector<OpNode> &nodes, const std::vector<int> &rows)
{
    // The first row op is the stage; it ends as late as it can: after the elementwise ops that
    // alone read its result, so they run in its epilogue. Other reductions along the same rows that
    // read only the inputs join it as stages of their own, which an idea may compute in the same pass.
    const Op &op = g.ops()[std::size_t(rows[0])];
    for (const std::string &end : stageEnds(g, op)) {
        auto first = stageAt(nodes, g.problem(), end, g.shape(end), wantOf(op));
        if (!first)
            continue;
        std::vector<Stage> stages{*first};
        std::vector<std::string> wants{wantOf(op)};
        for (auto &[sibling, want] : siblingFolds(g, nodes, rows, first->pattern)) {
            stages.push_back(std::move(sibling));
            wants.push_back(want);
        }
        if (stages.size() > 1)
            if (auto p = splitInto(nodes, g.problem(), stages, wants))
                return std::move(*p);
        if (auto p = splitInto(nodes, g.problem(), {*first}, {wants[0]}))
            return std::move(*p);
    }
    if (rows.size() > 1)
        return unsupportedOp(g.ops()[std::size_t(rows[1])].name, "after " + op.name);
    return unsupportedOp(op.name, "followed by what no pattern computes");
}

Result<Pattern> matchProducts(const Graph &g, const std::vector<OpNode> &nodes, const std::vector<int> &gemms)
{
    const Problem &problem = g.problem();
    Pattern p;
    p.kind = PatternKind::Matmul;
    auto tailProblem = std::make_shared<Problem>(problem);
    std::map<std::string, std::string> renamed; // a product's value -> the tail's input of that name
    std::set<const OpNode *> dropped;
    for (std::size_t k = 0; k < gemms.size(); ++k) {
        const Op &op = g.ops()[std::size_t(gemms[k])];
        auto spec = gemmSpecOf(g, gemms[k]);
        if (!spec)
            return spec.error();
        const Shape &shape = g.shape(op.out[0]);
        const std::string name = addProduct(
            *tailProblem, gemms.size() == 1 ? std::string("product") : "product" + std::to_string(k + 1), shape);
        renamed[op.out[0]] = "%" + name;
        dropped.insert(producerNode(nodes, op.out[0]));
        Pattern stage;
        stage.kind = PatternKind::Matmul;
        stage.anchor = op.name;
        stage.gemms = {*spec};
        stage.program = identityProgram(shape);
        p.gemms.push_back(*spec);
        p.products.push_back(name);
        p.stages.push_back(stageOf(std::move(stage), name, shape));
        if (p.anchor.empty())
            p.anchor = op.name;
    }
    p.program = identityProgram(p.stages.front()->outShape);
    if (auto st = withTail(p, tailNodes(nodes, dropped, renamed), std::move(tailProblem)); !st)
        return st.error();
    return p;
}

Result<Pattern> matchConvProducts(const Graph &g, const std::vector<OpNode> &nodes, int conv)
{
    // The latest place first: after a pooling that follows the convolution (its epilogue between
    // them), so the convolution's templates keep the pooling; else after the elementwise ops that
    // alone read the convolution (an activation costs nothing in a compute-bound epilogue, and
    // the rest reads its result instead of computing it on every read); else right after it.
    const Op &op = g.ops()[std::size_t(conv)];
    std::vector<std::string> ends;
    std::string v = op.out[0];
    bool pooled = false;
    for (auto next = g.consumers(v); next.size() == 1; next = g.consumers(v)) {
        const Op &c = g.ops()[std::size_t(next[0])];
        if (c.name == "aten::max_pool2d" || c.name == "aten::avg_pool2d") {
            ends.push_back(c.out[0]);
            pooled = true;
            break;
        }
        if (!isElementwiseOp(c.name) && !isAlias(c.name))
            break;
        v = c.out[0];
    }
    if (!pooled && v != op.out[0] && v != g.result())
        ends.push_back(v);
    ends.push_back(op.out[0]);
    Error first = unsupportedOp(op.name);
    for (std::size_t i = 0; i < ends.size(); ++i) {
        auto p = convThrough(nodes, g.problem(), ends[i]);
        if (p)
            return p;
        if (i == 0)
            first = p.error();
    }
    return first;
}

} // namespace kf::builtin::detail
