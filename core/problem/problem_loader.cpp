// Reads problem files (docs/formats.md, "Problem files") and finds the shipped ones.
#include "problem/problem.h"
#include "util/base64.h"
#include "util/expr.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kf {
namespace {

// Validation stops at the first problem; an exception carries it out of the nested helpers and
// parseProblem turns it back into a value, so nothing escapes the API.
struct Failure {
    Error error;
};

class Loader {
public:
    Loader(const std::string &text, const std::string &path, const std::string &variant, bool needModule)
        : m_text(text), m_path(path), m_file(path.empty() ? "<problem>" : path), m_variant(variant),
          m_needModule(needModule)
    {
    }

    Problem run(const toml::table &root)
    {
        recordNameLines(root);
        Problem p;
        p.path = m_path;
        p.text = m_text;
        p.variant = m_variant;

        checkKeys(root,
                  {"name", "description", "policy", "normalization", "flops", "bytes", "constants", "variants",
                   "inputs", "params", "outputs", "reference", "module_data"},
                  "");
        p.name = requireString(root, "name", "", 1);
        if (p.name.empty() ||
            std::any_of(p.name.begin(), p.name.end(), [](char c) { return std::isspace((unsigned char)c); }))
            fail(root.get("name"), "name", "must be a non-empty word without spaces");
        p.description = optionalString(root, "description", "").value_or("");
        if (auto s = optionalString(root, "policy", "")) {
            auto policy = parsePolicy(*s);
            if (!policy)
                fail(root.get("policy"), "policy", "unknown policy \"" + *s + "\" (known: strict, loose)");
            p.policy = *policy;
        }
        if (const toml::node *n = root.get("normalization")) {
            if (!n->is_boolean())
                fail(n, "normalization", "must be true or false");
            p.normalization = n->as_boolean()->get();
        }
        p.flops = optionalPositiveNumber(root, "flops");
        p.bytesMoved = optionalPositiveNumber(root, "bytes");

        p.constants = readConstants(root);
        applyVariants(root, p.constants);
        m_env.constants = p.constants;
        // Declared counts are for the main sizes; a variant's come from its op graph and tensors,
        // or its roofline floor (and the check that no time beats physics) would be the main size's.
        if (!m_variant.empty()) {
            p.flops.reset();
            p.bytesMoved.reset();
        }

        readInputs(root, p);
        readParams(root, p);
        readOutputs(root, p);
        checkUniqueNames(p);
        readReference(root, p);
        readModuleData(root, p);
        return p;
    }

private:
    const std::string &m_text;
    const std::string &m_path;
    std::string m_file;
    const std::string &m_variant;
    bool m_needModule = true;
    ExprEnv m_env;
    std::map<std::pair<std::string, std::size_t>, std::uint32_t> m_lines;

    // Lines of each tensor's `name` value, for errors found after the specs are built.
    void recordNameLines(const toml::table &root)
    {
        for (const char *kind : {"inputs", "params", "outputs"}) {
            const toml::node *n = root.get(kind);
            if (!n || !n->is_array())
                continue;
            const toml::array &arr = *n->as_array();
            for (std::size_t i = 0; i < arr.size(); ++i) {
                const toml::node *t = &arr[i];
                const toml::node *name = t->is_table() ? t->as_table()->get("name") : nullptr;
                m_lines[{kind, i}] = lineOf(name ? name : t);
            }
        }
    }

    // A bad expression in a problem file is a bad problem file, whatever the evaluator calls it.
    static Failure asParseError(Error e)
    {
        e.code = ErrorCode::Parse;
        return Failure{std::move(e)};
    }

    static std::uint32_t lineOf(const toml::node *n) { return n ? n->source().begin.line : 0; }

    // Problems with the file as a whole (a missing table) point at line 1.
    std::string where(std::uint32_t line, const std::string &field) const
    {
        std::string w = m_file;
        if (line > 0)
            w += ":" + std::to_string(line);
        if (!field.empty())
            w += ": " + field;
        return w;
    }

    [[noreturn]] void failAt(std::uint32_t line, const std::string &field, const std::string &message) const
    {
        throw Failure{makeError(ErrorCode::Parse, message, where(line, field))};
    }
    [[noreturn]] void fail(const toml::node *n, const std::string &field, const std::string &message) const
    {
        failAt(lineOf(n), field, message);
    }

