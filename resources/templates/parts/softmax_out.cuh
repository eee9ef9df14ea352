// An output value from its input and the row's statistics; row_scale is what can be taken once
// per row.
{{^LOG}}
// softmax: exp(x - max) / sum, with 1 / sum taken once per row.
__device__ __forceinline__ float row_scale(float row_sum) { return 1.0f / row_sum; }
__device__ __forceinline__ float softmax_out(float x, float row_max, float scale) { return expf(x - row_max) * scale; }
{{/LOG}}
{{#LOG}}
// log_softmax: x - max - log(sum), with log(sum) taken once per row.
__device__ __forceinline__ float row_scale(float row_sum) { return logf(row_sum); }
__device__ __forceinline__ float softmax_out(float x, float row_max, float scale) { return x - row_max - scale; }
{{/LOG}}
