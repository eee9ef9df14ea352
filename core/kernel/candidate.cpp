#include "kernel/candidate.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

namespace kf {

std::string toString(Precision p)
{
    switch (p) {
    case Precision::FP32:
        return "fp32";
    case Precision::TF32x3:
        return "tf32x3";
    case Precision::TF32:
        return "tf32";
    case Precision::FP16:
        return "fp16";
    case Precision::BF16:
        return "bf16";
    case Precision::BF16x3:
        return "bf16x3";
    }
    return "fp32";
}

std::optional<Precision> parsePrecision(std::string_view s)
{
    std::string t;
    for (char c : s)
        t += char(std::tolower(static_cast<unsigned char>(c)));
    if (t == "fp32")
        return Precision::FP32;
    if (t == "tf32x3" || t == "3xtf32")
        return Precision::TF32x3;
    if (t == "tf32")
        return Precision::TF32;
    if (t == "fp16")
        return Precision::FP16;
    if (t == "bf16")
        return Precision::BF16;
    if (t == "bf16x3" || t == "3xbf16")
        return Precision::BF16x3;
    return std::nullopt;
}

namespace {

bool isSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string_view trim(std::string_view s)
{
    while (!s.empty() && isSpace(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && isSpace(s.back()))
        s.remove_suffix(1);
    return s;
}

bool isIdentifier(std::string_view s)
{
    if (s.empty() || !isIdentStart(s.front()))
        return false;
    for (char c : s)
        if (!isIdentChar(c))
            return false;
    return true;
}

std::string at(const std::string &path, int line) { return path + ":" + std::to_string(line); }

Error parseError(const std::string &path, int line, std::string message)
{
    return makeError(ErrorCode::Parse, std::move(message), at(path, line));
}

// Splits on commas outside parentheses and brackets: "cdiv(a, b), 4" is two items.
std::vector<std::string> splitTopLevel(std::string_view s)
{
    std::vector<std::string> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '(' || c == '[')
            ++depth;
        else if (c == ')' || c == ']')
            --depth;
        else if (c == ',' && depth == 0) {
            out.emplace_back(trim(s.substr(start, i - start)));
            start = i + 1;
        }
    }
    out.emplace_back(trim(s.substr(start)));
    return out;
}

// Index of the parenthesis closing the one at `open`, or npos.
std::size_t matchingParen(std::string_view s, std::size_t open)
{
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (s[i] == '(')
            ++depth;
        else if (s[i] == ')' && --depth == 0)
            return i;
    }
    return std::string_view::npos;
}

// f32(...) takes a number as C writes it; a trailing 'f' is allowed.
std::optional<double> parseNumber(std::string text)
{
    if (!text.empty() && (text.back() == 'f' || text.back() == 'F'))
        text.pop_back();
    if (text.empty())
        return std::nullopt;
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size())
        return std::nullopt;
    return v;
}

// A launch argument as written; bare identifiers stay Tensor until the problem is known.
Result<LaunchArg> parseArg(std::string_view item, const std::string &path, int line)
{
    if (item.empty())
        return parseError(path, line, "@launch: empty argument in args(...)");
    for (auto [prefix, kind] : {std::pair{"i32", LaunchArg::Kind::Int32}, std::pair{"i64", LaunchArg::Kind::Int64},
                                std::pair{"f32", LaunchArg::Kind::Float32}}) {
        std::string_view p = prefix;
        if (item.substr(0, p.size()) != p)
            continue;
        std::string_view rest = trim(item.substr(p.size()));
        std::size_t offset = item.size() - rest.size();
        if (rest.empty() || rest.front() != '(')
            continue;
        if (matchingParen(item, offset) != item.size() - 1)
            continue;
        std::string inner(trim(item.substr(offset + 1, item.size() - offset - 2)));
        if (inner.empty())
            return parseError(path, line, "@launch: " + std::string(prefix) + "() needs a value");
        if (kind == LaunchArg::Kind::Float32 && !parseNumber(inner))
            return parseError(path, line, "@launch: f32(" + inner + ") takes a number");
        return LaunchArg{kind, inner};
    }
    if (isIdentifier(item))
        return LaunchArg{LaunchArg::Kind::Tensor, std::string(item)};
    return LaunchArg{LaunchArg::Kind::Int32, std::string(item)};
}

