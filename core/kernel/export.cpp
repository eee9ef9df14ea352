#include "kernel/export.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace kf {

namespace {

std::string identifier(const std::string &name)
{
    std::string out;
    for (char c : name)
        out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front())))
        out.insert(out.begin(), '_');
    return out;
}

const char *cType(DType t)
{
    switch (t) {
    case DType::F32:
        return "float";
    case DType::F16:
        return "__half";
    case DType::BF16:
        return "__nv_bfloat16";
    case DType::F64:
        return "double";
    case DType::I32:
        return "int";
    case DType::I64:
        return "long long";
    case DType::Bool:
        return "bool";
    }
    return "float";
}

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string today()
{
    std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

// Every line of `text` as a comment line with `indent` after the slashes.
void commentBlock(std::ostringstream &out, const std::string &text, const std::string &indent)
{
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
            line.pop_back();
        out << (line.empty() ? "//" : "//" + indent + line) << "\n";
    }
}

std::string floatLiteral(double v)
{
    float f = float(v);
    if (std::isnan(f))
        return "__builtin_nanf(\"\")";
    if (std::isinf(f))
        return f > 0 ? "__builtin_huge_valf()" : "(-__builtin_huge_valf())";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", double(f));
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos)
        s += ".0";
    return s + "f";
}

std::string int64Literal(std::int64_t v)
{
    if (v == std::numeric_limits<std::int64_t>::min())
        return "(-9223372036854775807LL - 1)";
    return std::to_string(v) + "LL";
}

std::string dim3Text(const std::array<std::int64_t, 3> &d)
{
    return "dim3(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

struct Param {
    const TensorSpec *spec;
    std::string role;  // input, param, output
    std::string cname; // the launcher's parameter name
};

// The launcher's parameters: the tensors' own names, unless one would clash with C++ or with the
// launcher's other names (a kernel called like a tensor would be shadowed inside the launcher).
struct Params {
    std::vector<Param> list;
    std::map<std::string, std::string> cnameOf; // tensor -> parameter
};

Params nameParams(const Problem &problem, const ResolvedPlan &plan)
{
    std::set<std::string> taken = {
        "scratch",  "stream",   "err",    "auto",     "bool",   "char",     "class",  "const",  "default", "delete",
        "do",       "double",   "else",   "enum",     "float",  "for",      "if",     "int",    "long",    "new",
        "operator", "private",  "public", "register", "return", "short",    "signed", "sizeof", "static",  "struct",
        "switch",   "template", "this",   "typedef",  "union",  "unsigned", "void",   "while"};
    for (const auto &l : plan.launches)
        taken.insert(l.kernel);
    Params out;
    auto add = [&](const auto &list, const char *role) {
        for (const auto &t : list) {
            std::string n = identifier(t.name);
            while (taken.count(n) || n.rfind("kf_", 0) == 0)
                n += "_";
            taken.insert(n);
            out.list.push_back(Param{&t, role, n});
            out.cnameOf[t.name] = n;
        }
    };
    add(problem.inputs, "input");
    add(problem.params, "param");
    add(problem.outputs, "output");
    return out;
}

// Scratch: one caller-allocated block, carved at 256-byte boundaries (cudaMalloc's alignment).
struct Slice {
    const ResolvedScratch *s;
    std::size_t offset, bytes;
};
struct ScratchLayout {
    std::vector<Slice> slices;
    std::size_t bytes = 0;
};

ScratchLayout layoutScratch(const ResolvedPlan &plan)
{
    ScratchLayout out;
    for (const auto &s : plan.scratch) {
        std::size_t bytes = std::size_t(s.count) * elementSize(s.dtype);
        out.slices.push_back(Slice{&s, out.bytes, bytes});
        out.bytes += (bytes + 255) / 256 * 256;
    }
    return out;
}

// What the file's reader needs first: what it computes, how it was found, how to build and call it.
void writeHeader(std::ostringstream &o, const Candidate &c, const Problem &problem, const ExportInfo &info,
                 const Params &params, const std::string &signature)
{
    const std::string rule(77, '=');
    const std::string precision = info.precision.empty() ? toString(c.precision) : info.precision;
    const std::string arch = info.arch.empty() ? "sm_90a" : info.arch;
    std::string compute = arch.rfind("sm_", 0) == 0 ? "compute_" + arch.substr(3) : arch;
    const std::string scratchBytesFn = exportScratchBytesName(problem);

    o << "// " << rule << "\n";
    o << "// " << problem.name << (problem.variant.empty() ? "" : " (variant " + problem.variant + ")")
      << ": a kernel found by KernelForge\n";
    if (!info.warning.empty()) {
        o << "//\n";
        commentBlock(o, "!!! " + info.warning, " ");
        o << "//\n";
    }
    if (!problem.description.empty())
        commentBlock(o, problem.description, " ");
    o << "//\n";
    o << "//   GPU:        " << (info.gpu.empty() ? "unknown" : info.gpu) << " (" << arch << ")\n";
    o << "//   precision:  " << precision << "\n";
    if (info.speedup) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2fx over eager PyTorch (its time / this file's time)", *info.speedup);
        o << "//   speedup:    " << buf << "\n";
    }
    if (info.maxError) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g", *info.maxError);
        o << "//   max error:  " << buf << "\n";
    }
    o << "//   date:       " << (info.date.empty() ? today() : info.date) << "\n";
    o << "//\n";
    o << "// Build:  nvcc -gencode=arch=" << compute << ",code=" << arch << " -c " << identifier(problem.name)
      << ".cu\n";
    o << "//\n";
    o << "// Host API (all pointers are device pointers to contiguous row-major tensors):\n";
    o << "//   size_t " << scratchBytesFn << "(void);\n";
    o << "//       Bytes of device scratch the launcher needs; 0 when it needs none.\n";
    o << "//   " << signature << ";\n";
    o << "//       Runs the launches below, in order, on `stream`. `scratch` points to\n";
    o << "//       " << scratchBytesFn << "() bytes that the caller allocates (cudaMalloc) and\n";
    o << "//       keeps; the launcher zero-fills it with cudaMemsetAsync before the launches.\n";
    o << "//       It may be null when the size is 0. Returns the first error, or cudaSuccess.\n";
    o << "//       Launches are asynchronous: synchronise the stream before reading outputs.\n";
    o << "//\n";
    o << "// Tensors (sizes are fixed):\n";
    std::size_t width = 0;
    for (const auto &p : params.list)
        width = std::max(width, p.cname.size());
    for (const auto &p : params.list)
        o << "//   " << p.cname << std::string(width - p.cname.size() + 2, ' ') << p.role
          << std::string(8 - p.role.size(), ' ') << toString(p.spec->dtype) << " " << shapeText(p.spec->shape) << "\n";
    o << "//\n";
    o << "// Reference (PyTorch):\n";
    commentBlock(o, problem.referenceSource, "   ");
    o << "// " << rule << "\n\n";
}

