{{>mbarrier}}

// The descriptor of a K-major tile of 128-byte swizzled rows: rows 8 apart are 1024 bytes apart
// (stride byte offset); the leading byte offset is unused with a 128-byte swizzle.
__device__ __forceinline__ unsigned long long tile_desc(const void *tile)
{
    const unsigned long long addr = smem_addr(tile);
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

// Makes this thread's ordinary stores to shared memory visible to the asynchronous proxy (wgmma's
// operand reads) before it signals them ready.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Pins the accumulators in place around asynchronous products, so the compiler neither copies
// them nor touches them while a product is in flight.
template <int kRegs>
__device__ __forceinline__ void fence_operands(float (&d)[kRegs])
{
#pragma unroll
    for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory"); }
