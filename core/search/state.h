#pragma once
// What the search knows between rounds: every correct kernel (from which the top-k and the bank
// are drawn) and every idea with how it did. It is rebuilt from the session's nodes on resume,
// so nothing here needs its own storage.
#include "gen/generator.h"
#include "store/session_store.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kf {

class SearchState {
public:
    SearchState(int topK = 4, int bankSize = 8) : m_topK(topK), m_bankSize(bankSize) {}

    // Top-k: the k fastest correct kernels, fastest first (ties: the older first).
    // Bank: the fastest correct kernel of each idea id, the bankSize fastest of those, so the
    // generator is offered different approaches rather than k variants of one.
    void setLimits(int topK, int bankSize);
    // A correct, timed kernel. Returns true when it is now the session's fastest.
    bool offer(const KernelRecord &);
    std::vector<KernelRecord> topK() const;
    std::vector<KernelRecord> bank() const;
    const KernelRecord *best() const;
    double bestMs() const;                             // 0 when there is no correct kernel
    const KernelRecord *find(std::int64_t node) const; // a correct kernel, or nullptr
    const KernelRecord *fastestClean() const;          // the fastest that passed the sanitizer gate, or nullptr
    // The sanitizer gate's verdict on a correct kernel that stays correct.
    void setSanitizer(std::int64_t node, const SanitizerCheck &);
    // A correct kernel that the sanitizer gate found fault with: it leaves the top-k and the bank,
    // and its idea counts it as failed with its new verdict (`now`) instead of correct.
    void demote(std::int64_t node, std::int64_t ideaNode, const EvalResult &now);

    void addIdea(IdeaRecord);
    // Whether an idea id was already tried on that parent kernel (0: the reference).
    bool tried(const std::string &ideaId, std::int64_t parentNode) const;
    const std::vector<IdeaRecord> &ideas() const { return m_ideas; }
    const IdeaRecord *idea(std::int64_t node) const;
    // One evaluated candidate of an idea: updates its best time, counts and commonest failure.
    // Results still queued (cancelled before they ran) are not outcomes and are ignored.
    // `candidate` (its node) lets a later demote() take a correct one back.
    void recordOutcome(std::int64_t ideaNode, const EvalResult &, std::int64_t candidate = 0);

    int lastRound = 0; // the highest round number in the session

private:
    static double medianOf(const KernelRecord &k) { return k.result.timing ? k.result.timing->medianMs : 0; }
    void countFailure(IdeaRecord &, const EvalResult &);

    int m_topK, m_bankSize;
    std::vector<KernelRecord> m_correct; // sorted fastest first
    std::vector<IdeaRecord> m_ideas;     // oldest first
    std::set<std::pair<std::string, std::int64_t>> m_tried;
    struct Failures {
        std::map<std::string, int> count;         // by verdict
        std::map<std::string, std::string> first; // the first reason seen for each verdict
    };
    std::map<std::int64_t, Failures> m_failures;
    std::map<std::int64_t, std::map<std::int64_t, double>> m_correctTimes; // idea node -> correct candidate -> ms
};

// The state of a session read back from its nodes, and the nodes a dead process left half done.
struct RestoredSearch {
    SearchState state;
    std::optional<std::int64_t> root;
    std::vector<std::int64_t> unfinishedRounds;     // status still "running"
    std::vector<std::int64_t> unfinishedIdeas;      // status still "queued"
    std::vector<std::int64_t> unfinishedCandidates; // queued with no reason (the process died)
    std::map<std::int64_t, std::int64_t> ideaOf;    // candidate -> its idea node
};
RestoredSearch restoreSearch(const std::vector<NodeRecord> &nodes, int topK, int bankSize);

// The idea node above a candidate (through repairs and hand edits), 0 when there is none.
std::int64_t ideaAncestor(const std::map<std::int64_t, const NodeRecord *> &byId, std::int64_t node);

} // namespace kf
