// Several sums along the same rows in one pass: the norms and the dot product of a cosine
// similarity, the distances of a triplet loss. The chain's stages (pattern_products.cpp) each
// write a sum per row; separately they read the rows once per sum, together once.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <set>

namespace kf::builtin::ideas {

namespace {

const std::vector<std::shared_ptr<const Pattern>> &sums(const Target &t) { return t.pattern.stages; }

// "" when every stage of the chain is a sum or mean along the last dim of the same rows, whose
// elementwise ops after it read no tensor.
std::string sameRowSums(const Target &t)
{
    if (!t.pattern.tail || sums(t).size() < 2)
        return "the pattern has no two sums along the same rows";
    const Pattern &first = *sums(t).front();
    for (const auto &s : sums(t)) {
        if (s->kind != PatternKind::Reduce || (s->reduceOp != "sum" && s->reduceOp != "mean"))
            return "a stage is not a sum or mean (" + s->summary() + ")";
        if (s->row.inner != 1)
            return "a sum is not along the last dim";
        if (s->input.shape != first.input.shape || s->row.outer != first.row.outer || s->row.len != first.row.len)
            return "the sums are not over the same rows";
        if (!s->program.leaves.empty())
            return "the ops after a sum read tensors";
    }
    if (first.row.outer < t.sms)
        return std::to_string(first.row.outer) + " rows would leave most SMs idle";
    return {};
}

// Each sum's input program over one list of leaves, the union in order of first use: their
// structs take the same kernel parameters, and the compiler loads each element once for all.
std::vector<EwProgram> withSharedLeaves(const Target &t)
{
    std::vector<Leaf> all;
    auto indexOf = [&](const Leaf &l) {
        for (std::size_t i = 0; i < all.size(); ++i)
            if (all[i] == l)
                return int(i);
        all.push_back(l);
        return int(all.size()) - 1;
    };
    std::vector<std::vector<int>> remap;
    for (const auto &s : sums(t)) {
        remap.emplace_back();
        for (const Leaf &l : s->input.leaves)
            remap.back().push_back(indexOf(l));
    }
    std::vector<EwProgram> out;
    for (std::size_t k = 0; k < sums(t).size(); ++k) {
        EwProgram p = sums(t)[k]->input;
        auto moved = [&](EwArg &a) {
            if (a.kind == EwArg::Kind::Leaf)
                a.index = remap[k][std::size_t(a.index)];
        };
        for (EwStep &step : p.steps)
            std::for_each(step.args.begin(), step.args.end(), moved);
        moved(p.result);
        p.leaves = all;
        out.push_back(std::move(p));
    }
    return out;
}

double unionBytes(const Target &t)
{
    double bytes = 0;
    const std::vector<EwProgram> inputs = withSharedLeaves(t);
    for (const Leaf &l : inputs.front().leaves)
        bytes += l.isMask() ? 0.0 : double(numel(l.shape)) * double(elementSize(l.dtype));
    return bytes;
}

TemplateValues fusedValues(const Target &t, const Point &)
{
    const Pattern &first = *sums(t).front();
    const std::vector<EwProgram> inputs = withSharedLeaves(t);
    TemplateValues v{
        {"ROWS", std::to_string(first.row.outer)},
        {"LEN", std::to_string(first.row.len)},
        {"GRID", std::to_string(first.row.outer)},
        {"SUMS", std::to_string(inputs.size())},
    };
    std::string code, reductions, make, fold, stores, outParams, outLaunch;
    // The kernel's own names, which its tensor parameters must not take.
    std::set<std::string> taken{"row", "base", "acc", "j"};
    for (std::size_t k = 0; k < inputs.size(); ++k)
        taken.insert({"in" + std::to_string(k), "sum" + std::to_string(k)});
    OperandCode shared;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const std::string n = std::to_string(k);
        OperandCode in = emitProgram(inputs[k], "Input" + n, Loads::Plain, taken);
        if (k == 0)
            shared = in;
        code += in.code + "\n";
        std::string r = emitReduction(*sums(t)[k]);
        const std::size_t at = r.find("struct Reduction {");
        r.replace(at, 18, "struct Reduction" + n + " {");
        reductions += r + "\n";
        make += "    const Input" + n + " in" + n + "{ " + shared.args + " };\n";
        fold += "        fold_into(acc[" + n + "], in" + n + ", base + j);\n";
        stores += "        sum" + n + "[row] = Reduction" + n + "::finish(acc[" + n + "]);\n";
        outParams += std::string(k ? ", " : "") + "float* __restrict__ sum" + n;
        outLaunch += std::string(k ? ", " : "") + t.pattern.products[k];
    }
    v["INPUTS"] = code;
    v["REDUCTIONS"] = reductions;
    v["IN_PARAMS"] = shared.params;
    v["IN_LAUNCH"] = shared.launch;
    v["MAKE_INPUTS"] = make;
    v["FOLD"] = fold;
    v["STORES"] = stores;
    v["OUT_PARAMS"] = outParams;
    v["OUT_LAUNCH"] = outLaunch;
    return v;
}

} // namespace

void addReduceFused(std::vector<IdeaDef> &out)
{
    out.push_back(IdeaDef{
        .id = "reduce_rows_fused",
        .title = "Every sum of a row in one pass",
        .text = "Where several sums run along the same rows (the norms and the dot product of a cosine "
                "similarity, the distances of a triplet loss), compute them in one kernel: a block per row "
                "loads each element once, feeds every sum from it, and reduces them together. Separate "
                "kernels read the rows once per sum.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_thread_per_output"},
        .space = {{"BLOCK", {256, 512, 128, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = sameRowSums,
        .check =
            [](const Target &t, const Point &p) {
                const std::int64_t len = sums(t).front()->row.len;
                return p.at("VEC") == 4 ? multipleOf(len, 4, "the row length") : std::string();
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const Pattern &first = *sums(t).front();
                const int block = p.at("BLOCK"), vec = p.at("VEC");
                const double eff =
                    (vec == 4 ? 0.88 : 0.74) * std::clamp(double(first.row.len) / vec / block, 0.05, 1.0);
                const double reads = t.inputBytes > 0 ? unionBytes(t) / t.inputBytes : 1.0;
                return Estimate{traffic(t, reads), busy(t, double(first.row.outer), block), eff,
                                "reads each row once for all " + std::to_string(sums(t).size()) + " sums",
                                gridText(double(first.row.outer), block)};
            },
        .values = fusedValues,
        .render = [](const IdeaDef &def, const Target &t, const Point &p) -> Result<std::string> {
            auto text = renderTemplateOf(def, t, p);
            if (!text)
                return text.error();
            return chainFile(t, {{"stage_sums", std::move(*text)}}, def.title);
        },
    });
}

} // namespace kf::builtin::ideas
