#pragma once
// base64 (RFC 4648, with padding): CUBINs in the worker protocol, module data in problem files.
#include <string>

namespace kf {

std::string base64Encode(const std::string &bytes);
std::string base64Decode(const std::string &text);

} // namespace kf