// The scratch pointers of the launcher, and the zero-fill of what is declared zeroed.
void writeScratch(std::ostringstream &o, const ScratchLayout &scratch)
{
    if (scratch.slices.empty()) {
        o << "    (void)scratch;\n";
        return;
    }
    o << "    // Scratch layout:";
    for (const auto &s : scratch.slices)
        o << " " << s.s->name << " " << toString(s.s->dtype) << "[" << s.s->count << "] at " << s.offset << ";";
    o << "\n";
    o << "    char* kf_base = static_cast<char*>(scratch);\n";
    for (const auto &s : scratch.slices)
        o << "    " << cType(s.s->dtype) << "* kf_s_" << s.s->name << " = reinterpret_cast<" << cType(s.s->dtype)
          << "*>(kf_base + " << s.offset << ");\n";
    for (const auto &s : scratch.slices) {
        if (!s.s->zeroed)
            continue; // declared uninitialized: the kernels write it before reading
        o << "    err = cudaMemsetAsync(kf_base + " << s.offset << ", 0, " << s.bytes << ", stream);\n";
        o << "    if (err != cudaSuccess) return err;\n";
    }
}

// One launch of the launcher: its scalar arguments, the argument array, and the launch itself
// (with a cluster, through cudaLaunchKernelExC).
void writeLaunch(std::ostringstream &o, const ResolvedLaunch &l, const LaunchDecl &decl, std::size_t index,
                 std::size_t count, const std::map<std::string, std::string> &cnameOf)
{
    std::string fn = "reinterpret_cast<const void*>(&" + l.kernel + ")";
    // Not "// @launch": the exported file must not read as a directive if loaded as a candidate.
    o << "\n    // launch " << index + 1 << " of " << count << ": " << l.kernel << " (candidate line " << decl.line
      << ")\n    {\n";
    std::vector<std::string> refs;
    for (std::size_t ai = 0; ai < l.args.size(); ++ai) {
        const ResolvedArg &a = l.args[ai];
        std::string var = "kf_a" + std::to_string(ai);
        switch (a.kind) {
        case LaunchArg::Kind::Tensor:
            refs.push_back("&" + cnameOf.at(a.name));
            break;
        case LaunchArg::Kind::Scratch:
            refs.push_back("&kf_s_" + a.name);
            break;
        case LaunchArg::Kind::Int32:
            o << "        int " << var << " = " << a.ivalue << ";\n";
            refs.push_back("&" + var);
            break;
        case LaunchArg::Kind::Int64:
            o << "        long long " << var << " = " << int64Literal(a.ivalue) << ";\n";
            refs.push_back("&" + var);
            break;
        case LaunchArg::Kind::Float32:
            o << "        float " << var << " = " << floatLiteral(a.fvalue) << ";\n";
            refs.push_back("&" + var);
            break;
        }
    }
    // Arguments go by address, as the engine passes them: each kernel reads its parameters
    // with its own pointer types (float4*, __half2*, ...) from the same bytes.
    if (refs.empty()) {
        o << "        void** kf_args = nullptr;\n";
    } else {
        o << "        void* kf_args[] = {";
        for (std::size_t i = 0; i < refs.size(); ++i)
            o << (i ? ", " : "") << "(void*)" << refs[i];
        o << "};\n";
    }
    if (l.smem > 48 * 1024) {
        o << "        err = cudaFuncSetAttribute(" << fn << ", cudaFuncAttributeMaxDynamicSharedMemorySize, " << l.smem
          << ");\n";
        o << "        if (err != cudaSuccess) return err;\n";
    }
    if (l.cluster) {
        const auto &cl = *l.cluster;
        if (cl[0] * cl[1] * cl[2] > 8) {
            o << "        err = cudaFuncSetAttribute(" << fn
              << ", cudaFuncAttributeNonPortableClusterSizeAllowed, 1);\n";
            o << "        if (err != cudaSuccess) return err;\n";
        }
        o << "        cudaLaunchAttribute kf_attr[1];\n";
        o << "        kf_attr[0].id = cudaLaunchAttributeClusterDimension;\n";
        o << "        kf_attr[0].val.clusterDim.x = " << cl[0] << ";\n";
        o << "        kf_attr[0].val.clusterDim.y = " << cl[1] << ";\n";
        o << "        kf_attr[0].val.clusterDim.z = " << cl[2] << ";\n";
        o << "        cudaLaunchConfig_t kf_config = {};\n";
        o << "        kf_config.gridDim = " << dim3Text(l.grid) << ";\n";
        o << "        kf_config.blockDim = " << dim3Text(l.block) << ";\n";
        o << "        kf_config.dynamicSmemBytes = " << l.smem << ";\n";
        o << "        kf_config.stream = stream;\n";
        o << "        kf_config.attrs = kf_attr;\n";
        o << "        kf_config.numAttrs = 1;\n";
        o << "        err = cudaLaunchKernelExC(&kf_config, " << fn << ", kf_args);\n";
    } else {
        o << "        err = cudaLaunchKernel(" << fn << ", " << dim3Text(l.grid) << ", " << dim3Text(l.block)
          << ", kf_args, " << l.smem << ", stream);\n";
    }
    o << "        if (err != cudaSuccess) return err;\n";
    o << "    }\n";
}

} // namespace

