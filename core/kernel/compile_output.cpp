#include "kernel/compile_output.h"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace kf {

std::string defaultCompileCacheDir()
{
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return (fs::path(xdg) / "kernelforge" / "nvrtc").string();
    if (const char *home = std::getenv("HOME"); home && *home)
        return (fs::path(home) / ".cache" / "kernelforge" / "nvrtc").string();
    return (fs::temp_directory_path() / "kernelforge-nvrtc").string();
}

std::vector<Diagnostic> diagnosticsFromLog(const std::string &log)
{
    // "candidate.cu(12): error: ..." / "file.h(3): warning #177-D: ..." / "... catastrophic error: ..."
    static const std::regex source(R"(^(.+)\((\d+)\): (catastrophic error|error|warning)( #[\w-]+)?: (.*)$)");
    // "ptxas error   : Entry function 'k' uses too much shared data ..."
    // "ptxas application ptx input, line 29; error   : Instruction 'setmaxnreg.inc' not supported ..."
    static const std::regex ptxas(R"(^ptxas(?: application ptx input, line \d+;)? *(error|fatal|warning) *: (.*)$)");
    static const std::regex nameExpr(R"(Input name expression was: \"\s*(.*?)\s*\")");
    std::vector<Diagnostic> out;
    std::istringstream in(log);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (std::regex_match(line, m, source)) {
            std::string file = m[1], severity = m[3] == "warning" ? "warning" : "error";
            if (file == "__nv_name_map") {
                // A name in @launch that is no kernel of the source: NVRTC reports it against its
                // internal name table; say it in the user's terms instead.
                std::smatch n;
                std::string msg = m[5];
                if (!std::regex_search(msg, n, nameExpr))
                    continue;
                std::string name = n[1];
                // "cannot form address of a non-__global__ function", "must form address of a
                // __global__ function or ...": the name exists but is no kernel.
                if (msg.find("__global__") != std::string::npos)
                    out.push_back(
                        Diagnostic{0, "error", "'" + name + "' named in @launch is not a __global__ function"});
                else
                    out.push_back(Diagnostic{0, "error", "kernel '" + name + "' named in @launch is not defined"});
                continue;
            }
            Diagnostic d;
            d.severity = severity;
            if (file == kCompiledProgramName) {
                d.line = std::stoi(m[2]);
                d.message = m[5];
            } else {
                d.message = file + "(" + std::string(m[2]) + "): " + std::string(m[5]);
            }
            out.push_back(std::move(d));
        } else if (std::regex_match(line, m, ptxas)) {
            out.push_back(Diagnostic{0, m[1] == "warning" ? "warning" : "error", "ptxas: " + std::string(m[2])});
        }
    }
    return out;
}

} // namespace kf