Status parseLaunch(std::string_view body, const std::string &path, int line, LaunchDecl &launch)
{
    auto fail = [&](std::string msg) -> Status { return parseError(path, line, "@launch: " + msg); };
    std::size_t pos = 0;
    while (pos < body.size() && isSpace(body[pos]))
        ++pos;

    // The kernel: an identifier, or a C++ name with '::' and template arguments, whose
    // spaces may only appear inside <...>.
    std::size_t start = pos;
    int angle = 0;
    while (pos < body.size() && (angle > 0 || !isSpace(body[pos]))) {
        if (body[pos] == '<')
            ++angle;
        else if (body[pos] == '>')
            --angle;
        ++pos;
    }
    std::string_view kernel = body.substr(start, pos - start);
    if (kernel.empty())
        return fail("missing kernel name");
    if (kernel.find('(') != std::string_view::npos || !(isIdentStart(kernel.front()) || kernel.front() == ':'))
        return fail("missing kernel name before '" + std::string(kernel) + "'");
    launch.kernel = std::string(kernel);

    std::set<std::string> seen;
    while (true) {
        while (pos < body.size() && isSpace(body[pos]))
            ++pos;
        if (pos >= body.size())
            break;
        std::size_t wordStart = pos;
        while (pos < body.size() && isIdentChar(body[pos]))
            ++pos;
        std::string word(body.substr(wordStart, pos - wordStart));
        if (word.empty())
            return fail("unexpected '" + std::string(body.substr(wordStart)) + "'");
        static const std::set<std::string> clauses = {"grid", "block", "smem", "cluster", "args"};
        if (!clauses.count(word))
            return fail("unknown clause '" + word + "'");
        if (!seen.insert(word).second)
            return fail(word + "(...) given twice");
        while (pos < body.size() && isSpace(body[pos]))
            ++pos;
        if (pos >= body.size() || body[pos] != '(')
            return fail("expected '(' after '" + word + "'");
        std::size_t close = matchingParen(body, pos);
        if (close == std::string_view::npos)
            return fail(word + "(...) is missing its ')'");
        std::string_view inner = trim(body.substr(pos + 1, close - pos - 1));
        pos = close + 1;

        if (word == "args") {
            if (inner.empty())
                continue; // a kernel without parameters
            for (const auto &item : splitTopLevel(inner)) {
                auto arg = parseArg(item, path, line);
                if (!arg)
                    return arg.error();
                launch.args.push_back(*arg);
            }
            continue;
        }
        auto items = splitTopLevel(inner);
        for (const auto &item : items)
            if (item.empty())
                return fail(word + "(...) has an empty expression");
        if (word == "smem") {
            if (items.size() != 1)
                return fail("smem(...) takes one expression");
            launch.smem = items[0];
            continue;
        }
        if (items.size() > 3)
            return fail(word + "(...) takes one to three expressions");
        std::array<std::string, 3> dims{"1", "1", "1"};
        for (std::size_t i = 0; i < items.size(); ++i)
            dims[i] = items[i];
        if (word == "grid")
            launch.grid = dims;
        else if (word == "block")
            launch.block = dims;
        else
            launch.cluster = dims;
    }
    if (!seen.count("grid"))
        return fail("missing grid(...)");
    if (!seen.count("block"))
        return fail("missing block(...)");
    if (!seen.count("args"))
        return fail("missing args(...)");
    return Ok{};
}

// The directive on a line, if any: the line must start (after blanks) with "//", then "@word".
// Directives elsewhere (after code, inside /* */) are not recognised, so ordinary code that
// merely mentions "@launch" in a trailing comment is left alone.
std::optional<std::pair<std::string, std::string_view>> directiveOf(std::string_view line)
{
    std::string_view s = trim(line);
    if (s.substr(0, 2) != "//")
        return std::nullopt;
    s = trim(s.substr(2));
    if (s.size() < 2 || s[0] != '@' || !isIdentStart(s[1]))
        return std::nullopt;
    std::size_t end = 1;
    while (end < s.size() && isIdentChar(s[end]))
        ++end;
    return std::pair{std::string(s.substr(1, end - 1)), trim(s.substr(end))};
}

} // namespace

