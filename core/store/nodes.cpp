// The search tree: the root, its rounds, their ideas and the candidates.
#include "store/db.h"
#include "store/schema.h"

namespace kf {

using namespace store;

std::string toString(NodeKind k)
{
    switch (k) {
    case NodeKind::Root:
        return "root";
    case NodeKind::Round:
        return "round";
    case NodeKind::Idea:
        return "idea";
    case NodeKind::Candidate:
        return "candidate";
    }
    return "candidate";
}

std::optional<NodeKind> parseNodeKind(std::string_view s)
{
    if (s == "root")
        return NodeKind::Root;
    if (s == "round")
        return NodeKind::Round;
    if (s == "idea")
        return NodeKind::Idea;
    if (s == "candidate")
        return NodeKind::Candidate;
    return std::nullopt;
}

namespace {

// Reads a node row selected with selectSql(kNodes); none when its kind is not one of ours.
std::optional<NodeRecord> readNode(const Stmt &s)
{
    NodeRecord n;
    n.id = s.int64(column(kNodes, "id"));
    if (!s.isNull(column(kNodes, "parent")))
        n.parent = s.int64(column(kNodes, "parent"));
    const auto kind = parseNodeKind(s.text(column(kNodes, "kind")));
    if (!kind)
        return std::nullopt;
    n.kind = *kind;
    n.round = int(s.int64(column(kNodes, "round")));
    n.title = s.text(column(kNodes, "title"));
    n.text = s.text(column(kNodes, "text"));
    n.status = s.text(column(kNodes, "status"));
    n.reason = s.text(column(kNodes, "reason"));
    if (!s.isNull(column(kNodes, "result_json")))
        n.resultJson = s.text(column(kNodes, "result_json"));
    n.edited = s.int64(column(kNodes, "edited")) != 0;
    n.created = s.text(column(kNodes, "created"));
    n.updated = s.text(column(kNodes, "updated"));
    return n;
}

// Runs a node SELECT (with at most one int parameter) and reads every row.
Result<std::vector<NodeRecord>> selectNodes(sqlite3 *db, const std::string &path, std::string_view where,
                                            std::optional<std::int64_t> arg)
{
    Stmt s(db, selectSql(kNodes) + " " + std::string(where) + " ORDER BY id");
    if (arg)
        s.bind(1, *arg);
    std::vector<NodeRecord> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        auto n = readNode(s);
        if (!n)
            return makeError(ErrorCode::Damaged,
                             "damaged: node " + std::to_string(s.int64(column(kNodes, "id"))) + " has an unknown kind",
                             path);
        out.push_back(std::move(*n));
    }
    if (rc != SQLITE_DONE)
        return sqlError(db, rc, path, "cannot read nodes");
    return out;
}

} // namespace

Result<std::int64_t> SessionStore::addNode(const NodeRecord &r)
{
    if (auto e = unusable(true))
        return *e;
    if (r.kind == NodeKind::Root && r.parent)
        return d->err(ErrorCode::Invalid, "a root node has no parent");
    if (r.kind != NodeKind::Root && !r.parent)
        return d->err(ErrorCode::Invalid, "a " + toString(r.kind) + " node needs a parent");
    if (r.resultJson && !nlohmann::json::accept(*r.resultJson))
        return d->err(ErrorCode::Invalid, "the result is not JSON");
    sqlite3 *db = d->db.get();
    if (r.parent) {
        // Foreign keys would refuse it too, but only with "FOREIGN KEY constraint failed".
        Stmt p(db, "SELECT 1 FROM nodes WHERE id = ?");
        p.bind(1, *r.parent);
        const int rc = p.step();
        if (rc == SQLITE_DONE)
            return d->err(ErrorCode::NotFound, "no node " + std::to_string(*r.parent) + " to add to");
        if (rc != SQLITE_ROW)
            return d->error(rc, "cannot add a node");
    }
    const std::string now = isoTimeNow();
    Stmt s(db, insertSql(kNodes));
    s.bindOptional(param(kNodes, "parent"), r.parent)
        .bind(param(kNodes, "kind"), toString(r.kind))
        .bind(param(kNodes, "round"), std::int64_t(r.round))
        .bind(param(kNodes, "title"), r.title)
        .bind(param(kNodes, "text"), r.text)
        .bind(param(kNodes, "status"), r.status)
        .bind(param(kNodes, "reason"), r.reason)
        .bindOptional(param(kNodes, "result_json"), r.resultJson)
        .bind(param(kNodes, "edited"), std::int64_t(r.edited ? 1 : 0))
        .bind(param(kNodes, "created"), r.created.empty() ? now : r.created)
        .bind(param(kNodes, "updated"), now);
    const int rc = s.step();
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot add a node");
    return std::int64_t(sqlite3_last_insert_rowid(db));
}

Status SessionStore::updateNode(std::int64_t id, std::string_view status, std::string_view reason,
                                const std::optional<std::string> &resultJson)
{
    if (auto e = unusable(true))
        return *e;
    if (resultJson && !nlohmann::json::accept(*resultJson))
        return d->err(ErrorCode::Invalid, "the result is not JSON");
    Stmt s(d->db.get(), "UPDATE nodes SET status = ?, reason = ?, result_json = ?, updated = ? WHERE id = ?");
    s.bind(1, status).bind(2, reason).bindOptional(3, resultJson).bind(4, isoTimeNow()).bind(5, id);
    const int rc = s.step();
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot update node " + std::to_string(id));
    if (sqlite3_changes(d->db.get()) == 0)
        return d->err(ErrorCode::NotFound, "no node " + std::to_string(id));
    return Ok{};
}

Result<NodeRecord> SessionStore::node(std::int64_t id) const
{
    if (auto e = unusable(false))
        return *e;
    Stmt s(d->db.get(), selectSql(kNodes) + " WHERE id = ?");
    s.bind(1, id);
    const int rc = s.step();
    if (rc == SQLITE_DONE)
        return d->err(ErrorCode::NotFound, "no node " + std::to_string(id));
    if (rc != SQLITE_ROW)
        return d->error(rc, "cannot read node " + std::to_string(id));
    auto n = readNode(s);
    if (!n)
        return d->err(ErrorCode::Damaged, "damaged: node " + std::to_string(id) + " has an unknown kind");
    return *n;
}

Result<std::vector<NodeRecord>> SessionStore::children(std::int64_t id) const
{
    if (auto e = unusable(false))
        return *e;
    return selectNodes(d->db.get(), d->path, "WHERE parent = ?", id);
}

Result<std::vector<NodeRecord>> SessionStore::allNodes() const
{
    if (auto e = unusable(false))
        return *e;
    return selectNodes(d->db.get(), d->path, "", std::nullopt);
}

Result<std::optional<NodeRecord>> SessionStore::root() const
{
    if (auto e = unusable(false))
        return *e;
    auto roots = selectNodes(d->db.get(), d->path, "WHERE kind = 'root'", std::nullopt);
    if (!roots)
        return roots.error();
    if (roots->empty())
        return std::optional<NodeRecord>();
    return std::optional<NodeRecord>(std::move(roots->front()));
}

} // namespace kf
