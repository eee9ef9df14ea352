#include "reference.h"
#include "module_graph.h"
#include "torch_shim.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/jit.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

namespace kf::ref {

namespace {

std::int64_t product(const std::vector<std::int64_t> &v, std::size_t from = 0)
{
    std::int64_t p = 1;
    for (std::size_t i = from; i < v.size(); ++i)
        p *= v[i];
    return p;
}

std::string valueName(const torch::jit::Value *v) { return "%" + v->debugName(); }

nlohmann::json constantJson(const c10::IValue &v)
{
    if (v.isInt())
        return v.toInt();
    if (v.isDouble())
        return v.toDouble();
    if (v.isBool())
        return v.toBool();
    if (v.isString())
        return v.toStringRef();
    if (v.isIntList())
        return v.toIntVector();
    if (v.isNone())
        return nullptr;
    return v.tagKind();
}

} // namespace

Result<std::unique_ptr<Reference>> Reference::compile(const Problem &p)
{
    shim::makeJitEager();
    std::unique_ptr<Reference> r(new Reference);
    if (p.isModule()) {
        auto lowered = lowerModule(p);
        if (!lowered)
            return lowered.error();
        r->m_unit = std::make_shared<torch::jit::CompilationUnit>();
        r->m_forward = r->m_unit->create_function("forward", lowered->graph);
        r->m_moduleParams = std::move(lowered->params);
        return r;
    }
    try {
        r->m_unit = torch::jit::compile(p.referenceSource);
        r->m_forward = &r->m_unit->get_function("forward");
    } catch (const std::exception &e) {
        // TorchScript's message carries the offending source line with a caret; keep it whole.
        return makeError(ErrorCode::Reference,
                         std::string("the reference does not compile as TorchScript:\n") + e.what(),
                         (p.path.empty() ? p.name : p.path) + ": reference.source");
    }
    return r;
}

std::vector<torch::Tensor> Reference::run(const std::vector<torch::Tensor> &inputs,
                                          const std::vector<torch::Tensor> &params)
{
    torch::NoGradGuard noGrad;
    std::vector<c10::IValue> stack;
    for (const auto &t : inputs)
        stack.emplace_back(t);
    for (const auto &t : params)
        stack.emplace_back(t);
    c10::IValue out = (*m_forward)(stack);
    std::vector<torch::Tensor> outs;
    if (out.isTuple()) {
        for (const auto &e : out.toTuple()->elements())
            outs.push_back(e.toTensor());
    } else {
        outs.push_back(out.toTensor());
    }
    return outs;
}

std::vector<OpNode> Reference::structure() const
{
    std::vector<OpNode> nodes;
    auto graph = torch::jit::toGraphFunction(*m_forward).graph();
    for (torch::jit::Node *n : graph->nodes()) {
        if (n->kind() == c10::prim::Constant)
            continue;
        OpNode o;
        o.op = n->kind().toQualString();
        for (const auto *v : n->inputs()) {
            o.inputs.push_back(valueName(v));
            auto iv = torch::jit::toIValue(v);
            o.constants.push_back(iv ? constantJson(*iv) : nlohmann::json());
        }
        for (const auto *v : n->outputs())
            o.outputs.push_back(valueName(v));
        nodes.push_back(std::move(o));
    }
    return nodes;
}

std::vector<OpNode> Reference::trace(const std::vector<torch::Tensor> &inputs, const std::vector<torch::Tensor> &params)
{
    torch::NoGradGuard noGrad;
    auto graph = torch::jit::toGraphFunction(*m_forward).graph();
    std::unordered_map<const torch::jit::Value *, c10::IValue> env;
    std::size_t i = 0;
    for (const auto *v : graph->inputs()) {
        env[v] = i < inputs.size() ? inputs[i] : params[i - inputs.size()];
        ++i;
    }
    std::vector<OpNode> nodes;
    for (torch::jit::Node *n : graph->nodes()) {
        if (n->kind() == c10::prim::Constant) {
            env[n->output()] = *torch::jit::toIValue(n->output());
            continue;
        }
        OpNode o;
        o.op = n->kind().toQualString();
        torch::jit::Stack stack;
        for (const auto *v : n->inputs()) {
            const c10::IValue &iv = env.at(v);
            stack.push_back(iv);
            o.inputs.push_back(valueName(v));
            o.inputShapes.push_back(iv.isTensor() ? iv.toTensor().sizes().vec() : std::vector<std::int64_t>{});
            o.constants.push_back(iv.isTensor() ? nlohmann::json() : constantJson(iv));
        }
        // List and tuple construction have no operator schema; build them here.
        if (n->kind() == c10::prim::ListConstruct) {
            auto listType = n->output()->type()->expect<c10::ListType>();
            c10::impl::GenericList list(listType->getElementType());
            for (const auto &iv : stack)
                list.push_back(iv);
            stack.clear();
            stack.emplace_back(std::move(list));
        } else if (n->kind() == c10::prim::TupleConstruct) {
            auto tuple = c10::ivalue::Tuple::create(std::vector<c10::IValue>(stack.begin(), stack.end()));
            stack.clear();
            stack.emplace_back(std::move(tuple));
        } else {
            n->getOperation()(stack);
        }
        for (std::size_t k = 0; k < n->outputs().size(); ++k) {
            const c10::IValue &iv = stack[k];
            env[n->outputs()[k]] = iv;
            o.outputs.push_back(valueName(n->outputs()[k]));
            o.outputShapes.push_back(iv.isTensor() ? iv.toTensor().sizes().vec() : std::vector<std::int64_t>{});
        }
        o.flops = opFlops(o);
        nodes.push_back(std::move(o));
    }
    discountDiagonalProducts(nodes);
    return nodes;
}

void discountDiagonalProducts(std::vector<OpNode> &nodes)
{
    std::set<std::string> diagonals;
    for (OpNode &o : nodes) {
        if (o.op == "aten::diag" && !o.inputShapes.empty() && o.inputShapes[0].size() == 1 && !o.outputs.empty())
            diagonals.insert(o.outputs[0]);
        if (o.op != "aten::matmul" && o.op != "aten::mm")
            continue;
        const bool diagonal =
            std::any_of(o.inputs.begin(), o.inputs.end(), [&](const std::string &v) { return diagonals.count(v) > 0; });
        if (diagonal && !o.outputShapes.empty())
            o.flops = double(product(o.outputShapes[0]));
    }
}

double opFlops(const OpNode &o)
{
    auto in = [&](std::size_t k) -> const std::vector<std::int64_t> & {
        static const std::vector<std::int64_t> none;
        return k < o.inputShapes.size() ? o.inputShapes[k] : none;
    };
    const std::vector<std::int64_t> out = o.outputShapes.empty() ? std::vector<std::int64_t>{} : o.outputShapes[0];
    const double outN = out.empty() ? 0 : double(product(out));
    const double inN = in(0).empty() ? 0 : double(product(in(0)));
    const std::string &k = o.op;

    if (k == "aten::matmul" || k == "aten::mm" || k == "aten::bmm" || k == "aten::linear" || k == "aten::addmm" ||
        k == "aten::baddbmm") {
        // out elements × 2K, where K is the reduced dimension of the first matrix operand.
        const auto &a = (k == "aten::addmm" || k == "aten::baddbmm") ? in(1) : in(0);
        return a.empty() ? 0 : 2.0 * outN * double(a.back());
    }
    if (k == "aten::conv2d" || k == "aten::_convolution" || k == "aten::convolution" || k == "aten::conv1d" ||
        k == "aten::conv3d") {
        const auto &w = in(1); // [K, C/groups, R, S]
        return w.empty() ? 0 : 2.0 * outN * double(product(w, 1));
    }
    if (k.rfind("aten::max_pool", 0) == 0 || k.rfind("aten::avg_pool", 0) == 0) {
        std::int64_t window = 1;
        if (o.constants.size() > 1 && o.constants[1].is_array())
            for (const auto &d : o.constants[1])
                window *= d.get<std::int64_t>();
        return outN * double(window);
    }
    if (k == "aten::softmax" || k == "aten::log_softmax" || k == "aten::logsumexp")
        return 5.0 * inN;
    if (k == "aten::layer_norm" || k == "aten::batch_norm" || k == "aten::group_norm")
        return 8.0 * inN;
    if (k == "aten::sum" || k == "aten::mean" || k == "aten::max" || k == "aten::min" || k == "aten::argmax" ||
        k == "aten::amax" || k == "aten::norm" || k.rfind("aten::adaptive_avg_pool", 0) == 0)
        return inN;
    if (k.rfind("prim::", 0) == 0 || k == "aten::view" || k == "aten::reshape" || k == "aten::permute" ||
        k == "aten::transpose" || k == "aten::contiguous" || k == "aten::size" || k == "aten::flatten" ||
        k == "aten::unsqueeze" || k == "aten::squeeze" || k == "aten::expand" || k == "aten::diag")
        return 0;
    if (k == "aten::gelu" || k == "aten::silu" || k == "aten::sigmoid" || k == "aten::tanh" || k == "aten::exp" ||
        k == "aten::log" || k == "aten::rsqrt" || k == "aten::sqrt")
        return 4.0 * outN; // a transcendental costs several operations
    return outN;           // elementwise arithmetic: one per output element
}

} // namespace kf::ref
