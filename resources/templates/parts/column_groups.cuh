// A tensor seen as [kOuter, kLen, kInner] around one dim, each thread taking kVec adjacent
// columns of one slice, so a warp's accesses are contiguous.
constexpr long long kOuter = {{OUTER}};       // slices before the dim
constexpr long long kLen = {{LEN}};           // the dim's length
constexpr long long kInner = {{INNER}};       // columns per slice
constexpr int kBlock = {{BLOCK}};             // threads per block
constexpr int kVec = {{VEC}};                 // adjacent columns per thread: 4 (float4) or 1
constexpr long long kGroups = kInner / kVec;  // column groups per slice

// The thread's column group: false past the last one; else `base`, its first element, and
// `column`, the index of its first column among the kOuter x kInner columns.
__device__ __forceinline__ bool column_group(long long& base, long long& column)
{
    const long long g = (long long)blockIdx.x * kBlock + threadIdx.x;
    if (g >= kOuter * kGroups)
        return false;
    column = g / kGroups * kInner + g % kGroups * kVec;
    base = g / kGroups * kLen * kInner + g % kGroups * kVec;
    return true;
}
