#pragma once
// The prompts: templates in resources/prompts (system.md, format.md, ideas.md, implement.md,
// repair.md) with named placeholders ({{PROBLEM}}), filled from the search's context. The prose
// lives in the templates so that users can edit it; this file only renders the facts.
#include "gen/generator.h"
#include "util/error.h"

#include <map>
#include <string>

namespace kf::llm {

using PromptValues = std::map<std::string, std::string>;

// Fills {{NAME}} placeholders. A placeholder without a value is an error naming it and `where`,
// so a template and the code cannot drift apart silently.
Result<std::string> fillTemplate(const std::string &text, const PromptValues &values, const std::string &where);

// <name>.md from `dir` when it holds one, else from $KERNELFORGE_PROMPTS, the installed prompts
// folder or the source tree; filled with `values`.
Result<std::string> renderPrompt(const std::string &name, const PromptValues &values, const std::string &dir = {});

// The facts as Markdown, for the placeholders of the same name.
std::string problemFacts(const GenContext &); // {{PROBLEM}}
std::string gpuFacts(const GenContext &);     // {{GPU}}
std::string kernelList(const GenContext &, const std::vector<KernelRecord> &,
                       std::size_t maxSource);  // {{BEST}}, {{PARENTS}}
std::string triedIdeas(const GenContext &);     // {{TRIED}}
std::string failureFacts(const KernelRecord &); // {{FAILURE}}

} // namespace kf::llm
