#include "gen/llm/stream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kf::llm {

namespace {

using nlohmann::json;

void append(json &object, const char *key, const json &piece)
{
    if (!piece.is_string())
        return;
    if (!object.contains(key) || !object[key].is_string())
        object[key] = "";
    object[key] = object[key].get<std::string>() + piece.get<std::string>();
}

std::string dump(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

} // namespace

std::vector<SseEvent> parseEvents(const std::string &text)
{
    std::vector<SseEvent> out;
    std::istringstream in(text);
    std::string line;
    SseEvent current;
    bool hasData = false;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty()) { // an empty line ends an event
            if (hasData) {
                if (current.event.empty())
                    current.event = "message";
                out.push_back(std::move(current));
            }
            current = SseEvent{};
            hasData = false;
            continue;
        }
        if (line.front() == ':')
            continue; // a comment: keep-alive
        const auto colon = line.find(':');
        const std::string field = line.substr(0, colon);
        std::string value = colon == std::string::npos ? std::string() : line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ')
            value.erase(0, 1);
        if (field == "event") {
            current.event = value;
        } else if (field == "data") {
            current.data += (hasData ? "\n" : "") + value;
            hasData = true;
        }
    }
    return out;
}

bool isEventStream(const std::string &contentType)
{
    std::string t = contentType;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return t.rfind("text/event-stream", 0) == 0;
}

std::string openaiFromStream(const std::vector<SseEvent> &events)
{
    json out = {{"object", "chat.completion"}, {"choices", json::array()}};
    json message = {{"role", "assistant"}, {"content", nullptr}};
    json finish = nullptr;
    bool anyChoice = false;
    for (const SseEvent &e : events) {
        if (e.data == "[DONE]")
            break;
        const json chunk = json::parse(e.data, nullptr, false);
        if (chunk.is_discarded() || !chunk.is_object())
            continue;
        if (chunk.contains("error"))
            return dump({{"error", chunk["error"]}});
        for (const char *k : {"id", "model", "created"})
            if (chunk.contains(k) && !out.contains(k))
                out[k] = chunk[k];
        if (chunk.contains("usage") && chunk["usage"].is_object())
            out["usage"] = chunk["usage"];
        if (!chunk.contains("choices") || !chunk["choices"].is_array())
            continue;
        for (const json &choice : chunk["choices"]) {
            if (!choice.is_object() || choice.value("index", 0) != 0)
                continue; // one answer is asked for
            anyChoice = true;
            if (choice.contains("delta") && choice["delta"].is_object()) {
                const json &d = choice["delta"];
                for (const char *k : {"content", "refusal", "reasoning_content", "reasoning"})
                    if (d.contains(k))
                        append(message, k, d[k]);
            }
            if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
                finish = choice["finish_reason"];
        }
    }
    if (anyChoice)
        out["choices"].push_back({{"index", 0}, {"message", message}, {"finish_reason", finish}});
    return dump(out);
}

std::string anthropicFromStream(const std::vector<SseEvent> &events)
{
    json message = {{"type", "message"}, {"role", "assistant"}};
    json blocks = json::array();
    bool started = false;
    for (const SseEvent &e : events) {
        const json d = json::parse(e.data, nullptr, false);
        if (d.is_discarded() || !d.is_object())
            continue;
        const std::string type = d.value("type", e.event);
        if (type == "error")
            return dump({{"type", "error"}, {"error", d.value("error", json::object())}});
        if (type == "message_start" && d.contains("message") && d["message"].is_object()) {
            message = d["message"];
            started = true;
        } else if (type == "content_block_start" && d.contains("content_block")) {
            const std::size_t i = d.value("index", blocks.size());
            while (blocks.size() <= i)
                blocks.push_back(json::object());
            blocks[i] = d["content_block"];
        } else if (type == "content_block_delta" && d.contains("delta") && d["delta"].is_object()) {
            const std::size_t i = d.value("index", std::size_t(0));
            while (blocks.size() <= i)
                blocks.push_back(json::object());
            const json &delta = d["delta"];
            for (const char *k : {"text", "thinking", "signature", "partial_json"})
                if (delta.contains(k))
                    append(blocks[i], k, delta[k]);
        } else if (type == "message_delta") {
            if (d.contains("delta") && d["delta"].is_object())
                for (const auto &[k, v] : d["delta"].items())
                    message[k] = v;
            if (d.contains("usage") && d["usage"].is_object()) {
                if (!message.contains("usage") || !message["usage"].is_object())
                    message["usage"] = json::object();
                for (const auto &[k, v] : d["usage"].items()) // the final counts replace the first ones
                    if (!v.is_null())
                        message["usage"][k] = v;
            }
        }
    }
    if (!started && blocks.empty())
        return dump(json::object()); // nothing of a message arrived
    message["content"] = blocks;
    return dump(message);
}

} // namespace kf::llm
