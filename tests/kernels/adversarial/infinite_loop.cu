// @expect timed out
// @problem softmax
// One warp spins until a flag in scratch memory becomes non-zero. Scratch is zero-filled
// before each launch sequence and nothing ever writes the flag, so the kernel never ends.
// The flag is read through a volatile pointer, so each iteration really loads it and the
// compiler cannot hoist the load or delete the loop. The engine's time-out must kill it.
// @precision fp32
// @scratch flag int32 1
// @launch spin_forever grid(1) block(32) args(flag, out)

extern "C" __global__ void spin_forever(volatile int* flag, float* out)
{
    while (*flag == 0) {
        __nanosleep(1000);  // be gentle on the memory system while hung
    }
    out[threadIdx.x] = 0.0f;
}
