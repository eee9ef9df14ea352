#include "gen/builtin/templates.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace fs = std::filesystem;

namespace kf::builtin {

namespace {

void addDir(std::vector<std::string> &out, const fs::path &dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return;
    std::string s = fs::weakly_canonical(dir, ec).string();
    if (ec)
        s = dir.string();
    for (const auto &o : out)
        if (o == s)
            return;
    out.push_back(s);
}

bool truthy(const std::string &v) { return !v.empty() && v != "0" && v != "false"; }

// Lines that hold only a section tag ("  {{#LOG}}") lose their indentation and line break, so a
// section leaves no blank line behind.
std::string joinTagLines(const std::string &text)
{
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        const bool last = end == std::string::npos;
        std::string line = text.substr(start, last ? std::string::npos : end - start);
        std::size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r");
        std::string t = a == std::string::npos ? std::string() : line.substr(a, b - a + 1);
        bool tagOnly = t.size() > 5 && t.compare(0, 2, "{{") == 0 && (t[2] == '#' || t[2] == '^' || t[2] == '/') &&
            t.compare(t.size() - 2, 2, "}}") == 0 && t.find("{{", 2) == std::string::npos;
        out += tagOnly ? t : line + (last ? "" : "\n");
        if (last)
            break;
        start = end + 1;
    }
    return out;
}

// Lines of code with a trailing comment, in a run of such lines, get their comments lined up
// (the placeholders' values have other widths than the placeholders).
std::string alignTrailingComments(const std::string &text)
{
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (true) {
        std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    // Where a line's trailing comment starts, or npos when it has none after code.
    auto commentAt = [](const std::string &l) -> std::size_t {
        std::size_t c = l.find(" //");
        if (c == std::string::npos || l.find_first_not_of(' ') >= c)
            return std::string::npos;
        return c;
    };
    constexpr std::size_t kLongest = 64; // longer code keeps its comment where it is
    for (std::size_t i = 0; i < lines.size();) {
        std::size_t j = i;
        std::size_t width = 0;
        while (j < lines.size() && commentAt(lines[j]) != std::string::npos) {
            std::size_t code = lines[j].find_last_not_of(' ', commentAt(lines[j])) + 1;
            if (code <= kLongest)
                width = std::max(width, code);
            ++j;
        }
        for (std::size_t k = i; k < j && j - i > 1; ++k) {
            std::string &l = lines[k];
            std::size_t c = commentAt(l), code = l.find_last_not_of(' ', c) + 1;
            if (code > kLongest)
                continue;
            std::string comment = l.substr(l.find("//", c));
            l = l.substr(0, code) + std::string(width - code + 1, ' ') + comment;
        }
        i = j > i ? j : i + 1;
    }
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i)
        out += (i ? "\n" : "") + lines[i];
    return out;
}

// A line holding only {{>NAME}} is replaced by parts/NAME.cuh of the same folder: code that
// several templates share (the Hopper pipeline helpers, the wgmma instructions) lives once. Parts
// may include parts (a reduction's first pass includes the reduction tree), a few levels deep.
Result<std::string> includeParts(const std::string &text, const fs::path &folder, const std::string &id, int depth = 0)
{
    if (depth > 4)
        return makeError(ErrorCode::Io, "template parts include each other more than 4 levels deep", id + ".cu");
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        const bool last = end == std::string::npos;
        const std::string line = text.substr(start, last ? std::string::npos : end - start + 1);
        std::size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r\n");
        const std::string t = a == std::string::npos ? std::string() : line.substr(a, b - a + 1);
        if (t.size() > 5 && t.compare(0, 3, "{{>") == 0 && t.compare(t.size() - 2, 2, "}}") == 0) {
            const std::string name = t.substr(3, t.size() - 5);
            const fs::path file = folder / "parts" / (name + ".cuh");
            std::ifstream in(file, std::ios::binary);
            if (!in)
                return makeError(ErrorCode::Io, "the template part " + file.string() + " was not found", id + ".cu");
            std::ostringstream ss;
            ss << in.rdbuf();
            auto part = includeParts(ss.str(), folder, id, depth + 1);
            if (!part)
                return part.error();
            out += *part;
        } else {
            out += line;
        }
        if (last)
            break;
        start = end + 1;
    }
    return out;
}

} // namespace

