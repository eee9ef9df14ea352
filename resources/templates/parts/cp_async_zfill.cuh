// cp.async copies of 16 or 4 bytes into shared memory that zero-fill what they do not read, and
// the group commit and wait of a multi-stage pipeline (the mma.sync GEMM and convolution tiles),
// or an arrival on an mbarrier once the thread's copies have landed.
template <int kBytes>
__device__ __forceinline__ void cp_async(float *smem, const float *gmem, bool inside)
{
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int srcBytes = inside ? kBytes : 0; // 0: nothing is read, the destination is zero-filled
    if constexpr (kBytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(srcBytes));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(srcBytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending)); }
// Arrives on the shared-memory barrier `bar` once every copy this thread issued before has landed;
// the arrival is one of those the barrier was initialised to expect (.noinc).
__device__ __forceinline__ void cp_async_arrive_noinc(unsigned long long *bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                     static_cast<unsigned>(__cvta_generic_to_shared(bar)))
                 : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
