#pragma once
// Streamed answers (server-sent events) put back together into the body that the same request
// would have had without streaming, so that one parser reads both and the session keeps one
// readable document instead of thousands of events.
#include <string>
#include <vector>

namespace kf::llm {

struct SseEvent {
    std::string event; // "message" when the stream names none
    std::string data;  // the data lines joined by '\n'
};

// The events of an event stream; comments (": ping") and incomplete trailing events are skipped.
std::vector<SseEvent> parseEvents(const std::string &text);

bool isEventStream(const std::string &contentType);

// Chat Completions chunks -> a chat.completion: content, refusal and reasoning deltas joined,
// the last finish_reason, the usage chunk. A chunk holding "error" becomes {"error": ...}.
std::string openaiFromStream(const std::vector<SseEvent> &);

// Messages events -> a message: message_start's message, each content block with its deltas,
// message_delta's stop_reason and usage. An "error" event becomes the error body the API sends.
std::string anthropicFromStream(const std::vector<SseEvent> &);

} // namespace kf::llm