    static std::string join(const std::string &prefix, std::string_view key)
    {
        return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
    }

    // Unknown keys are almost always typos ("shpae"); silently ignoring them hides the mistake.
    void checkKeys(const toml::table &t, std::initializer_list<std::string_view> known, const std::string &prefix) const
    {
        for (const auto &[key, node] : t) {
            if (std::find(known.begin(), known.end(), key.str()) != known.end())
                continue;
            std::string list;
            for (auto k : known)
                list += (list.empty() ? "" : ", ") + std::string(k);
            std::uint32_t line = key.source().begin.line ? key.source().begin.line : lineOf(&node);
            failAt(line, join(prefix, key.str()), "unknown key (known: " + list + ")");
        }
    }

    std::string requireString(const toml::table &t, std::string_view key, const std::string &prefix,
                              std::uint32_t tableLine) const
    {
        const toml::node *n = t.get(key);
        if (!n)
            failAt(tableLine, join(prefix, key), "missing required field");
        if (!n->is_string())
            fail(n, join(prefix, key), "must be a string");
        return n->as_string()->get();
    }

    std::optional<std::string> optionalString(const toml::table &t, std::string_view key,
                                              const std::string &prefix) const
    {
        const toml::node *n = t.get(key);
        if (!n)
            return std::nullopt;
        if (!n->is_string())
            fail(n, join(prefix, key), "must be a string");
        return n->as_string()->get();
    }

    std::optional<double> optionalNumber(const toml::table &t, std::string_view key, const std::string &prefix) const
    {
        const toml::node *n = t.get(key);
        if (!n)
            return std::nullopt;
        if (n->is_integer())
            return double(n->as_integer()->get());
        if (n->is_floating_point())
            return n->as_floating_point()->get();
        fail(n, join(prefix, key), "must be a number");
    }

    std::optional<double> optionalPositiveNumber(const toml::table &t, std::string_view key) const
    {
        auto v = optionalNumber(t, key, "");
        if (v && !(*v > 0))
            fail(t.get(key), std::string(key), "must be positive");
        return v;
    }

    static bool isIdentifier(std::string_view s)
    {
        if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
            return false;
        return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
    }

    std::map<std::string, std::int64_t, std::less<>> readConstants(const toml::table &root) const
    {
        std::map<std::string, std::int64_t, std::less<>> out;
        const toml::node *n = root.get("constants");
        if (!n)
            return out;
        if (!n->is_table())
            fail(n, "constants", "must be a table of integers");
        for (const auto &[key, value] : *n->as_table()) {
            std::string field = "constants." + std::string(key.str());
            if (!isIdentifier(key.str()))
                fail(&value, field, "constant names must be identifiers (letters, digits, _)");
            if (!value.is_integer())
                fail(&value, field, "must be an integer");
            out[std::string(key.str())] = value.as_integer()->get();
        }
        return out;
    }

    // Every variant is checked, so a typo in [variants.small] shows up whichever size is loaded;
    // only the requested one is applied.
    void applyVariants(const toml::table &root, std::map<std::string, std::int64_t, std::less<>> &constants) const
    {
        const toml::node *n = root.get("variants");
        if (n && !n->is_table())
            fail(n, "variants", "must be a table of [variants.NAME] tables");
        bool found = false;
        if (n) {
            for (const auto &[name, table] : *n->as_table()) {
                std::string prefix = "variants." + std::string(name.str());
                if (!table.is_table())
                    fail(&table, prefix, "must be a table of constant overrides");
                for (const auto &[key, value] : *table.as_table()) {
                    std::string field = prefix + "." + std::string(key.str());
                    if (!constants.count(key.str()))
                        fail(&value, field,
                             "overrides \"" + std::string(key.str()) + "\", which is not in [constants]");
                    if (!value.is_integer())
                        fail(&value, field, "must be an integer");
                }
                if (name.str() != m_variant)
                    continue;
                found = true;
                for (const auto &[key, value] : *table.as_table())
                    constants[std::string(key.str())] = value.as_integer()->get();
            }
        }
        if (!m_variant.empty() && !found)
            failAt(n ? lineOf(n) : 1, "variants", "no variant named \"" + m_variant + "\"");
    }

