#include "gen/llm/parse.h"

#include "kernel/candidate.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <sstream>

namespace kf::llm {

namespace {

using nlohmann::json;

const std::string kCutOff = " (the answer was cut off at the token limit; raise max_tokens)";

struct Fence {
    std::string lang;
    std::string body;
    bool closed = false;
};

// Fenced blocks (``` or ~~~ at the start of a line, any indentation), in order.
std::vector<Fence> fences(const std::string &text)
{
    std::vector<Fence> out;
    std::istringstream in(text);
    std::string line;
    std::optional<Fence> open;
    std::string marker;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        const std::size_t lead = line.find_first_not_of(" \t");
        const std::string t = lead == std::string::npos ? std::string() : line.substr(lead);
        if (!open) {
            if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
                marker = t.substr(0, 3);
                open = Fence{};
                std::string lang = t.substr(3);
                lang.erase(0, lang.find_first_not_of(" \t"));
                open->lang = lang.substr(0, lang.find_first_of(" \t{"));
            }
            continue;
        }
        if (t.rfind(marker, 0) == 0 && t.find_first_not_of(marker[0]) == std::string::npos) {
            open->closed = true;
            out.push_back(std::move(*open));
            open.reset();
            continue;
        }
        open->body += line + "\n";
    }
    if (open)
        out.push_back(std::move(*open));
    return out;
}

// The end of the balanced JSON value starting at `start` ('{' or '['), strings respected.
std::optional<std::size_t> balancedEnd(const std::string &s, std::size_t start)
{
    int depth = 0;
    bool inString = false, escaped = false;
    for (std::size_t i = start; i < s.size(); ++i) {
        const char c = s[i];
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"')
            inString = true;
        else if (c == '{' || c == '[')
            ++depth;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return i;
        }
    }
    return std::nullopt;
}

std::string field(const json &o, std::initializer_list<const char *> keys)
{
    for (const char *k : keys) {
        auto it = o.find(k);
        if (it == o.end() || it->is_null())
            continue;
        if (it->is_string())
            return it->get<std::string>();
        if (it->is_number())
            return it->dump();
    }
    return {};
}

std::int64_t kernelRef(const json &o)
{
    for (const char *k : {"builds_on", "parent", "base_kernel"}) {
        auto it = o.find(k);
        if (it == o.end())
            continue;
        if (it->is_null())
            return 0;
        if (it->is_number_integer())
            return it->get<std::int64_t>();
        if (it->is_string()) {
            std::string s = it->get<std::string>();
            const std::size_t digit = s.find_first_of("0123456789");
            if (digit == std::string::npos)
                return 0; // "reference", "none"
            return std::strtoll(s.c_str() + digit, nullptr, 10);
        }
    }
    return -1;
}

// The ideas in one JSON value, or none when it is not a list of ideas. `single` takes one idea
// object as a list of one.
std::optional<std::vector<ParsedIdea>> ideasIn(const json &j, bool single)
{
    const json *list = nullptr;
    if (j.is_array())
        list = &j;
    else if (j.is_object() && j.contains("ideas") && j["ideas"].is_array())
        list = &j["ideas"];
    json one;
    if (!list && single && j.is_object() && j.contains("title")) {
        one = json::array({j});
        list = &one;
    }
    if (!list)
        return std::nullopt;
    std::vector<ParsedIdea> out;
    for (const auto &o : *list) {
        if (!o.is_object())
            continue;
        ParsedIdea p;
        p.title = field(o, {"title", "name"});
        p.description = field(o, {"description", "idea", "text", "details", "plan"});
        p.rationale = field(o, {"rationale", "why", "reason", "motivation"});
        p.expectedGain = field(o, {"expected_gain", "expectedGain", "gain", "expected_speedup"});
        p.buildsOn = kernelRef(o);
        if (p.title.empty())
            p.title = p.description.substr(0, 60);
        if (!p.title.empty())
            out.push_back(std::move(p));
    }
    if (out.empty())
        return std::nullopt;
    return out;
}

std::optional<std::vector<ParsedIdea>> tryParse(const std::string &text, bool single)
{
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded())
        return std::nullopt;
    return ideasIn(j, single);
}

} // namespace

Result<std::vector<ParsedIdea>> parseIdeas(const std::string &answer, bool truncated)
{
    // In an answer that was cut off, a lone idea object is most likely the first item of a list
    // whose rest was lost: only a list that closed before the cut counts as complete.
    const bool single = !truncated;
    if (auto whole = tryParse(answer, single))
        return *whole;
    for (const Fence &f : fences(answer))
        if (auto in = tryParse(f.body, single))
            return *in;
    // JSON inside prose: the first balanced value that is a list of ideas.
    for (std::size_t i = 0; i < answer.size(); ++i) {
        if (answer[i] != '{' && answer[i] != '[')
            continue;
        auto end = balancedEnd(answer, i);
        if (!end)
            continue;
        if (auto in = tryParse(answer.substr(i, *end - i + 1), single))
            return *in;
    }
    if (answer.find_first_not_of(" \t\r\n") == std::string::npos)
        return makeError(ErrorCode::LlmAnswer, std::string("the answer is empty") + (truncated ? kCutOff : ""));
    if (truncated)
        return makeError(ErrorCode::LlmAnswer, "the list of ideas is incomplete" + kCutOff);
    return makeError(ErrorCode::LlmAnswer, "the answer holds no JSON list of ideas (objects with a \"title\")");
}

Result<std::string> extractCandidate(const std::string &answer, bool truncated)
{
    const std::vector<Fence> blocks = fences(answer);
    const Fence *chosen = nullptr;
    for (const Fence &f : blocks)
        if (f.body.find("@launch") != std::string::npos) {
            chosen = &f;
            break;
        }
    if (!chosen)
        for (const Fence &f : blocks)
            if (f.body.find("__global__") != std::string::npos) {
                chosen = &f;
                break;
            }
    std::string code;
    if (chosen) {
        // An unclosed block is the answer running out of tokens, unless the answer ended normally
        // (some models leave off the closing fence).
        if (!chosen->closed && truncated)
            return makeError(ErrorCode::LlmAnswer, "the code block is incomplete" + kCutOff);
        code = chosen->body;
    } else if (blocks.empty() && answer.find("@launch") != std::string::npos &&
               answer.find("__global__") != std::string::npos) {
        code = answer; // the whole answer is a candidate file
    } else {
        if (answer.find_first_not_of(" \t\r\n") == std::string::npos)
            return makeError(ErrorCode::LlmAnswer, std::string("the answer is empty") + (truncated ? kCutOff : ""));
        return makeError(ErrorCode::LlmAnswer,
                         std::string("the answer has no ```cuda code block with a kernel") +
                             (truncated ? kCutOff : ""));
    }
    auto parsed = parseCandidate(code);
    if (!parsed)
        return makeError(ErrorCode::LlmAnswer, "the code's launch directives do not parse: " + parsed.error().text());
    if (parsed->launches.empty())
        return makeError(ErrorCode::LlmAnswer, "the code has no // @launch directive, so the engine cannot run it");
    if (truncated && code.find("__global__") == std::string::npos)
        return makeError(ErrorCode::LlmAnswer, "the code has no kernel" + kCutOff);
    return code;
}

} // namespace kf::llm
