#!/usr/bin/env bash
# On a GPU machine: renders the first N points of every built-in idea that applies to each problem
# (kernelforge-cli coverage --render) and evaluates each rendered kernel with kernelforge-cli eval
# (verified on random inputs, every timed run checked, median of timed runs with L2 flushed, eager
# PyTorch timed in the same call). Ends with one table: problem, policy, idea and point, verdict,
# median ms, x eager. Builds first (tools/gpu-build.sh; incremental when build-gpu exists).
#   tools/idea-eval.sh [--points N] [--policies "strict loose"] [--match GLOB] PROBLEM...
# PROBLEM is a shipped name (seed/conv2d_relu_maxpool) or a .toml path. Logs go under $OUT.
set -uo pipefail
points=2 policies=strict match='*'
problems=()
while [ $# -gt 0 ]; do
  case "$1" in
    --points) points=$2; shift ;;
    --policies) policies=$2; shift ;;
    --match) match=$2; shift ;;
    -*) echo "idea-eval.sh: unknown option $1" >&2; exit 2 ;;
    *) problems+=("$1") ;;
  esac
  shift
done
[ ${#problems[@]} -eq 0 ] && { echo "usage: idea-eval.sh [--points N] [--policies P] [--match GLOB] PROBLEM..." >&2; exit 2; }
# Builds (or, when build-gpu is up to date, only checks it) and sets here, out and cli.
export KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$(dirname "$0")/gpu-build.sh"
table="$out/idea-eval.tsv"
: >"$table"
for pol in $policies; do
  for p in "${problems[@]}"; do
    src=$p
    [ -f "$src" ] || src="$here/problems/$p.toml"
    name=$(basename "$src" .toml)
    dir="$out/render-$pol"
    "$cli" coverage "$src" --policy "$pol" --render "$dir" --points "$points" >"$out/coverage-$pol-$name.log" 2>&1
    for f in "$dir/$name"/*.cu; do
      [ -f "$f" ] || continue
      base=$(basename "$f" .cu)
      # shellcheck disable=SC2254
      case "$base" in $match) ;; *) continue ;; esac
      log="$out/eval-$pol-$name-$base.log"
      "$cli" eval "$src" "$f" --policy "$pol" >"$log" 2>&1
      verdict=$(sed -n 's/^verdict *\([a-z_]*\).*/\1/p' "$log" | head -1)
      ms=$(sed -n 's/^time *median \([0-9.]*\) ms.*/\1/p' "$log" | head -1)
      speedup=$(sed -n 's/.*speedup \([0-9.]*\)x.*/\1/p' "$log" | head -1)
      point=$(sed -n 's@^// Built-in idea [a-z0-9_]*: @@p' "$f" | head -1 | tr -d ' ')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$pol" "$base" "$point" "${verdict:-error}" "${ms:--}" \
        "${speedup:--}" >>"$table"
    done
  done
done
echo
printf '%-24s %-6s %-34s %-50s %-10s %-9s %s\n' problem policy kernel point verdict ms "x eager"
sort -t$'\t' -k1,1 -k2,2 -k6,6g "$table" | awk -F'\t' '{printf "%-24s %-6s %-34s %-50s %-10s %-9s %s\n", $1, $2, $3, $4, $5, $6, $7}'