Result<Candidate> parseCandidate(const std::string &source, const std::string &path)
{
    Candidate c;
    c.source = source;
    std::map<std::string, int> scratchLines;
    int precisionLine = 0;

    std::string_view text = source;
    int lineNo = 0;
    while (!text.empty()) {
        ++lineNo;
        std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);

        auto d = directiveOf(line);
        if (!d)
            continue;
        auto &[word, body] = *d;
        if (word == "precision") {
            if (precisionLine)
                return parseError(path, lineNo,
                                  "@precision: given twice (first on line " + std::to_string(precisionLine) + ")");
            auto p = parsePrecision(body);
            if (!p)
                return parseError(path, lineNo,
                                  "@precision: unknown precision '" + std::string(body) +
                                      "' (fp32, tf32x3, tf32, fp16 or bf16)");
            c.precision = *p;
            precisionLine = lineNo;
        } else if (word == "scratch") {
            // NAME DTYPE COUNT, where COUNT is the rest of the line and may hold spaces.
            std::size_t sp1 = body.find_first_of(" \t");
            std::string_view name = body.substr(0, sp1);
            std::string_view rest = sp1 == std::string_view::npos ? std::string_view{} : trim(body.substr(sp1));
            std::size_t sp2 = rest.find_first_of(" \t");
            std::string_view dtype = rest.substr(0, sp2);
            std::string_view count = sp2 == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp2));
            // An optional last word `uninitialized` skips the zero fill.
            bool zeroed = true;
            if (constexpr std::string_view kUninit = "uninitialized"; count.size() > kUninit.size() &&
                count.substr(count.size() - kUninit.size()) == kUninit &&
                (count[count.size() - kUninit.size() - 1] == ' ' || count[count.size() - kUninit.size() - 1] == '\t')) {
                zeroed = false;
                count = trim(count.substr(0, count.size() - kUninit.size()));
            }
            if (name.empty() || dtype.empty() || count.empty())
                return parseError(path, lineNo, "@scratch: expected NAME DTYPE COUNT [uninitialized]");
            if (!isIdentifier(name))
                return parseError(path, lineNo, "@scratch: '" + std::string(name) + "' is not a valid name");
            auto dt = parseDType(dtype);
            if (!dt)
                return parseError(path, lineNo, "@scratch: unknown dtype '" + std::string(dtype) + "'");
            if (auto it = scratchLines.find(std::string(name)); it != scratchLines.end())
                return parseError(path, lineNo,
                                  "@scratch: '" + std::string(name) + "' is already declared on line " +
                                      std::to_string(it->second));
            scratchLines[std::string(name)] = lineNo;
            c.scratch.push_back(ScratchDecl{std::string(name), *dt, std::string(count), lineNo, zeroed});
        } else if (word == "launch") {
            LaunchDecl launch;
            launch.line = lineNo;
            if (auto st = parseLaunch(body, path, lineNo, launch); !st)
                return st.error();
            c.launches.push_back(std::move(launch));
        } else if (word == "problem") {
            c.problem = std::string(body);
        } else if (word == "expect") {
            c.expect = std::string(body);
        } else {
            return parseError(path, lineNo,
                              "unknown directive @" + word +
                                  " (known: @precision, @scratch, @launch, @problem, @expect)");
        }
    }
    if (c.launches.empty())
        return makeError(ErrorCode::Parse, "no @launch directive: a candidate needs at least one", path);

    // Scratch may be declared after the launch that uses it, so classify names at the end.
    for (auto &launch : c.launches)
        for (auto &arg : launch.args)
            if (arg.kind == LaunchArg::Kind::Tensor && scratchLines.count(arg.text))
                arg.kind = LaunchArg::Kind::Scratch;
    return c;
}