    std::vector<std::int64_t> readShape(const toml::table &t, const std::string &prefix, std::uint32_t tableLine) const
    {
        std::string field = prefix + ".shape";
        const toml::node *n = t.get("shape");
        if (!n)
            failAt(tableLine, field, "missing required field");
        if (!n->is_array())
            fail(n, field, "must be an array of integers or expressions, like [\"B\", 1024]");
        std::vector<std::int64_t> shape;
        const toml::array &arr = *n->as_array();
        for (std::size_t i = 0; i < arr.size(); ++i) {
            const toml::node &dim = arr[i];
            std::string dimField = field + "[" + std::to_string(i) + "]";
            std::int64_t v = 0;
            if (dim.is_integer()) {
                v = dim.as_integer()->get();
            } else if (dim.is_string()) {
                auto r = evalExpr(dim.as_string()->get(), m_env, where(lineOf(&dim), dimField));
                if (!r)
                    throw asParseError(r.error());
                v = *r;
            } else {
                fail(&dim, dimField, "must be an integer or an expression over constants");
            }
            if (v <= 0)
                fail(&dim, dimField, "dimension must be positive, got " + std::to_string(v));
            shape.push_back(v);
        }
        std::int64_t numel = 1;
        for (std::int64_t d : shape)
            if (__builtin_mul_overflow(numel, d, &numel))
                fail(n, field, "too many elements");
        return shape;
    }

    DType readDType(const toml::table &t, const std::string &prefix) const
    {
        auto s = optionalString(t, "dtype", prefix);
        if (!s)
            return DType::F32;
        auto d = parseDType(*s);
        if (!d)
            fail(t.get("dtype"), prefix + ".dtype",
                 "unknown dtype \"" + *s + "\" (known: float32 float16 bfloat16 float64 int32 int64 bool)");
        return *d;
    }

    Dist readDist(const toml::node &n, const std::string &field) const
    {
        if (!n.is_string())
            fail(&n, field, "must be a string");
        auto d = parseDist(n.as_string()->get());
        if (!d)
            fail(&n, field,
                 "unknown distribution \"" + n.as_string()->get() +
                     "\" (known: uniform, normal, laplace, lognormal, exponential)");
        return *d;
    }

    // The common part of inputs, params and outputs: an array of tables, each with a name.
    const toml::array *tableArray(const toml::table &root, std::string_view key) const
    {
        const toml::node *n = root.get(key);
        if (!n)
            return nullptr;
        if (!n->is_array_of_tables())
            fail(n, std::string(key), "must be an array of tables ([[" + std::string(key) + "]])");
        return n->as_array();
    }

    void readTensor(const toml::table &t, const std::string &prefix, TensorSpec &spec) const
    {
        std::uint32_t line = lineOf(&t);
        spec.name = requireString(t, "name", prefix, line);
        if (!isIdentifier(spec.name))
            fail(t.get("name"), prefix + ".name", "\"" + spec.name + "\" is not an identifier (letters, digits, _)");
        spec.shape = readShape(t, prefix, line);
        spec.dtype = readDType(t, prefix);
    }

    void readInputs(const toml::table &root, Problem &p) const
    {
        const toml::array *arr = tableArray(root, "inputs");
        if (!arr || arr->empty())
            failAt(1, "inputs", "a problem needs at least one [[inputs]] table");
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const toml::table &t = *(*arr)[i].as_table();
            std::string prefix = "inputs[" + std::to_string(i) + "]";
            checkKeys(t, {"name", "shape", "dtype", "init", "distributions"}, prefix);
            InputSpec spec;
            readTensor(t, prefix, spec);
            Dist own = Dist::Uniform;
            if (const toml::node *n = t.get("init"))
                own = readDist(*n, prefix + ".init");
            spec.distributions.push_back(own);
            if (const toml::node *n = t.get("distributions")) {
                if (!n->is_array() || n->as_array()->empty())
                    fail(n, prefix + ".distributions", "must be a non-empty array of distribution names");
                const toml::array &list = *n->as_array();
                std::set<Dist> seen;
                for (std::size_t k = 0; k < list.size(); ++k) {
                    std::string field = prefix + ".distributions[" + std::to_string(k) + "]";
                    Dist d = readDist(list[k], field);
                    if (!seen.insert(d).second)
                        fail(&list[k], field, "\"" + toString(d) + "\" is listed twice");
                    if (d != own)
                        spec.distributions.push_back(d);
                }
            } else {
                for (Dist d : {Dist::Uniform, Dist::Normal, Dist::Laplace, Dist::LogNormal, Dist::Exponential})
                    if (d != own)
                        spec.distributions.push_back(d);
            }
            p.inputs.push_back(std::move(spec));
        }
    }

