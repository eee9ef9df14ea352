#include "module_graph.h"
#include "tensors.h"
#include "torch_shim.h"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/shape_analysis.h>
#include <torch/csrc/jit/passes/symbolic_shape_analysis.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>

namespace kf::ref {

namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

std::string firstLines(const std::string &s, int lines = 3)
{
    std::size_t at = 0;
    for (int i = 0; i < lines && at != std::string::npos; ++i)
        at = s.find('\n', at + (i ? 1 : 0));
    return at == std::string::npos ? s : s.substr(0, at);
}

std::pair<int, int> majorMinor(const std::string &v)
{
    int major = 0, minor = 0;
    std::sscanf(v.c_str(), "%d.%d", &major, &minor);
    return {major, minor};
}

void collect(Block *b, torch::jit::NodeKind kind, std::vector<Node *> &out)
{
    for (Node *n : b->nodes()) {
        if (n->kind() == kind)
            out.push_back(n);
        for (Block *inner : n->blocks())
            collect(inner, kind, out);
    }
}

bool hasCalls(Block *b)
{
    for (Node *n : b->nodes()) {
        if (n->kind() == c10::prim::CallMethod || n->kind() == c10::prim::CallFunction)
            return true;
        for (Block *inner : n->blocks())
            if (hasCalls(inner))
                return true;
    }
    return false;
}

bool raises(Block *b)
{
    for (Node *n : b->nodes())
        if (n->kind() == c10::prim::RaiseException)
            return true;
    return false;
}

// An `if` whose one branch only raises (nn.BatchNorm's input-dim check) is taken to go the other
// way: the shapes are fixed, and the worker runs the graph before it is used. libtorch's
// EliminateExceptions does the same; tools/kernelbench-import.py does it in Python, and both
// must agree on which attributes forward reads.
void takeBranchesThatDoNotRaise(Graph &g)
{
    std::vector<Node *> ifs;
    collect(g.block(), c10::prim::If, ifs);
    for (Node *n : ifs) {
        auto blocks = n->blocks();
        if (blocks.size() != 2 || raises(blocks[0]) == raises(blocks[1]))
            continue;
        torch::jit::WithInsertPoint guard(n);
        n->replaceInput(0, g.insertConstant(!raises(blocks[0])));
    }
}

// `x.dim()` of a value whose rank the problem's shapes fix, as a constant: nn.InstanceNorm's
// forward branches on its input's rank (unsqueezing a 3-D input), and with the rank known the
// branch not taken folds away. The graph's inputs get the problem's shapes, libtorch propagates
// them, and the shapes are erased again afterwards, so nothing else sees them. The older
// propagation stops at ops it has no rule for (aten::linear); the shape functions of the symbolic
// analysis go on from there (an instance norm of a linear layer's unsqueezed output). A graph
// libtorch cannot propagate through is left as it was.
void foldRanks(const std::shared_ptr<Graph> &g, const Problem &p)
{
    // Input 0 is the module itself; then the inputs, then the parameters.
    std::vector<const TensorSpec *> specs;
    for (const auto &in : p.inputs)
        specs.push_back(&in);
    for (const auto &param : p.params)
        specs.push_back(&param);
    if (g->inputs().size() != specs.size() + 1)
        return;
    try {
        for (std::size_t i = 0; i < specs.size(); ++i)
            g->inputs()[i + 1]->setType(c10::TensorType::createContiguous(
                torchDtype(specs[i]->dtype), c10::Device(c10::kCPU), c10::IntArrayRef(specs[i]->shape)));
        torch::jit::PropagateInputShapes(g);
        try {
            std::shared_ptr<Graph> graph = g;
            torch::jit::PropagateShapesOnGraph(graph);
        } catch (const std::exception &) {
            // What the first propagation found still folds.
        }
        std::vector<Node *> dims;
        collect(g->block(), c10::aten::dim, dims);
        for (Node *n : dims) {
            auto t = n->input(0)->type()->cast<c10::TensorType>();
            if (!t || !t->dim())
                continue;
            torch::jit::WithInsertPoint guard(n);
            n->output()->replaceAllUsesWith(g->insertConstant(std::int64_t(*t->dim())));
        }
    } catch (const std::exception &) {
        // Ranks stay unknown; the branches stay for the generator to report.
    }
    torch::jit::EraseShapeInformation(g);
}

// `v is None` where v is a list or a tensor (a pooling's stride given as a list): never true.
// Constant propagation leaves it because the list is built at run time, and with it the branch
// that replaces a missing stride by the kernel size.
void foldNoneChecks(Graph &g)
{
    auto none = [](const Value *v) { return v->type()->kind() == c10::TypeKind::NoneType; };
    auto never = [&](const Value *v) { return !none(v) && !v->type()->cast<c10::OptionalType>(); };
    for (auto kind : {c10::aten::__is__, c10::aten::__isnot__}) {
        std::vector<Node *> checks;
        collect(g.block(), kind, checks);
        for (Node *n : checks) {
            const Value *a = n->input(0), *b = n->input(1);
            if (!((none(a) && never(b)) || (none(b) && never(a))))
                continue;
            torch::jit::WithInsertPoint guard(n);
            n->output()->replaceAllUsesWith(g.insertConstant(kind == c10::aten::__isnot__));
        }
    }
}

// A loop left from a check whose `raise` is gone (F.group_norm's batch-size check multiplies the
// sizes in a loop) computes only numbers nobody reads; DCE keeps loops, so drop such ones here.
bool pureLoopBody(Block *b)
{
    for (Node *n : b->nodes()) {
        if (n->kind() == c10::prim::RaiseException || n->kind() == c10::prim::SetAttr || n->kind() == c10::prim::Print)
            return false;
        for (const Value *v : n->outputs())
            if (v->type()->isSubtypeOf(*c10::TensorType::get()))
                return false;
        for (Block *inner : n->blocks())
            if (!pureLoopBody(inner))
                return false;
    }
    return true;
}

void dropDeadLoops(Graph &g)
{
    std::vector<Node *> dead;
    for (Node *n : g.nodes()) {
        if (n->kind() != c10::prim::Loop)
            continue;
        bool used = false;
        for (const Value *v : n->outputs())
            used = used || v->hasUses();
        if (!used && pureLoopBody(n->blocks()[0]))
            dead.push_back(n);
    }
    for (Node *n : dead)
        n->destroy();
}

struct Lowering {
    const Problem &p;
    std::string where;
    std::shared_ptr<Graph> graph;
    std::map<std::string, std::size_t> paramOf;     // attribute path -> index among p.params
    std::map<const Node *, std::string> undeclared; // tensors no parameter names (num_batches_tracked)