ExprEnv launchEnv(const Problem &problem)
{
    ExprEnv env;
    for (const auto &[name, value] : problem.constants)
        env.constants[name] = value;
    for (const auto &t : problem.inputs)
        env.shapes[t.name] = t.shape;
    for (const auto &t : problem.params)
        env.shapes[t.name] = t.shape;
    for (const auto &t : problem.outputs)
        env.shapes[t.name] = t.shape;
    return env;
}

namespace {

bool isTensor(const Problem &problem, const std::string &name)
{
    auto has = [&](const auto &list) {
        for (const auto &t : list)
            if (t.name == name)
                return true;
        return false;
    };
    return has(problem.inputs) || has(problem.params) || has(problem.outputs);
}

// Resolves a candidate's directives against a problem, one directive at a time; errors name the
// directive's line.
class Resolver {
public:
    Resolver(const Problem &problem, const std::string &path)
        : m_problem(problem), m_path(path), m_env(launchEnv(problem))
    {
    }

    Status scratch(const ScratchDecl &s, ResolvedPlan &plan)
    {
        if (isTensor(m_problem, s.name))
            return fail(s.line, "@scratch: '" + s.name + "' is the name of a problem tensor");
        if (m_problem.constants.count(s.name))
            return fail(s.line, "@scratch: '" + s.name + "' is the name of a problem constant");
        auto count = eval(s.countExpr, s.line, "@scratch " + s.name);
        if (!count)
            return count.error();
        if (*count <= 0)
            return fail(s.line, "@scratch: '" + s.name + "' has " + std::to_string(*count) + " elements; needs > 0");
        plan.scratch.push_back(ResolvedScratch{s.name, s.dtype, *count, s.zeroed});
        // Later expressions may use the buffer's size (stats.numel).
        m_env.shapes[s.name] = {*count};
        m_scratch.insert(s.name);
        return Ok{};
    }

    Result<ResolvedLaunch> launch(const LaunchDecl &l)
    {
        ResolvedLaunch r;
        r.kernel = l.kernel;
        if (auto st = dims(l, l.grid, r.grid, "grid"); !st)
            return st.error();
        if (auto st = dims(l, l.block, r.block, "block"); !st)
            return st.error();

        // The hardware's limits, checked here so the user sees the line instead of a launch error.
        std::int64_t threads = r.block[0] * r.block[1] * r.block[2];
        if (threads > 1024)
            return fail(l.line, "@launch: block(...) has " + std::to_string(threads) + " threads; at most 1024");
        if (r.block[2] > 64)
            return fail(l.line, "@launch: block(...).z is at most 64");
        if (r.grid[0] > std::numeric_limits<std::int32_t>::max())
            return fail(l.line, "@launch: grid(...).x is at most 2147483647");
        if (r.grid[1] > 65535 || r.grid[2] > 65535)
            return fail(l.line, "@launch: grid(...).y and .z are at most 65535");

        auto smem = eval(l.smem, l.line, "@launch: smem(...)");
        if (!smem)
            return smem.error();
        if (*smem < 0)
            return fail(l.line, "@launch: smem(...) is negative");
        r.smem = *smem;

        if (l.cluster) {
            std::array<std::int64_t, 3> cl{};
            if (auto st = dims(l, *l.cluster, cl, "cluster"); !st)
                return st.error();
            for (int i = 0; i < 3; ++i)
                if (r.grid[i] % cl[i] != 0)
                    return fail(l.line, "@launch: grid(...) must be a multiple of cluster(...) in every dimension");
            r.cluster = cl;
        }
        for (std::size_t i = 0; i < l.args.size(); ++i) {
            auto a = arg(l, i);
            if (!a)
                return a.error();
            r.args.push_back(*a);
        }
        return r;
    }

private:
    // Evaluates `text` for a directive on `line`; `what` names the field in the message.
    Result<std::int64_t> eval(const std::string &text, int line, const std::string &what) const
    {
        auto v = evalExpr(text, m_env, {});
        if (!v)
            return makeError(ErrorCode::Check, what + ": " + v.error().text(), at(m_path, line));
        return *v;
    }