    void readParams(const toml::table &root, Problem &p) const
    {
        const toml::array *arr = tableArray(root, "params");
        if (!arr)
            return;
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const toml::table &t = *(*arr)[i].as_table();
            std::string prefix = "params[" + std::to_string(i) + "]";
            checkKeys(t, {"name", "shape", "dtype", "init", "low", "high", "fan_in", "attribute"}, prefix);
            ParamSpec spec;
            readTensor(t, prefix, spec);
            if (auto a = optionalString(t, "attribute", prefix)) {
                if (!moduleProblem(root))
                    fail(t.get("attribute"), prefix + ".attribute",
                         "applies only to module problems (with reference.module)");
                if (a->empty())
                    fail(t.get("attribute"), prefix + ".attribute",
                         "must name a module attribute, like \"conv.weight\"");
                spec.attribute = *a;
            } else if (moduleProblem(root)) {
                spec.attribute = spec.name; // a parameter of the model itself
            }
            if (auto init = optionalString(t, "init", prefix))
                spec.init = *init;
            const std::string &init = spec.init;
            if (init != "ones" && init != "zeros" && init != "uniform" && init != "normal" && init != "fan_in_uniform")
                fail(t.get("init"), prefix + ".init",
                     "unknown initializer \"" + init + "\" (known: ones, zeros, uniform, normal, fan_in_uniform)");
            bool ranged = init == "uniform" || init == "normal";
            for (std::string_view key : {"low", "high"})
                if (t.get(key) && !ranged)
                    fail(t.get(key), prefix + "." + std::string(key),
                         "applies only to init = \"uniform\" or \"normal\"");
            if (t.get("fan_in") && init != "fan_in_uniform")
                fail(t.get("fan_in"), prefix + ".fan_in", "applies only to init = \"fan_in_uniform\"");
            if (ranged) {
                // For "normal", low is the mean and high the standard deviation.
                spec.low = optionalNumber(t, "low", prefix).value_or(0.0);
                spec.high = optionalNumber(t, "high", prefix).value_or(1.0);
                if (init == "uniform" && !(spec.high > spec.low))
                    fail(t.get("high") ? t.get("high") : &t, prefix + ".high", "must be greater than low");
                if (init == "normal" && !(spec.high > 0))
                    fail(t.get("high") ? t.get("high") : &t, prefix + ".high",
                         "the standard deviation must be positive");
            }
            if (init == "fan_in_uniform")
                spec.fanIn = readFanIn(t, prefix, spec.shape);
            p.params.push_back(std::move(spec));
        }
    }

    // PyTorch's fan-in of a weight is the product of all but its first dimension; a bias has no
    // such shape, so 1-d parameters must say theirs.
    std::int64_t readFanIn(const toml::table &t, const std::string &prefix,
                           const std::vector<std::int64_t> &shape) const
    {
        std::string field = prefix + ".fan_in";
        const toml::node *n = t.get("fan_in");
        if (!n) {
            if (shape.size() < 2)
                failAt(lineOf(&t), field,
                       "required for init = \"fan_in_uniform\" on a parameter with fewer than 2 dimensions");
            std::int64_t f = 1;
            for (std::size_t k = 1; k < shape.size(); ++k)
                f *= shape[k];
            return f;
        }
        std::int64_t v = 0;
        if (n->is_integer()) {
            v = n->as_integer()->get();
        } else if (n->is_string()) {
            auto r = evalExpr(n->as_string()->get(), m_env, where(lineOf(n), field));
            if (!r)
                throw asParseError(r.error());
            v = *r;
        } else {
            fail(n, field, "must be an integer or an expression over constants");
        }
        if (v <= 0)
            fail(n, field, "must be positive, got " + std::to_string(v));
        return v;
    }

    void readOutputs(const toml::table &root, Problem &p) const
    {
        const toml::array *arr = tableArray(root, "outputs");
        if (!arr || arr->empty())
            failAt(1, "outputs", "a problem needs at least one [[outputs]] table, named \"out\"");
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const toml::table &t = *(*arr)[i].as_table();
            std::string prefix = "outputs[" + std::to_string(i) + "]";
            checkKeys(t, {"name", "shape", "dtype"}, prefix);
            TensorSpec spec;
            readTensor(t, prefix, spec);
            std::string expected = arr->size() == 1 ? "out" : "out" + std::to_string(i);
            if (spec.name != expected)
                fail(t.get("name"), prefix + ".name",
                     "must be \"" + expected +
                         "\" (a single output is \"out\"; a tuple's are out0, out1, ... in order)");
            p.outputs.push_back(std::move(spec));
        }
    }

    void checkUniqueNames(const Problem &p) const
    {
        std::set<std::string, std::less<>> seen;
        auto check = [&](const TensorSpec &t, const char *kind, std::size_t i) {
            if (seen.insert(t.name).second)
                return;
            std::string prefix = std::string(kind) + "[" + std::to_string(i) + "]";
            failAt(lineOfTensorName(kind, i), prefix + ".name", "duplicate tensor name \"" + t.name + "\"");
        };
        for (std::size_t i = 0; i < p.inputs.size(); ++i)
            check(p.inputs[i], "inputs", i);
        for (std::size_t i = 0; i < p.params.size(); ++i)
            check(p.params[i], "params", i);
        for (std::size_t i = 0; i < p.outputs.size(); ++i)
            check(p.outputs[i], "outputs", i);
    }

    std::uint32_t lineOfTensorName(const char *kind, std::size_t i) const
    {
        auto it = m_lines.find({kind, i});
        return it == m_lines.end() ? 0 : it->second;
    }

    static bool moduleProblem(const toml::table &root)
    {
        const toml::node *r = root.get("reference");
        return r && r->is_table() && r->as_table()->get("module");
    }

    void readReference(const toml::table &root, Problem &p) const
    {
        const toml::node *n = root.get("reference");
        if (!n)
            failAt(1, "reference", "missing required table [reference] with the TorchScript source");
        if (!n->is_table())
            fail(n, "reference", "must be a table with a `source` string");
        const toml::table &t = *n->as_table();
        if (t.get("module")) {
            readModuleReference(t, p);
            return;
        }
        checkKeys(t, {"source", "module"}, "reference");
        p.referenceSource = requireString(t, "source", "reference", lineOf(n));
        std::size_t def = p.referenceSource.find("def forward");
        if (def == std::string::npos)
            fail(t.get("source"), "reference.source", "must define `def forward(...)`");
        checkForwardArguments(p, lineOf(t.get("source")));
    }

    // A saved TorchScript module (tools/kernelbench-import.py): forward(inputs...) reads the
    // parameters from the module, so there is no signature to check here; `source` is the Python
    // the module came from, for prompts and for tools/compile-baseline.py.
    void readModuleReference(const toml::table &t, Problem &p) const
    {
        checkKeys(t, {"source", "module", "torch", "method", "numbers"}, "reference");
        p.modulePath = requireString(t, "module", "reference", lineOf(&t));
        if (p.modulePath.empty())
            fail(t.get("module"), "reference.module", "must name the module's file, like \"relu.pt\"");
        p.referenceSource = optionalString(t, "source", "reference").value_or("");
        p.moduleTorch = optionalString(t, "torch", "reference").value_or("");
        if (auto m = optionalString(t, "method", "reference"); m && *m != "script" && *m != "trace")
            fail(t.get("method"), "reference.method", "must be \"script\" or \"trace\" (how the module was made)");
        if (const toml::node *n = t.get("numbers"))
            checkNumbers(*n);
        std::set<std::string, std::less<>> seen;
        for (std::size_t i = 0; i < p.params.size(); ++i)
            if (!seen.insert(p.params[i].attribute).second)
                failAt(lineOfTensorName("params", i), "params[" + std::to_string(i) + "].attribute",
                       "the module attribute \"" + p.params[i].attribute + "\" is already another parameter's");
    }

    // The numbers among get_inputs()'s items (`A * s`, s = 3.14): the saved module fixes them, so
    // nothing here reads them; the original Model (tools/compile-baseline.py) takes each at its
    // position among forward's arguments.
    void checkNumbers(const toml::node &n) const
    {
        const toml::array *a = n.as_array();
        if (!a)
            fail(&n, "reference.numbers", "must be an array of { position = N, value = NUMBER } tables");
        for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::table *e = (*a)[i].as_table();
            const toml::node *position = e ? e->get("position") : nullptr;
            const toml::node *value = e ? e->get("value") : nullptr;
            const bool ok = e && e->size() == 2 && position && position->is_integer() &&
                position->as_integer()->get() >= 0 && value && (value->is_number() || value->is_boolean());
            if (!ok)
                fail(&(*a)[i], "reference.numbers[" + std::to_string(i) + "]",
                     "must be { position = N, value = NUMBER }: forward's argument N (from 0) is the number");
        }
    }

    // [module_data] carries the module's bytes inside the text, so the problem travels whole.
    void readModuleData(const toml::table &root, Problem &p) const
    {
        const toml::node *n = root.get("module_data");
        if (!n) {
            if (p.isModule() && m_needModule)
                fail(root.get("reference")->as_table()->get("module"), "reference.module",
                     "the module's bytes are not in this text: read the file with its module beside it, or give "
                     "a text that carries them (a [module_data] table, as sessions keep it)");
            return;
        }
        if (!p.isModule())
            fail(n, "module_data", "applies only to module problems (with reference.module)");
        if (!n->is_table())
            fail(n, "module_data", "must be a table with a `base64` string");
        const toml::table &t = *n->as_table();
        checkKeys(t, {"base64"}, "module_data");
        const std::string encoded = requireString(t, "base64", "module_data", lineOf(n));
        p.module = std::make_shared<const std::string>(base64Decode(encoded));
        if (p.module->empty())
            fail(t.get("base64"), "module_data.base64", "holds no module");
    }

    // forward takes the inputs, then the parameters, in file order; a mismatch would only show
    // up in the worker, far from the file.
    void checkForwardArguments(const Problem &p, std::uint32_t sourceLine) const
    {
        const std::string &src = p.referenceSource;
        std::size_t def = src.find("def forward");
        std::uint32_t line = lineOfText("def forward", sourceLine);
        std::size_t open = src.find('(', def);
        if (open == std::string::npos)
            failAt(line, "reference.source", "`def forward` has no argument list");
        std::vector<std::string> args;
        std::vector<bool> hasDefault;
        int depth = 0;
        std::string cur;
        std::size_t k = open + 1;
        auto flush = [&] {
            std::string a = cur;
            cur.clear();
            bool dflt = a.find('=') != std::string::npos;
            a = a.substr(0, std::min(a.find(':'), a.find('=')));
            a.erase(std::remove_if(a.begin(), a.end(), [](char c) { return std::isspace((unsigned char)c); }), a.end());
            if (!a.empty()) {
                args.push_back(a);
                hasDefault.push_back(dflt);
            }
        };
        for (; k < src.size(); ++k) {
            char c = src[k];
            if (c == '(' || c == '[')
                ++depth;
            else if ((c == ')' || c == ']') && depth > 0)
                --depth;
            else if (c == ')')
                break;
            if (c == ',' && depth == 0)
                flush();
            else
                cur += c;
        }
        if (k >= src.size())
            failAt(line, "reference.source", "`def forward(` is not closed");
        flush();
        if (!args.empty() && args.front() == "self") {
            args.erase(args.begin());
            hasDefault.erase(hasDefault.begin());
        }
        std::vector<std::string> expected;
        for (const auto &t : p.inputs)
            expected.push_back(t.name);
        for (const auto &t : p.params)
            expected.push_back(t.name);
        std::vector<std::string> required;
        for (std::size_t i = 0; i < args.size(); ++i)
            if (!hasDefault[i] || i < expected.size())
                required.push_back(args[i]);
        if (required != expected) {
            auto list = [](const std::vector<std::string> &v) {
                std::string s;
                for (const auto &x : v)
                    s += (s.empty() ? "" : ", ") + x;
                return "(" + s + ")";
            };
            failAt(line, "reference.source",
                   "forward takes " + list(required) + " but the file declares inputs then params " + list(expected));
        }
    }

    // The line of `needle` in the file, so errors point into the multi-line source string.
    std::uint32_t lineOfText(std::string_view needle, std::uint32_t fallback) const
    {
        std::size_t at = m_text.find(needle);
        if (at == std::string::npos)
            return fallback;
        return 1 + std::uint32_t(std::count(m_text.begin(), m_text.begin() + std::ptrdiff_t(at), '\n'));
    }
};

