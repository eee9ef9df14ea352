#pragma once
// The built-in generator: no network. It recognises the reference's op pattern, proposes ideas
// from its catalogue according to what was measured, renders each idea's CUDA template at several
// parameter points, and repairs a failed point by changing the parameter that failed.
#include "gen/generator.h"

#include <memory>

namespace kf::builtin {

std::shared_ptr<Generator> makeBuiltinGenerator();

} // namespace kf::builtin
