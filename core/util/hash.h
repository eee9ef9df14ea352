#pragma once
// A stable 128-bit content hash (two FNV-1a 64 lanes) for cache keys; not for security.
#include <string>
#include <string_view>

namespace kf {
std::string contentHash(std::string_view data); // 32 hex digits
} // namespace kf