std::string readFile(const std::string &path, bool &ok)
{
    // Straight into a string of the file's size: a module can be hundreds of MB.
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    ok = bool(in);
    if (!ok)
        return {};
    const std::streamoff size = in.tellg();
    ok = size >= 0;
    if (!ok)
        return {};
    std::string bytes(std::size_t(size), '\0');
    in.seekg(0);
    in.read(bytes.data(), std::streamsize(bytes.size()));
    ok = in.gcount() == std::streamsize(bytes.size());
    return bytes;
}

std::uint32_t lineOfModule(const std::string &text)
{
    std::size_t at = text.find("\nmodule");
    return at == std::string::npos
        ? 1
        : 2 + std::uint32_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n'));
}

void addDir(std::vector<std::string> &out, const fs::path &dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return;
    fs::path canon = fs::weakly_canonical(dir, ec);
    std::string s = (ec ? dir : canon).string();
    if (std::find(out.begin(), out.end(), s) == out.end())
        out.push_back(s);
}

// *.toml under `folder`, sorted by path relative to it.
std::vector<fs::path> tomlFiles(const fs::path &folder, std::error_code &ec)
{
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".toml")
            files.push_back(it->path());
    }
    std::sort(files.begin(), files.end(), [&](const fs::path &a, const fs::path &b) {
        return a.lexically_relative(folder).generic_string() < b.lexically_relative(folder).generic_string();
    });
    return files;
}

} // namespace

