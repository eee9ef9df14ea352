#pragma once
// Reading a model's answers: the JSON list of ideas, wherever the model put it (bare, in a
// fenced block, inside prose), and the candidate file in a fenced code block.
#include "util/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kf::llm {

struct ParsedIdea {
    std::string title;
    std::string description;    // the idea in plain language
    std::string rationale;      // why it should help here
    std::string expectedGain;   // as the model put it ("1.3x", "20%")
    std::int64_t buildsOn = -1; // the kernel # it starts from; -1: not said, 0: the reference
};

// The ideas in an answer: a JSON array of objects, or an object with an "ideas" array, found as
// the whole answer, in a ```json block or as the first balanced JSON value in the prose.
// `truncated` (the answer stopped at the token limit) takes only a list that closed before the
// cut (a lone idea object may be the first item of a lost list) and makes a failure say so.
Result<std::vector<ParsedIdea>> parseIdeas(const std::string &answer, bool truncated);

// The candidate file in an answer: the fenced block with a @launch directive (else the first one
// with a __global__ function), or the whole answer when it is nothing but a candidate file. The
// directives must parse and name at least one launch.
Result<std::string> extractCandidate(const std::string &answer, bool truncated);

} // namespace kf::llm
