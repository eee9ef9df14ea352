#include "search/hand_edit.h"

#include "search/records.h"

namespace kf {

Result<std::int64_t> ensureRoot(SessionStore &store, const Problem &problem)
{
    auto root = store.root();
    if (!root)
        return root.error();
    if (*root)
        return (*root)->id;
    NodeRecord n;
    n.kind = NodeKind::Root;
    n.title = problem.name;
    n.text = problem.description;
    return store.addNode(n);
}

Result<std::int64_t> recordHandEdited(SessionStore &store, const Problem &problem, std::optional<std::int64_t> parent,
                                      const std::string &title, const std::string &source, const EvalResult &result)
{
    NodeRecord c;
    c.kind = NodeKind::Candidate;
    if (parent) {
        auto p = store.node(*parent);
        if (!p)
            return p.error();
        c.parent = *parent;
        c.round = p->round;
    } else {
        auto root = ensureRoot(store, problem);
        if (!root)
            return root.error();
        c.parent = *root;
    }
    c.title = title;
    c.text = source;
    c.status = toString(result.verdict);
    c.reason = result.reason;
    c.resultJson = candidateResultJson(result, DraftInfo{});
    c.edited = true;
    return store.addNode(c);
}

} // namespace kf
