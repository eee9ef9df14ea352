// Matrix products followed by more than an elementwise epilogue: a softmax over attention scores,
// a sum or a norm over each row of a linear layer's output, two products combined (SwiGLU). The
// products become inputs of the rest of the graph, which is recognised as a problem of its own.
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

} // namespace

Result<Pattern> matchProducts(const Graph &g, const std::vector<OpNode> &nodes, const std::vector<int> &gemms)
{
    const Problem &problem = g.problem();
    Pattern p;
    p.kind = PatternKind::Matmul;
    auto tailProblem = std::make_shared<Problem>(problem);
    std::map<std::string, std::string> renamed; // a product's value -> the tail's input of that name
    for (std::size_t k = 0; k < gemms.size(); ++k) {
        const Op &op = g.ops()[std::size_t(gemms[k])];
        auto spec = gemmSpecOf(g, gemms[k]);
        if (!spec)
            return spec.error();
        const std::string name =
            freeName(*tailProblem, gemms.size() == 1 ? std::string("product") : "product" + std::to_string(k + 1));
        InputSpec in;
        in.name = name;
        in.shape = g.shape(op.out[0]);
        tailProblem->inputs.push_back(in);
        renamed[op.out[0]] = "%" + name;
        p.gemms.push_back(*spec);
        p.products.push_back(name);
        if (p.anchor.empty())
            p.anchor = op.name;
    }

    std::vector<OpNode> tailNodes;
    for (const OpNode &n : nodes) {
        if (std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string &o) { return renamed.count(o); }))
            continue;
        OpNode c = n;
        for (std::string &v : c.inputs)
            if (auto it = renamed.find(v); it != renamed.end())
                v = it->second;
        tailNodes.push_back(std::move(c));
    }
    auto tail = recognise(tailNodes, *tailProblem);
    if (!tail)
        return tail.error();
    p.program = identityProgram(g.shape(g.ops()[std::size_t(gemms[0])].out[0]));
    p.tail = std::make_shared<const Pattern>(std::move(*tail));
    p.tailProblem = std::move(tailProblem);
    return p;
}

} // namespace kf::builtin::detail
