// Convolution sizes, and the fused pooling's (0 without one).
{{>conv_geometry}}
constexpr int kPoolKH = {{POOL_KH}}, kPoolKW = {{POOL_KW}}, kPoolSH = {{POOL_SH}}, kPoolSW = {{POOL_SW}};
constexpr int kPoolPadH = {{POOL_PAD_H}}, kPoolPadW = {{POOL_PAD_W}};
constexpr int kPoolOutH = {{POOL_OUT_H}}, kPoolOutW = {{POOL_OUT_W}};
constexpr bool kPool = kPoolKH > 0;
