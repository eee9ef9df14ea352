#pragma once
// CUDA templates of the built-in generator: files in resources/templates named after their idea
// ("softmax_online.cu"), with named placeholders ({{BLOCK}}) and optional sections
// ({{#LOG}} ... {{/LOG}}, kept when LOG is true; {{^LOG}} ... {{/LOG}}, kept when it is false).
#include "util/error.h"

#include <map>
#include <string>
#include <vector>

namespace kf::builtin {

using TemplateValues = std::map<std::string, std::string>;

// Folders searched, in order: $KERNELFORGE_TEMPLATES (colon-separated), <exe>/../share/kernelforge/
// templates, the source tree's resources/templates, then resources/templates in the working folder
// or any folder above it.
std::vector<std::string> templateSearchPath();

// The text of <id>.cu from the first folder that holds it (read once, then cached).
Result<std::string> loadTemplate(const std::string &id);

// Fills the placeholders. A placeholder or section without a value is an error naming it, so a
// template and its renderer cannot drift apart silently. A line holding only a section tag is
// dropped, so sections leave no blank lines.
Result<std::string> renderTemplate(const std::string &text, const TemplateValues &values, const std::string &where);

} // namespace kf::builtin
