// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// The input is seen as [kOuter, kLen, kInner] around the reduced dims. One thread per output
// element walks the kLen reduced elements (kInner apart) and combines them as it goes. When
// kInner > 1 neighbouring threads read neighbouring addresses and the loads coalesce; when the
// reduced dim is the last, each thread reads its own row and a warp's loads scatter.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch reduce_per_output grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT}})

constexpr long long kOuter = {{OUTER}}; // slices before the reduced dims
constexpr long long kLen = {{LEN}};     // reduced elements per output
constexpr long long kInner = {{INNER}}; // elements after the reduced dims
constexpr int kBlock = {{BLOCK}};       // threads per block

{{INPUT}}
{{REDUCTION}}
extern "C" __global__ void __launch_bounds__(kBlock)
reduce_per_output({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long o = (long long)blockIdx.x * kBlock + threadIdx.x; // the output element
    if (o >= kOuter * kInner)
        return;
    const long long base = (o / kInner) * kLen * kInner + o % kInner;
    Reduction::Acc acc = Reduction::identity();
    for (long long r = 0; r < kLen; ++r)
        acc = Reduction::combine(acc, Reduction::lift(in.at(base + r * kInner), r));
    out[o] = Reduction::finish(acc);
}
