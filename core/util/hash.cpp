#include "util/hash.h"

#include <cstdint>
#include <cstdio>

namespace kf {

std::string contentHash(std::string_view data)
{
    // Two FNV-1a lanes with different offsets; collisions in a local cache are the only risk.
    std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    for (unsigned char c : data) {
        a = (a ^ c) * 0x100000001b3ull;
        b = (b ^ (c + 0x9eu)) * 0x100000001b3ull;
        b ^= b >> 29;
    }
    char out[33];
    std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return out;
}

} // namespace kf
