// Several reductions along the same rows in one pass: the norms and the dot product of a cosine
// similarity, the distances of a triplet loss, the logsumexp and the picked score of a cross
// entropy. The chain's stages (pattern_products.cpp) each write one value per row; separately they
// read the rows once per reduction, together once.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <set>

namespace kf::builtin::ideas {

namespace {

const std::vector<std::shared_ptr<const Pattern>> &folds(const Target &t) { return t.pattern.stages; }

// "" when every stage of the chain folds along the last dim of the same rows (pattern.h). The
// recogniser makes such splits only; the check keeps a chain from elsewhere off the template.
std::string sameRowFolds(const Target &t)
{
    if (!t.pattern.tail || folds(t).size() < 2)
        return "the pattern has no two reductions along the same rows";
    const Pattern &first = *folds(t).front();
    for (const auto &s : folds(t)) {
        if (!foldsAlongRows(*s))
            return "a stage is not a sum, mean, max, min or logsumexp along the last dim (" + s->summary() + ")";
        if (!sameRows(*s, first))
            return "the reductions are not over the same rows";
    }
    if (first.row.outer < t.sms)
        return std::to_string(first.row.outer) + " rows would leave most SMs idle";
    return {};
}

// Each reduction's input program over one list of leaves, the union in order of first use: their
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
    for (const auto &s : folds(t)) {
        remap.emplace_back();
        for (const Leaf &l : s->input.leaves)
            remap.back().push_back(indexOf(l));
    }
    std::vector<EwProgram> out;
    for (std::size_t k = 0; k < folds(t).size(); ++k) {
        EwProgram p = folds(t)[k]->input;
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
    const Pattern &first = *folds(t).front();
    const std::vector<EwProgram> inputs = withSharedLeaves(t);
    TemplateValues v{
        {"ROWS", std::to_string(first.row.outer)},
        {"LEN", std::to_string(first.row.len)},
        {"GRID", std::to_string(first.row.outer)},
        {"FOLDS", std::to_string(inputs.size())},
    };
    std::string code, reductions, make, accs, fold, combine, stores, outParams, outLaunch;
    // The kernel's own names, which its tensor parameters must not take.
    std::set<std::string> taken{"row", "base", "j"};
    for (std::size_t k = 0; k < inputs.size(); ++k)
        taken.insert({"in" + std::to_string(k), "acc" + std::to_string(k), "sum" + std::to_string(k)});
    OperandCode shared;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const std::string n = std::to_string(k), r = "Reduction" + n;
        OperandCode in = emitProgram(inputs[k], "Input" + n, Loads::Plain, taken);
        if (k == 0)
            shared = in;
        code += in.code + "\n";
        // Each reduction's struct under a name of its own (its accumulator type is nested in it).
        std::string text = emitReduction(*folds(t)[k]);
        text.replace(text.find("struct Reduction {"), 18, "struct " + r + " {");
        reductions += text + "\n";
        make += "    const Input" + n + " in" + n + "{ " + shared.args + " };\n";
        accs += "    " + r + "::Acc acc" + n + " = " + r + "::identity();\n";
        fold += "        fold_into<" + r + ">(acc" + n + ", in" + n + ", base + j);\n";
        combine += "    acc" + n + " = block_combine<" + r + ">(acc" + n + ");\n";
        stores += "        sum" + n + "[row] = " + r + "::finish(acc" + n + ");\n";
        outParams += std::string(k ? ", " : "") + "float* __restrict__ sum" + n;
        outLaunch += std::string(k ? ", " : "") + t.pattern.products[k];
    }
    v["INPUTS"] = code;
    v["REDUCTIONS"] = reductions;
    v["IN_PARAMS"] = shared.params;
    v["IN_LAUNCH"] = shared.launch;
    v["MAKE_INPUTS"] = make;
    v["ACCS"] = accs;
    v["FOLD"] = fold;
    v["COMBINE"] = combine;
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
        .title = "Every reduction of a row in one pass",
        .text = "Where several reductions run along the same rows (the norms and the dot product of a "
                "cosine similarity, the distances of a triplet loss, the logsumexp and the picked score of "
                "a cross entropy), compute them in one kernel: a block per row loads each element once, "
                "feeds every reduction from it, and combines them together. Separate kernels read the rows "
                "once per reduction.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_thread_per_output"},
        .space = {{"BLOCK", {256, 512, 128, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = sameRowFolds,
        .check =
            [](const Target &t, const Point &p) {
                const std::int64_t len = folds(t).front()->row.len;
                return p.at("VEC") == 4 ? multipleOf(len, 4, "the row length") : std::string();
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const Pattern &first = *folds(t).front();
                const int block = p.at("BLOCK"), vec = p.at("VEC");
                const double eff =
                    (vec == 4 ? 0.88 : 0.74) * std::clamp(double(first.row.len) / vec / block, 0.05, 1.0);
                const double reads = t.inputBytes > 0 ? unionBytes(t) / t.inputBytes : 1.0;
                return Estimate{traffic(t, reads), busy(t, double(first.row.outer), block), eff,
                                "reads each row once for all " + std::to_string(folds(t).size()) + " reductions",
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