Result<Problem> parseProblem(const std::string &text, const std::string &path, const std::string &variant,
                             bool needModule)
{
    const std::string file = path.empty() ? "<problem>" : path;
    toml::table root;
#if TOML_EXCEPTIONS
    try {
        root = toml::parse(text, path);
    } catch (const toml::parse_error &e) {
        return makeError(ErrorCode::Parse, "TOML syntax: " + std::string(e.description()),
                         file + ":" + std::to_string(e.source().begin.line));
    }
#else
    toml::parse_result parsed = toml::parse(text, path);
    if (!parsed) {
        const auto &e = parsed.error();
        return makeError(ErrorCode::Parse, "TOML syntax: " + std::string(e.description()),
                         file + ":" + std::to_string(e.source().begin.line));
    }
    root = std::move(parsed).table();
#endif
    try {
        return Loader(text, path, variant, needModule).run(root);
    } catch (const Failure &f) {
        return f.error;
    }
}

Result<Problem> loadProblemFile(const std::string &path, const std::string &variant)
{
    bool ok = false;
    std::string text = readFile(path, ok);
    if (!ok)
        return makeError(ErrorCode::Io, "cannot read the problem file", path);
    auto p = parseProblem(text, path, variant, false);
    if (!p || !p->isModule() || p->hasModuleBytes())
        return p;
    const fs::path file = fs::path(path).parent_path() / p->modulePath;
    std::string bytes = readFile(file.string(), ok);
    if (!ok || bytes.empty())
        return makeError(ErrorCode::Io, "cannot read the module " + file.string() + " (re-import the problem)",
                         path + ":" + std::to_string(lineOfModule(text)) + ": reference.module");
    p->module = std::make_shared<const std::string>(std::move(bytes));
    return p;
}