    // A tensor no [[params]] table names that forward still reads after folding.
    Status undeclaredRead() const
    {
        std::vector<Node *> left;
        collect(graph->block(), c10::prim::GetAttr, left);
        for (const Node *n : left)
            if (auto it = undeclared.find(n); it != undeclared.end())
                return makeError(ErrorCode::Reference,
                                 "forward reads the module's tensor `" + it->second +
                                     "`, which no [[params]] table names as its attribute (re-import the problem)",
                                 where);
        return Ok{};
    }

    // Every prim::GetAttr chain that starts at the module: submodules are followed, tensors become
    // the parameter inputs, and everything else (ints, floats, strings, None) becomes a constant.
    Status attributes(const c10::IValue &self)
    {
        std::vector<Node *> getAttrs;
        collect(graph->block(), c10::prim::GetAttr, getAttrs);
        std::unordered_map<const Value *, std::pair<std::string, c10::IValue>> objects;
        objects[graph->inputs()[0]] = {"", self};
        for (Node *n : getAttrs) {
            auto it = objects.find(n->input());
            const std::string name = n->s(c10::attr::name);
            if (it == objects.end())
                return makeError(ErrorCode::Reference,
                                 "forward reads attribute `" + name + "` of something other than the module", where);
            const std::string path = it->second.first.empty() ? name : it->second.first + "." + name;
            c10::IValue v = it->second.second.toObjectRef().getAttr(name);
            if (v.isObject() && v.toObjectRef().type()->is_module()) {
                objects[n->output()] = {path, v};
            } else if (v.isTensor()) {
                auto at = paramOf.find(path);
                if (at == paramOf.end())
                    undeclared[n] = path; // an error only if it is still read once the graph is folded
                else
                    n->output()->replaceAllUsesWith(graph->inputs()[1 + p.inputs.size() + at->second]);
            } else {
                torch::jit::WithInsertPoint guard(n);
                try {
                    n->output()->replaceAllUsesWith(graph->insertConstant(v));
                } catch (const std::exception &) {
                    return makeError(ErrorCode::Reference,
                                     "the module's attribute `" + path + "` (" + v.tagKind() +
                                         ") cannot become a constant of the reference",
                                     where);
                }
            }
        }
        return Ok{};
    }
};

} // namespace

bool newerTorch(const std::string &a, const std::string &b)
{
    return !a.empty() && !b.empty() && majorMinor(a) > majorMinor(b);
}