std::string exportLauncherName(const Problem &p) { return "kf_launch_" + identifier(p.name); }
std::string exportScratchBytesName(const Problem &p) { return "kf_" + identifier(p.name) + "_scratch_bytes"; }

Result<std::string> exportCandidate(const Candidate &c, const Problem &problem, const ExportInfo &info)
{
    auto planResult = resolveCandidate(c, problem);
    if (!planResult)
        return planResult.error();
    const ResolvedPlan &plan = *planResult;
    const Params params = nameParams(problem, plan);
    const ScratchLayout scratch = layoutScratch(plan);

    bool needHalf = false, needBf16 = false;
    for (const auto &p : params.list) {
        needHalf |= p.spec->dtype == DType::F16;
        needBf16 |= p.spec->dtype == DType::BF16;
    }
    for (const auto &s : plan.scratch) {
        needHalf |= s.dtype == DType::F16;
        needBf16 |= s.dtype == DType::BF16;
    }

    std::string signature = "cudaError_t " + exportLauncherName(problem) + "(";
    for (const auto &p : params.list)
        signature += std::string(p.role == "output" ? "" : "const ") + cType(p.spec->dtype) + "* " + p.cname + ", ";
    signature += "void* scratch, cudaStream_t stream)";

    std::ostringstream o;
    writeHeader(o, c, problem, info, params, signature);
    o << "#include <cuda_runtime.h>\n";
    if (needHalf)
        o << "#include <cuda_fp16.h>\n";
    if (needBf16)
        o << "#include <cuda_bf16.h>\n";
    o << "#include <cstddef>\n\n";

    o << "// ---- kernels: the candidate as evaluated (its @ directives are comments) ----\n\n";
    o << c.source;
    if (!c.source.empty() && c.source.back() != '\n')
        o << "\n";
    o << "\n// ---- host launcher ----\n\n";

    o << "extern \"C\" size_t " << exportScratchBytesName(problem) << "(void)\n{\n    return " << scratch.bytes
      << ";\n}\n\n";
    o << "extern \"C\" " << signature << "\n{\n";
    o << "    cudaError_t err = cudaSuccess;\n";
    writeScratch(o, scratch);
    for (std::size_t li = 0; li < plan.launches.size(); ++li)
        writeLaunch(o, plan.launches[li], c.launches[li], li, plan.launches.size(), params.cnameOf);
    o << "    return err;\n}\n";
    return o.str();
}

} // namespace kf
