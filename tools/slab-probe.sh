#!/usr/bin/env bash
# On a GPU machine: where the slab convolution's time goes, by taking parts away. Copies of the
# seed conv2d's rendered conv_wgmma_slab kernels (strict 3xbf16 and loose fp16, their first
# points) without one part each (the stores, the main loop past one slice pair, the slab copies
# after the first) are timed by ncu's duration alone (they compute wrong results, which ncu does
# not mind); copies whose main loop reads fragments further ahead, or (loose) two taps a load, are
# verified and timed; last, the whole kernels are profiled (SpeedOfLight, warp states and stall
# reasons, instruction mix, bank conflicts).
# Everything lands in $OUT/slab-probe.tgz (the device returns only a few files).
#   OUT=$OUT bash tools/slab-probe.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# Work outside $OUT and leave only the archive there: the device returns a handful of files.
dest=${OUT:-$here/build-gpu/out}
mkdir -p "$dest"
export KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$here/tools/gpu-build.sh"
out=$(mktemp -d /tmp/slab-probe.XXXX) # after gpu-build.sh, which sets out to $OUT
r=$out/render
"$cli" coverage "$here/problems/seed/conv2d.toml" --render "$r/strict" --points 1 >/dev/null 2>&1
"$cli" coverage "$here/problems/seed/conv2d.toml" --policy loose --render "$r/loose" --points 1 >/dev/null 2>&1
v=$out/variants
mkdir -p "$v"
python3 - "$r" "$v" <<'PY'
import sys
r, v = sys.argv[1], sys.argv[2]
cuts = {
    "nostore": ("if (ch < kGemmN) dst[", "if (ch < kGemmN && acc[0] == 12345.0f) dst["),
    "nomain": ("for (int k0 = 0; k0 < kSlices; k0 += 2) {", "for (int k0 = 0; k0 < 2; k0 += 2) {"),
    "nocopy": ("for (int i = t; i < kSlabChunks; i += 128) {", "for (int i = t; i < (task < stride ? kSlabChunks : 0); i += 128) {"),
}
# The main loop with S register sets, up to W slices' products in flight and each fragment read D
# slices ahead (S = W + D): the template's is S 2, W 1, D 1.
def loop(S, W, D):
    fences = "".join(f"            fence_packed(hi[{i}]);\n            fence_packed(lo[{i}]);\n" for i in range(S))
    first = "".join(f"            if ({i} < kSlices) load({i}, hi[{i}], lo[{i}]);\n" for i in range(D))
    return f"""            unsigned hi[{S}][4], lo[{S}][4];
{first}            for (int k0 = 0; k0 < kSlices; k0 += {S}) {{
#pragma unroll
                for (int d = 0; d < {S}; ++d) {{
                    const int kk = k0 + d;
                    if (kk >= kSlices) break;
                    const unsigned long long bHi = tile_desc(wTile + (kk / 4) * kTileB * 2) + 2 * (kk % 4);
                    const unsigned long long bLo = bHi + ((kPartB * 2) >> 4);
                    fence_operands(acc);
                    wgmma_fence();
                    if constexpr (kParts == 2) {{
                        wgmma_half_regs<Elem>(acc, lo[d], bHi, kk > 0);
                        wgmma_half_regs<Elem>(acc, hi[d], bLo, 1);
                        wgmma_half_regs<Elem>(acc, hi[d], bHi, 1);
                    }} else {{
                        wgmma_half_regs<Elem>(acc, hi[d], bHi, kk > 0);
                    }}
                    wgmma_commit();
                    wgmma_wait<{W}>();
                    fence_packed(hi[(d + {D}) % {S}]);
                    fence_packed(lo[(d + {D}) % {S}]);
                    if (kk + {D} < kSlices) load(kk + {D}, hi[(d + {D}) % {S}], lo[(d + {D}) % {S}]);
                }}
            }}
            wgmma_wait<0>();
            fence_operands(acc);
{fences}"""
# src with its main loop (from the fragment registers to their last fences) replaced by loop(S, W, D).
def with_loop(src, S, W, D):
    end = "            fence_packed(lo[1]);\n"
    i = src.index("            unsigned hi[2][4], lo[2][4];")
    j = src.index(end, i) + len(end)
    return src[:i] + loop(S, W, D) + src[j:]
