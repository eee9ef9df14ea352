// Requests to language models and their answers, linked to the nodes they were for or produced.
#include "store/db.h"
#include "store/schema.h"

namespace kf {

using namespace store;

Result<std::int64_t> SessionStore::addExchange(const ExchangeRecord &r, const std::vector<std::int64_t> &nodes)
{
    if (auto e = unusable(true))
        return *e;
    std::int64_t id = 0;
    Status done = transaction([&]() -> Status {
        const auto &t = kExchanges;
        Stmt s(d->db.get(), insertSql(t));
        s.bind(param(t, "round"), std::int64_t(r.round))
            .bind(param(t, "purpose"), r.purpose)
            .bind(param(t, "generator"), r.generator)
            .bind(param(t, "model"), r.model)
            .bind(param(t, "endpoint"), r.endpoint)
            .bind(param(t, "request"), r.request)
            .bind(param(t, "prompt"), r.prompt)
            .bind(param(t, "response"), r.response)
            .bind(param(t, "answer"), r.answer)
            .bind(param(t, "reasoning"), r.reasoning)
            .bind(param(t, "error"), r.error)
            .bind(param(t, "http_status"), std::int64_t(r.httpStatus))
            .bind(param(t, "attempts"), std::int64_t(r.attempts))
            .bind(param(t, "prompt_tokens"), r.promptTokens)
            .bind(param(t, "completion_tokens"), r.completionTokens)
            .bind(param(t, "reasoning_tokens"), r.reasoningTokens)
            .bind(param(t, "cost"), r.cost)
            .bind(param(t, "latency_ms"), r.latencyMs)
            .bind(param(t, "time"), r.time.empty() ? isoTimeNow() : r.time)
            .bind(param(t, "stop_reason"), r.stopReason)
            .bind(param(t, "ending"), r.ending);
        const int rc = s.step();
        if (rc != SQLITE_DONE)
            return d->error(rc, "cannot store an exchange");
        id = std::int64_t(sqlite3_last_insert_rowid(d->db.get()));
        for (std::int64_t node : nodes)
            if (Status l = linkExchange(id, node); !l)
                return l;
        return Ok{};
    });
    if (!done)
        return done.error();
    return id;
}

Status SessionStore::linkExchange(std::int64_t exchange, std::int64_t node)
{
    if (auto e = unusable(true))
        return *e;
    Stmt s(d->db.get(), insertSql(kExchangeNodes, "INSERT OR IGNORE"));
    s.bind(param(kExchangeNodes, "exchange"), exchange).bind(param(kExchangeNodes, "node"), node);
    const int rc = s.step();
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return d->err(ErrorCode::NotFound,
                      "no exchange " + std::to_string(exchange) + " or node " + std::to_string(node));
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot link an exchange");
    return Ok{};
}

namespace {

// Reads an exchange row selected with selectSql(kExchanges, version); the links are read apart.
ExchangeRecord readExchange(const Stmt &s)
{
    const auto &t = kExchanges;
    ExchangeRecord e;
    e.id = s.int64(column(t, "id"));
    e.round = int(s.int64(column(t, "round")));
    e.purpose = s.text(column(t, "purpose"));
    e.generator = s.text(column(t, "generator"));
    e.model = s.text(column(t, "model"));
    e.endpoint = s.text(column(t, "endpoint"));
    e.request = s.text(column(t, "request"));
    e.prompt = s.text(column(t, "prompt"));
    e.response = s.text(column(t, "response"));
    e.answer = s.text(column(t, "answer"));
    e.reasoning = s.text(column(t, "reasoning"));
    e.error = s.text(column(t, "error"));
    e.httpStatus = int(s.int64(column(t, "http_status")));
    e.attempts = int(s.int64(column(t, "attempts")));
    e.promptTokens = s.int64(column(t, "prompt_tokens"));
    e.completionTokens = s.int64(column(t, "completion_tokens"));
    e.reasoningTokens = s.int64(column(t, "reasoning_tokens"));
    e.cost = s.real(column(t, "cost"));
    e.latencyMs = s.real(column(t, "latency_ms"));
    e.time = s.text(column(t, "time"));
    e.stopReason = s.text(column(t, "stop_reason"));
    e.ending = s.text(column(t, "ending"));
    return e;
}

// Runs an exchange SELECT (at most one int parameter) and fills in the links.
Result<std::vector<ExchangeRecord>> selectExchanges(sqlite3 *db, const std::string &path, int version,
                                                    std::string_view where, std::optional<std::int64_t> arg)
{
    std::vector<ExchangeRecord> out;
    if (version < kExchanges.since)
        return out; // a format 1 file read as it is: no model was ever asked
    Stmt s(db, selectSql(kExchanges, version) + " " + std::string(where) + " ORDER BY id");
    if (arg)
        s.bind(1, *arg);
    int rc;
    while ((rc = s.step()) == SQLITE_ROW)
        out.push_back(readExchange(s));
    if (rc != SQLITE_DONE)
        return sqlError(db, rc, path, "cannot read exchanges");
    for (auto &e : out) {
        Stmt l(db, "SELECT node FROM exchange_nodes WHERE exchange = ? ORDER BY node");
        l.bind(1, e.id);
        while ((rc = l.step()) == SQLITE_ROW)
            e.nodes.push_back(l.int64(0));
        if (rc != SQLITE_DONE)
            return sqlError(db, rc, path, "cannot read exchanges");
    }
    return out;
}

} // namespace

Result<ExchangeRecord> SessionStore::exchange(std::int64_t id) const
{
    if (auto e = unusable(false))
        return *e;
    auto found = selectExchanges(d->db.get(), d->path, d->version, "WHERE id = ?", id);
    if (!found)
        return found.error();
    if (found->empty())
        return d->err(ErrorCode::NotFound, "no exchange " + std::to_string(id));
    return std::move(found->front());
}

Result<std::vector<ExchangeRecord>> SessionStore::exchanges(std::int64_t node) const
{
    if (auto e = unusable(false))
        return *e;
    return selectExchanges(d->db.get(), d->path, d->version,
                           "WHERE id IN (SELECT exchange FROM exchange_nodes WHERE node = ?)", node);
}

Result<std::vector<ExchangeRecord>> SessionStore::allExchanges() const
{
    if (auto e = unusable(false))
        return *e;
    return selectExchanges(d->db.get(), d->path, d->version, "", std::nullopt);
}

} // namespace kf