std::string textWithModule(const Problem &problem)
{
    const std::string &text = problem.text;
    if (!problem.isModule() || !problem.hasModuleBytes() || text.find("\n[module_data]") != std::string::npos)
        return text;
    return text + (text.empty() || text.back() == '\n' ? "" : "\n") + "\n# The bytes of " + problem.modulePath +
        ", added when the problem was saved: a module problem travels whole.\n"
        "[module_data]\nbase64 = \"" +
        base64Encode(*problem.module) + "\"\n";
}

namespace {

Result<Problem> loadWithoutModule(const std::string &path)
{
    bool ok = false;
    std::string text = readFile(path, ok);
    if (!ok)
        return makeError(ErrorCode::Io, "cannot read the problem file", path);
    return parseProblem(text, path, {}, false);
}

} // namespace

ProblemListing listProblems(const std::string &folder, bool readModules)
{
    ProblemListing listing;
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        listing.errors.push_back(makeError(ErrorCode::Io, "not a folder", folder));
        return listing;
    }
    std::vector<fs::path> files = tomlFiles(folder, ec);
    if (ec)
        listing.errors.push_back(makeError(ErrorCode::Io, "cannot list the folder: " + ec.message(), folder));
    for (const fs::path &f : files) {
        auto r = readModules ? loadProblemFile(f.string()) : loadWithoutModule(f.string());
        if (r)
            listing.problems.push_back(std::move(*r));
        else
            listing.errors.push_back(r.error());
    }
    return listing;
}

