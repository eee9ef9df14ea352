#pragma once
// A search session on disk: one SQLite file (.kfsession) holding the problem, the settings and the
// search tree, written as each result arrives (docs/session-format.md).
//
// The store knows rows, not search semantics: a node's result is kept as the EvalResult JSON text
// the caller produced, so the file format does not change when EvalResult grows a field. Every
// write is its own transaction (or a caller's transaction(), see below), so a crash loses nothing
// that a call had already returned from. Nothing here throws; bad or foreign files give an Error
// naming the file and what is wrong. One SessionStore is used from one thread at a time; several
// processes may open the same file (one writer, any number of readers).
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

// Written to PRAGMA user_version. Bump it when the schema changes; open() refuses newer files.
// Version 2 added the exchanges of LLM generators, version 3 their stop reason and ending; older
// files are migrated on a writable open and read as they are when opened read-only.
inline constexpr int kSessionFormatVersion = 3;
// The value of meta "format": what tells a session apart from any other SQLite file.
inline constexpr std::string_view kSessionFormatName = "kernelforge-session";
inline constexpr std::string_view kSessionExtension = ".kfsession";

// Keys of the meta table that the store itself reads or writes.
namespace session_meta {
inline constexpr std::string_view Format = "format";
inline constexpr std::string_view Created = "created";
inline constexpr std::string_view Writer = "writer";
inline constexpr std::string_view ProblemName = "problem_name";
inline constexpr std::string_view ProblemText = "problem_text";
inline constexpr std::string_view ProblemVariant = "problem_variant";
inline constexpr std::string_view Generator = "generator";
inline constexpr std::string_view Settings = "settings"; // JSON object
inline constexpr std::string_view Gpu = "gpu";
inline constexpr std::string_view Baseline = "baseline";                    // JSON, absent until measured
inline constexpr std::string_view GeneratorSettings = "generator_settings"; // JSON: the generator's own (no keys)
inline constexpr std::string_view Budget = "budget"; // JSON: where the last search run's time went (docs/search.md)
} // namespace session_meta

enum class NodeKind { Root, Round, Idea, Candidate };
std::string toString(NodeKind); // "root", "round", "idea", "candidate"
std::optional<NodeKind> parseNodeKind(std::string_view);

// One row of `nodes`. The tree is root -> rounds -> ideas -> candidates; a hand-edited candidate
// is a child of the candidate it was edited from.
struct NodeRecord {
    std::int64_t id = 0;                // assigned by addNode()
    std::optional<std::int64_t> parent; // none only for the root
    NodeKind kind = NodeKind::Candidate;
    int round = 0;
    std::string title;
    std::string text;   // idea text or candidate source
    std::string status; // verdict string ("queued", "correct", ...), may be empty
    std::string reason;
    std::optional<std::string> resultJson; // EvalResult as JSON text; none until evaluated
    bool edited = false;                   // written by hand in the editor
    std::string created;                   // ISO 8601 UTC; set by the store when empty
    std::string updated;                   // ISO 8601 UTC; set by the store on every write

    bool operator==(const NodeRecord &) const = default;
};

struct LogRecord {
    std::int64_t id = 0;
    std::optional<std::int64_t> node; // none for session-wide lines
    std::string time;
    std::string text;

    bool operator==(const LogRecord &) const = default;
};

struct EventRecord {
    std::int64_t id = 0; // increasing; a reader tails a live file with events(lastId)
    std::string time;
    std::string kind;
    nlohmann::json data;

    bool operator==(const EventRecord &) const = default;
};

// One request to a language model and its answer (table `exchanges`), linked to the nodes it
// produced or was made for (table `exchange_nodes`): the ideas an answer proposed, the candidate
// a draft became, the idea whose implementation failed.
struct ExchangeRecord {
    std::int64_t id = 0; // assigned by addExchange()
    int round = 0;
    std::string purpose; // "ideas", "implement", "repair"
    std::string generator, model, endpoint;
    std::string request;    // the request body as sent
    std::string prompt;     // the user message
    std::string response;   // the raw response body
    std::string answer;     // the answer's text
    std::string reasoning;  // the model's visible thinking, if any
    std::string error;      // empty: the answer was usable
    std::string stopReason; // why the model stopped, as the server said it (format 3; "" before)
    std::string ending;     // "complete", "truncated", "refused"; "" when no answer came (format 3)
    int httpStatus = 0;
    int attempts = 0;
    std::int64_t promptTokens = 0, completionTokens = 0, reasoningTokens = 0;
    double cost = 0;
    double latencyMs = 0;
    std::string time;                // ISO 8601 UTC; set by the store when empty
    std::vector<std::int64_t> nodes; // linked nodes, ascending (filled when read)

    bool operator==(const ExchangeRecord &) const = default;
};