for policy, name in (("strict", "conv_wgmma_slab_bf16x3"), ("loose", "conv_wgmma_slab_fp16")):
    src = open(f"{r}/{policy}/conv2d/{name}.cu").read()
    for cut, (a, b) in cuts.items():
        assert src.count(a) == 1, (policy, cut)
        open(f"{v}/{policy}-{cut}.cu", "w").write(src.replace(a, b))
    # (4, 2, 2) is left out: ptxas serialises its wgmma (C7513, fragments written while two slices'
    # products are in flight).
    for S, W, D in ((2, 1, 1), (3, 1, 2), (3, 2, 1)):
        open(f"{v}/{policy}-loop{S}{W}{D}.cu", "w").write(with_loop(src, S, W, D))

# Loose only (the 3xbf16 weight grows past shared memory): taps read two at a time. The kernel
# width is padded to even (11 -> 12, a zero weight) so that taps 2q and 2q + 1 of a fragment are
# neighbours in one slab row at an even offset (stride 4, padding 2, 16-byte rows): one 8-byte
# load instead of two 4-byte ones, for two more k16 slices (25 instead of 23).
def pairs(src):
    subs = [
        ("cdiv(363, 64)", "cdiv(396, 64)"),
        ("smem(198736)", "smem(211152)"),
        ("static_assert(kSmemBytes == 198736 &&", "static_assert(kSmemBytes == 211152 &&"),
        ("constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kGemmK, kBK);",
         "constexpr int kTapW = kKW + (kKW & 1), kSlabK = kInC * kKH * kTapW;\n"
         "constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kSlabK, kBK);"),
        ("constexpr int kSlices = cdiv(kGemmK, 16);", "constexpr int kSlices = cdiv(kSlabK, 16);"),
        ("constexpr bool kRaggedK = kGemmK % 16 != 0;", "constexpr bool kRaggedK = kSlabK % 16 != 0;"),
        ("    if (k >= kGemmK) return 0;\n    const int c = k / (kKH * kKW), r = (k / kKW) % kKH, s = k % kKW;",
         "    if (k >= kSlabK) return 0;\n    const int c = k / (kKH * kTapW), r = (k / kTapW) % kKH, s = k % kTapW;"),
        ("        return k < kGemmK ? __ldg(w + (long long)n * kGemmK + k) : 0.0f;",
         "        const int c = k / (kKH * kTapW), r = (k / kTapW) % kKH, s = k % kTapW;\n"
         "        return k < kSlabK && s < kKW ? __ldg(w + (long long)n * kGemmK + (c * kKH + r) * kKW + s) : 0.0f;"),
        ("float v0 = slab[base[p] + ko[2 * j]], v1 = slab[base[p] + ko[2 * j + 1]];",
         "const float2 pr = *reinterpret_cast<const float2 *>(slab + base[p] + ko[2 * j]);\n"
         "                float v0 = pr.x, v1 = pr.y;"),
        ("v0 = k < kGemmK ? v0 : 0.0f;", "v0 = k < kSlabK ? v0 : 0.0f;"),
        ("v1 = k + 1 < kGemmK ? v1 : 0.0f;", "v1 = k + 1 < kSlabK ? v1 : 0.0f;"),
    ]
    for a, b in subs:
        assert src.count(a) >= 1, a
        src = src.replace(a, b)
    return src