Result<LoweredModule> lowerModule(const Problem &p)
{
    const std::string where = (p.path.empty() ? p.name : p.path) + ": reference.module";
    if (!p.hasModuleBytes())
        return makeError(ErrorCode::Reference, "the module's bytes did not come with the problem", where);
    torch::jit::Module m;
    try {
        std::istringstream in(*p.module);
        m = torch::jit::load(in, torch::Device(torch::kCPU));
    } catch (const std::exception &e) {
        const std::string ours = shim::torchVersion();
        if (newerTorch(p.moduleTorch, ours))
            return makeError(ErrorCode::Reference,
                             "the module was saved by PyTorch " + p.moduleTorch +
                                 ", newer than this worker's libtorch " + ours +
                                 ": import the problem again with PyTorch " + ours.substr(0, ours.rfind('.')) +
                                 ", or build the worker against libtorch " + p.moduleTorch + " or newer (" +
                                 firstLines(e.what(), 1) + ")",
                             where);
        return makeError(ErrorCode::Reference,
                         "the TorchScript module does not load (saved by PyTorch " +
                             (p.moduleTorch.empty() ? std::string("of unknown version") : p.moduleTorch) +
                             ", worker's libtorch " + ours + "): " + firstLines(e.what()),
                         where);
    }
    m.eval();

    Lowering l{p, where, m.get_method("forward").graph()->copy(), {}, {}};
    Graph &g = *l.graph;
    // A loaded module's methods are inlined one level at a time (nn.Conv2d.forward calls its
    // _conv_forward), so inline until no call is left.
    for (int depth = 0; depth < 32 && hasCalls(g.block()); ++depth)
        torch::jit::Inline(g);
    if (hasCalls(g.block()))
        return makeError(ErrorCode::Reference, "forward's calls to other methods nest too deep to inline", where);
    if (g.inputs().size() != 1 + p.inputs.size())
        return makeError(ErrorCode::Reference,
                         "the module's forward takes " + std::to_string(g.inputs().size() - 1) +
                             " inputs but the file declares " + std::to_string(p.inputs.size()),
                         where);
    LoweredModule out;
    for (std::size_t i = 0; i < p.params.size(); ++i) {
        const ParamSpec &spec = p.params[i];
        l.paramOf[spec.attribute] = i;
        g.addInput()->setType(c10::TensorType::get());
        // The module's own value: trial 0 runs on exactly what the model was built with.
        c10::IValue v = m._ivalue();
        std::stringstream parts(spec.attribute);
        for (std::string part; std::getline(parts, part, '.');) {
            if (!v.isObject() || !v.toObjectRef().type()->hasAttribute(part))
                return makeError(ErrorCode::Reference,
                                 "params: " + spec.name + " names the module attribute `" + spec.attribute +
                                     "`, which the module does not have",
                                 where);
            v = v.toObjectRef().getAttr(part);
        }
        if (!v.isTensor())
            return makeError(ErrorCode::Reference,
                             "params: " + spec.name + " names `" + spec.attribute + "`, which is not a tensor", where);
        torch::Tensor t = v.toTensor().detach();
        if (t.sizes().vec() != spec.shape) {
            std::ostringstream s;
            s << "params: " << spec.name << " is declared " << c10::IntArrayRef(spec.shape) << " but the module's `"
              << spec.attribute << "` is " << t.sizes();
            return makeError(ErrorCode::Reference, s.str(), where);
        }
        out.params.push_back(t);
    }

    if (Status s = l.attributes(m._ivalue()); !s)
        return s.error();
    foldRanks(l.graph, p);
    foldNoneChecks(g);
    takeBranchesThatDoNotRaise(g);
    torch::jit::ConstantPropagation(l.graph);
    torch::jit::EliminateDeadCode(l.graph);
    dropDeadLoops(g);
    torch::jit::EliminateDeadCode(l.graph);
    if (Status s = l.undeclaredRead(); !s)
        return s.error();
    if (g.inputs()[0]->hasUses())
        return makeError(ErrorCode::Reference,
                         "forward uses the module itself (" +
                             std::string(g.inputs()[0]->uses()[0].user->kind().toQualString()) +
                             "), not only its attributes: it cannot be a reference",
                         where);
    g.eraseInput(0);

    // The graph's values are named after the problem's tensors, as a source reference's are
    // (the generator's matcher finds inputs and parameters by these names); other names, which
    // inlining copied from PyTorch's own code, are cleared so none can pass for one of them.
    for (Node *n : g.nodes())
        for (Value *v : n->outputs())
            v->setDebugName("");
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
        g.inputs()[i]->setDebugName(p.inputs[i].name);
    for (std::size_t i = 0; i < p.params.size(); ++i)
        g.inputs()[p.inputs.size() + i]->setDebugName(p.params[i].name);
    out.graph = l.graph;
    return out;
}

} // namespace kf::ref