// What a session is about; written once by create(). Settings must not hold API keys.
struct SessionMeta {
    std::string problemName;
    std::string problemText;    // the whole problem file: a session stands on its own
    std::string problemVariant; // "" or the size variant ("small")
    std::string generator;
    nlohmann::json settings = nlohmann::json::object();
    std::string gpuName;
    std::optional<nlohmann::json> baseline;
    std::string created; // set by create() when empty
    std::string writer;  // program and version, e.g. "KernelForge 0.1.0"

    bool operator==(const SessionMeta &) const = default;
};

class SessionStore {
public:
    // A new session file. Fails with "exists" when the file is there, unless `overwrite`.
    static Result<SessionStore> create(const std::string &path, const SessionMeta &meta, bool overwrite = false);
    // An existing session. Read-only opens never write to the file or its folder (a WAL file in a
    // folder where no -shm can be made is opened as immutable); a writable open switches to WAL.
    static Result<SessionStore> open(const std::string &path, bool readOnly = false);
    // Writes a compact copy of `src` with journal_mode=DELETE, so it opens read-only anywhere
    // (WAL needs a writable folder). Used for the example sessions that ship with the app.
    static Status exportReadOnlyCopy(const std::string &src, const std::string &dst, bool overwrite = false);

    SessionStore(SessionStore &&) noexcept;
    SessionStore &operator=(SessionStore &&) noexcept;
    SessionStore(const SessionStore &) = delete;
    SessionStore &operator=(const SessionStore &) = delete;
    ~SessionStore();

    const std::string &path() const;
    bool readOnly() const;
    int formatVersion() const; // the file's user_version
    // Closes now and reports what closing said; the destructor closes silently.
    Status close();

    // Meta: a key/value table of text. "format" is the store's own and cannot be set.
    Status setMeta(std::string_view key, std::string_view value);
    Status setMetaJson(std::string_view key, const nlohmann::json &value);
    Result<std::string> meta(std::string_view key) const; // "not-found" when absent
    Result<nlohmann::json> metaJson(std::string_view key) const;
    Result<std::map<std::string, std::string>> allMeta() const;
    Result<SessionMeta> sessionMeta() const;
    Status setBaseline(const nlohmann::json &baseline) { return setMetaJson(session_meta::Baseline, baseline); }

    // Nodes. addNode ignores record.id and returns the new one; the parent must exist.
    Result<std::int64_t> addNode(const NodeRecord &record);
    Status updateNode(std::int64_t id, std::string_view status, std::string_view reason,
                      const std::optional<std::string> &resultJson);
    Result<NodeRecord> node(std::int64_t id) const;                  // "not-found" when absent
    Result<std::vector<NodeRecord>> children(std::int64_t id) const; // ordered by id
    Result<std::vector<NodeRecord>> allNodes() const;                // ordered by id
    Result<std::optional<NodeRecord>> root() const;

    // Logs: per node, or session-wide when `node` is empty.
    Result<std::int64_t> appendLog(std::optional<std::int64_t> node, std::string_view text);
    Result<std::vector<LogRecord>> logs(std::int64_t node) const;
    Result<std::vector<LogRecord>> allLogs() const;

    // Events: what happened, in order ("round started", "stopped: budget"), as JSON.
    Result<std::int64_t> appendEvent(std::string_view kind, const nlohmann::json &data);
    Result<std::vector<EventRecord>> events(std::int64_t afterId = 0) const;

    // Exchanges with language models. addExchange ignores record.id and record.nodes and links
    // the new row to `nodes`; linkExchange adds one more link (linking twice is harmless). The
    // reads return nothing, not an error, for a version 1 file opened read-only (it has no table).
    Result<std::int64_t> addExchange(const ExchangeRecord &record, const std::vector<std::int64_t> &nodes = {});
    Status linkExchange(std::int64_t exchange, std::int64_t node);
    Result<ExchangeRecord> exchange(std::int64_t id) const;                 // "not-found" when absent
    Result<std::vector<ExchangeRecord>> exchanges(std::int64_t node) const; // those linked to a node, by id
    Result<std::vector<ExchangeRecord>> allExchanges() const;               // ordered by id

    // Runs `body` as one transaction: all of its writes land, or none do (say, a candidate node
    // together with its logs). It commits when body returns ok and rolls back otherwise.
    // Nested calls become savepoints.
    Status transaction(const std::function<Status()> &body);

    // The same as the static exportReadOnlyCopy, from this open store.
    Status saveReadOnlyCopy(const std::string &dst, bool overwrite = false) const;

private:
    struct Impl;
    explicit SessionStore(std::unique_ptr<Impl>);
    std::optional<Error> unusable(bool forWrite) const; // closed, or read-only for a write
    std::unique_ptr<Impl> d;
};

// Current time as ISO 8601 UTC with milliseconds ("2025-06-01T12:34:56.789Z").
std::string isoTimeNow();

} // namespace kf