std::vector<std::string> problemSearchPath()
{
    std::vector<std::string> out;
    if (const char *env = std::getenv("KERNELFORGE_PROBLEMS")) {
        std::string_view s(env);
        while (!s.empty()) {
            std::size_t colon = s.find(':');
            std::string_view part = s.substr(0, colon);
            if (!part.empty())
                addDir(out, fs::path(std::string(part)));
            if (colon == std::string_view::npos)
                break;
            s.remove_prefix(colon + 1);
        }
    }
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        addDir(out, exe.parent_path() / ".." / "share" / "kernelforge" / "problems");
#ifdef KF_SOURCE_PROBLEMS_DIR
    addDir(out, fs::path(KF_SOURCE_PROBLEMS_DIR));
#endif
    // Running from a checkout or a build folder inside it: the source tree's problems.
    fs::path dir = fs::current_path(ec);
    while (!ec && !dir.empty()) {
        std::error_code missing; // a folder without problems/ is the usual case, not a failure
        if (fs::is_directory(dir / "problems" / "seed", missing)) {
            addDir(out, dir / "problems");
            break;
        }
        if (dir == dir.parent_path())
            break;
        dir = dir.parent_path();
    }
    return out;
}

Result<Problem> findProblem(const std::string &nameOrPath, const std::string &variant)
{
    std::error_code ec;
    if (fs::is_regular_file(nameOrPath, ec))
        return loadProblemFile(nameOrPath, variant);

    const std::vector<std::string> folders = problemSearchPath();
    for (const std::string &folder : folders) {
        std::vector<fs::path> files = tomlFiles(folder, ec);
        // A `name` match beats a file-name match; a broken file that the user named by its file
        // name reports its own error rather than "not found".
        std::vector<Problem> byName, byFile;
        std::optional<Error> brokenMatch;
        for (const fs::path &f : files) {
            std::string rel = f.lexically_relative(folder).replace_extension().generic_string();
            bool fileMatch = f.stem() == nameOrPath || rel == nameOrPath;
            auto r = loadProblemFile(f.string());
            if (!r) {
                if (fileMatch && !brokenMatch)
                    brokenMatch = r.error();
                continue;
            }
            if (r->name == nameOrPath)
                byName.push_back(std::move(*r));
            else if (fileMatch)
                byFile.push_back(std::move(*r));
        }
        std::vector<Problem> &matches = byName.empty() ? byFile : byName;
        if (matches.size() > 1) {
            std::string list;
            for (const auto &p : matches)
                list += (list.empty() ? "" : ", ") + p.path;
            return makeError(ErrorCode::NotFound, "\"" + nameOrPath + "\" is ambiguous: " + list, folder);
        }
        if (matches.size() == 1) {
            const Problem &p = matches.front();
            if (variant.empty())
                return p;
            auto sized = parseProblem(p.text, p.path, variant, false);
            if (sized && !sized->hasModuleBytes())
                sized->module = p.module;
            return sized;
        }
        if (brokenMatch)
            return *brokenMatch;
    }
    std::string searched;
    for (const auto &f : folders)
        searched += (searched.empty() ? "" : ", ") + f;
    return makeError(ErrorCode::NotFound,
                     "no problem named \"" + nameOrPath + "\" (searched: " + (searched.empty() ? "nothing" : searched) +
                         "; set KERNELFORGE_PROBLEMS to add folders)");
}

} // namespace kf