src = open(f"{r}/loose/conv2d/conv_wgmma_slab_fp16.cu").read()
open(f"{v}/loose-pairs.cu", "w").write(pairs(src))
open(f"{v}/loose-pairs-loop312.cu", "w").write(pairs(with_loop(src, 3, 1, 2)))
PY
metrics=--metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp16_dst_fp32.sum,gpu__time_duration.sum
report() { echo "$out/ncu-$(basename "$1" .cu)-conv_wgmma_slab.txt"; }
profile() { # NAME CANDIDATE [eval args]
  local name=$1 cand=$2
  OUT=$out KF_EVAL_ARGS=${3:-} bash "$here/tools/ncu-candidate.sh" "$here/problems/seed/conv2d.toml" "$cand" conv_wgmma_slab \
    --section InstructionStats --print-details all "$metrics" >/dev/null 2>&1
  # A metric this ncu does not know fails the whole profile: then without the extra metrics.
  grep -q '==ERROR==' "$(report "$cand")" &&
    OUT=$out KF_EVAL_ARGS=${3:-} bash "$here/tools/ncu-candidate.sh" "$here/problems/seed/conv2d.toml" "$cand" conv_wgmma_slab \
      --section InstructionStats --print-details all >/dev/null 2>&1
  echo "== $name"
  grep -iE "duration|Throughput|Pipe|Stall|bank|wavefronts|ops_path|Issued|Eligible|Active Warps|ERROR" "$(report "$cand")" \
    | grep -v Reducing | sed 's/  */ /g' | head -60
}
# The first launch: a copy without a part computes wrong results, and the evaluation stops after
# its first trial (one launch), so every kernel here is timed at its first launch alike.
duration() { # CANDIDATE [eval args]: the kernel's time alone
  local cand=$1
  ncu --target-processes all --clock-control none -k regex:^conv_wgmma_slab\$ -s 0 -c 1 --metrics gpu__time_duration.sum \
    "$cli" eval "$here/problems/seed/conv2d.toml" "$cand" --trials 3 --timing-trials 3 ${2:-} >"$out/dur-$(basename "$cand" .cu).txt" 2>&1
  printf '%-24s %s\n' "$(basename "$cand" .cu)" "$(grep -E 'gpu__time_duration' "$out/dur-$(basename "$cand" .cu).txt" | awk '{print $(NF-1), $NF}')"
}
echo "== the kernel alone, whole and without one part"
duration "$r/strict/conv2d/conv_wgmma_slab_bf16x3.cu"
for c in nostore nomain nocopy; do duration "$v/strict-$c.cu"; done
duration "$r/loose/conv2d/conv_wgmma_slab_fp16.cu" "--policy loose"
for c in nostore nomain nocopy; do duration "$v/loose-$c.cu" "--policy loose"; done
echo "== the main loop with S register sets, W slices in flight, fragments read D ahead (loopSWD; 211 is today's)"
ev() { # CANDIDATE [eval args]: verified and timed as a search times it
  "$cli" eval "$here/problems/seed/conv2d.toml" "$1" ${2:-} >"$out/eval-$(basename "$1" .cu).txt" 2>&1
  printf '%-24s %s\n' "$(basename "$1" .cu)" "$(grep -E '^(verdict|time) ' "$out/eval-$(basename "$1" .cu).txt" | cut -c1-60 | tr '\n' ' ')"
}
for l in 211 312 321; do ev "$v/strict-loop$l.cu"; ev "$v/loose-loop$l.cu" "--policy loose"; done
echo "== loose, taps read in pairs (kernel width padded to even)"
for c in pairs pairs-loop312; do ev "$v/loose-$c.cu" "--policy loose"; duration "$v/loose-$c.cu" "--policy loose"; done
profile "slab strict WGS=2" "$r/strict/conv2d/conv_wgmma_slab_bf16x3.cu"
profile "slab loose WGS=2 SLABS=2" "$r/loose/conv2d/conv_wgmma_slab_fp16.cu" "--policy loose"
tar -czf "$dest/slab-probe.tgz" -C "$out" . 2>/dev/null
