#pragma once
// Integer expressions used in problem shapes and candidate launch directives:
//   literals, names of constants, T.numel, T.ndim, T.shape[i] (i may be negative),
//   + - * / % (C semantics: / truncates, division by zero is an error), unary -, parentheses,
//   cdiv(a, b), min(a, b), max(a, b).
#include "util/error.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct ExprEnv {
    std::map<std::string, std::int64_t, std::less<>> constants;
    std::map<std::string, std::vector<std::int64_t>, std::less<>> shapes; // tensor name -> shape
};

// `where` is put in front of any error ("candidate.cu:3 grid").
Result<std::int64_t> evalExpr(std::string_view text, const ExprEnv &env, const std::string &where = {});

} // namespace kf
