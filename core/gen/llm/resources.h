#pragma once
// Files the LLM generators read at run time: prompt templates (resources/prompts) and the price
// table (resources/llm/prices.json), found the way the built-in generator finds its templates.
#include "util/error.h"

#include <string>
#include <vector>

namespace kf::llm {

// Folders searched for `sub` ("prompts", "llm"), in order: `first` when not empty, the folders in
// the environment variable `env` (colon-separated), <exe>/../share/kernelforge/<sub>, the source
// tree's resources/<sub>, then resources/<sub> in the working folder or any folder above it.
std::vector<std::string> resourceSearchPath(const std::string &sub, const std::string &env,
                                            const std::string &first = {});

// The text of the first <folder>/<name> that exists; the error lists where it looked and names
// the environment variable that adds a folder.
Result<std::string> readResource(const std::string &sub, const std::string &env, const std::string &name,
                                 const std::string &first = {});

} // namespace kf::llm