    Error fail(int line, std::string msg) const
    {
        return makeError(ErrorCode::Check, std::move(msg), at(m_path, line));
    }

    Status dims(const LaunchDecl &l, const std::array<std::string, 3> &src, std::array<std::int64_t, 3> &dst,
                const char *what) const
    {
        static const char *axis[] = {"x", "y", "z"};
        for (int i = 0; i < 3; ++i) {
            auto v = eval(src[i], l.line, std::string("@launch: ") + what + "(...)." + axis[i]);
            if (!v)
                return v.error();
            if (*v <= 0)
                return fail(l.line,
                            std::string("@launch: ") + what + "(...)." + axis[i] + " is " + std::to_string(*v) +
                                "; must be positive");
            dst[i] = *v;
        }
        return Ok{};
    }

    Result<ResolvedArg> arg(const LaunchDecl &l, std::size_t i) const
    {
        const LaunchArg &a = l.args[i];
        std::string what = "@launch: argument " + std::to_string(i + 1);
        ResolvedArg ra{a.kind, {}, 0, 0};
        switch (a.kind) {
        case LaunchArg::Kind::Tensor:
        case LaunchArg::Kind::Scratch:
            if (m_scratch.count(a.text)) {
                ra.kind = LaunchArg::Kind::Scratch;
                ra.name = a.text;
            } else if (isTensor(m_problem, a.text)) {
                ra.kind = LaunchArg::Kind::Tensor;
                ra.name = a.text;
            } else if (auto it = m_problem.constants.find(a.text); it != m_problem.constants.end()) {
                // A bare constant name is an i32 expression like any other.
                ra.kind = LaunchArg::Kind::Int32;
                ra.ivalue = it->second;
            } else {
                return fail(l.line, what + ": '" + a.text + "' is not a tensor, scratch buffer or constant");
            }
            break;
        case LaunchArg::Kind::Int32:
        case LaunchArg::Kind::Int64: {
            auto v = eval(a.text, l.line, what);
            if (!v)
                return v.error();
            ra.ivalue = *v;
            break;
        }
        case LaunchArg::Kind::Float32: {
            auto v = parseNumber(a.text);
            if (!v)
                return fail(l.line, what + ": f32(" + a.text + ") takes a number");
            ra.fvalue = *v;
            break;
        }
        }
        if (ra.kind == LaunchArg::Kind::Int32 &&
            (ra.ivalue < std::numeric_limits<std::int32_t>::min() ||
             ra.ivalue > std::numeric_limits<std::int32_t>::max()))
            return fail(l.line,
                        what + ": " + std::to_string(ra.ivalue) + " does not fit in 32 bits; pass it as i64(...)");
        return ra;
    }

    const Problem &m_problem;
    const std::string &m_path;
    ExprEnv m_env;
    std::set<std::string> m_scratch;
};

} // namespace

Result<ResolvedPlan> resolveCandidate(const Candidate &c, const Problem &problem, const std::string &path)
{
    ResolvedPlan plan;
    Resolver resolver(problem, path);
    for (const auto &s : c.scratch)
        if (auto st = resolver.scratch(s, plan); !st)
            return st.error();
    for (const auto &l : c.launches) {
        auto r = resolver.launch(l);
        if (!r)
            return r.error();
        plan.launches.push_back(std::move(*r));
    }
    return plan;
}

Status checkCandidate(const Candidate &c, const Problem &problem, const std::string &path)
{
    // Resolving evaluates every expression, which is the check: a name that does not exist
    // cannot be evaluated.
    auto plan = resolveCandidate(c, problem, path);
    if (!plan)
        return plan.error();
    return Ok{};
}

std::vector<std::string> kernelNames(const Candidate &c)
{
    std::vector<std::string> names;
    for (const LaunchDecl &l : c.launches)
        if (std::find(names.begin(), names.end(), l.kernel) == names.end())
            names.push_back(l.kernel);
    return names;
}

} // namespace kf
