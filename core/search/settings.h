#pragma once
// What a search is asked to do: how many rounds, ideas and implementations, what it keeps, how it
// judges and times candidates, and when it stops. Stored in the session's "settings" meta key.
#include "problem/problem.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace kf {

struct SearchSettings {
    int rounds = 10;              // total rounds of the session (a resumed search counts earlier ones)
    int ideasPerRound = 4;        // I
    int implsPerIdea = 4;         // B
    int topK = 4;                 // the fastest correct kernels handed to the generator
    int bankSize = 8;             // good kernels kept for seeding, one per idea
    std::optional<Policy> policy; // none: the problem's own
    int trials = 5;               // verification trials per candidate
    int timingTrials = 100;       // timed runs per correct candidate (and for the eager baseline)
    double timeBudgetSeconds = 0; // wall-clock limit of one run() from its first round; 0: none
    int repairs = 1;              // repair attempts per failed candidate (0: never ask)
    std::int64_t tokenBudget = 0; // prompt + completion tokens of the whole session; 0: none
    double costBudget = 0;        // cost of the whole session in the price table's currency; 0: none
    // Runs the rounds up to compilation and records compiled candidates as needing a GPU: a search
    // on a machine without one (an LLM's output checked by NVRTC, CI).
    bool compileOnly = false;
    // The sanitizer gate: a kernel runs once under compute-sanitizer before it enters the top-k or
    // the bank or is reported as a round's best (docs/search.md). Off only by choice; a machine
    // where the tool does not work turns it off by itself, and says why.
    bool sanitize = true;

    Status validate() const; // every count in range; the error names the field
};

void to_json(nlohmann::json &, const SearchSettings &);
// Missing keys keep their defaults, so older sessions still open; wrong types and values out of
// range are errors naming the key.
Result<SearchSettings> settingsFromJson(const nlohmann::json &);
// The tolerance policy a search judges by: the settings' own, else the problem's.
Policy effectivePolicy(const SearchSettings &, const Problem &);

} // namespace kf