std::vector<std::string> templateSearchPath()
{
    std::vector<std::string> out;
    if (const char *env = std::getenv("KERNELFORGE_TEMPLATES")) {
        std::string s = env;
        std::size_t start = 0;
        while (start <= s.size()) {
            std::size_t colon = s.find(':', start);
            std::string part = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
            if (!part.empty())
                addDir(out, part);
            if (colon == std::string::npos)
                break;
            start = colon + 1;
        }
    }
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        addDir(out, exe.parent_path() / ".." / "share" / "kernelforge" / "templates");
#ifdef KF_SOURCE_TEMPLATES_DIR
    addDir(out, fs::path(KF_SOURCE_TEMPLATES_DIR));
#endif
    fs::path dir = fs::current_path(ec);
    while (!ec && !dir.empty()) {
        std::error_code missing;
        if (fs::is_directory(dir / "resources" / "templates", missing)) {
            addDir(out, dir / "resources" / "templates");
            break;
        }
        if (dir == dir.parent_path())
            break;
        dir = dir.parent_path();
    }
    return out;
}

Result<std::string> loadTemplate(const std::string &id)
{
    static std::mutex mutex;
    static std::map<std::string, std::string> cache;
    std::lock_guard lock(mutex);
    if (auto it = cache.find(id); it != cache.end())
        return it->second;
    const auto folders = templateSearchPath();
    for (const auto &folder : folders) {
        fs::path file = fs::path(folder) / (id + ".cu");
        std::ifstream in(file, std::ios::binary);
        if (!in)
            continue;
        std::ostringstream ss;
        ss << in.rdbuf();
        auto text = includeParts(ss.str(), folder, id);
        if (!text.ok())
            return text.error();
        return cache[id] = *text;
    }
    std::string searched;
    for (const auto &f : folders)
        searched += (searched.empty() ? "" : ", ") + f;
    return makeError(ErrorCode::Io,
                     "the CUDA template " + id +
                         ".cu was not found (searched: " + (searched.empty() ? "no template folder exists" : searched) +
                         "); set KERNELFORGE_TEMPLATES to the resources/templates folder");
}

Result<std::string> renderTemplate(const std::string &source, const TemplateValues &values, const std::string &where)
{
    const std::string text = joinTagLines(source);
    std::string out;
    std::vector<std::pair<std::string, bool>> sections; // name, kept
    auto emitting = [&] {
        for (const auto &s : sections)
            if (!s.second)
                return false;
        return true;
    };
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t open = text.find("{{", pos);
        if (open == std::string::npos) {
            if (emitting())
                out.append(text, pos, std::string::npos);
            break;
        }
        if (emitting())
            out.append(text, pos, open - pos);
        std::size_t close = text.find("}}", open + 2);
        if (close == std::string::npos)
            return makeError(ErrorCode::Template, "unclosed {{ in the template", where);
        std::string tag = text.substr(open + 2, close - open - 2);
        pos = close + 2;
        char kind = tag.empty() ? ' ' : tag[0];
        std::string name = (kind == '#' || kind == '^' || kind == '/') ? tag.substr(1) : tag;
        auto it = values.find(name);
        if (it == values.end())
            return makeError(ErrorCode::Template, "no value for {{" + tag + "}}", where);
        if (kind == '#' || kind == '^') {
            sections.emplace_back(name, truthy(it->second) == (kind == '#'));
        } else if (kind == '/') {
            if (sections.empty() || sections.back().first != name)
                return makeError(ErrorCode::Template, "{{/" + name + "}} closes no open section", where);
            sections.pop_back();
        } else if (emitting()) {
            out += it->second;
        }
    }
    if (!sections.empty())
        return makeError(ErrorCode::Template, "section {{#" + sections.back().first + "}} is not closed", where);
    return alignTrailingComments(out);
}

} // namespace kf::builtin
