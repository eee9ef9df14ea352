#!/usr/bin/env bash
# Shows that a change to the kernel templates changes no kernel: renders every idea's first points
# for the given problems with the templates of REV and with the working tree's (the same CLI), then
# compiles each pair with nvcc for sm_90a and compares the CUBINs byte for byte. No GPU needed.
#   tools/template-cubin-diff.sh REV [--points N] [--policy strict|loose] [--match GLOB] PROBLEM...
# Needs a built CLI and worker (build/, or KF_BUILD_DIR). Prints one line a pair, a count last.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:?usage: template-cubin-diff.sh REV [--points N] [--policy P] [--match GLOB] PROBLEM...}
shift
points=3 policy=strict match='*'
problems=()
while [ $# -gt 0 ]; do
  case "$1" in
    --points) points=$2; shift ;;
    --policy) policy=$2; shift ;;
    --match) match=$2; shift ;;
    *) problems+=("$1") ;;
  esac
  shift
done
build=${KF_BUILD_DIR:-$here/build}
cli="$build/app/cli/kernelforge-cli"
export KERNELFORGE_WORKER="$build/app/worker/kernelforge-worker"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/old"
git -C "$here" archive "$rev" resources/templates | tar -x -C "$work/old" || { echo "no templates at $rev" >&2; exit 2; }
for side in old new; do
  templates="$here/resources/templates"
  [ $side = old ] && templates="$work/old/resources/templates"
  for p in "${problems[@]}"; do
    KERNELFORGE_TEMPLATES=$templates "$cli" coverage "$p" --policy "$policy" --render "$work/$side-render" \
      --points "$points" >/dev/null 2>&1 || echo "coverage failed for $p ($side templates)" >&2
  done
done

same=0 different=0 failed=0
while IFS= read -r f; do
  rel=${f#"$work/new-render/"}
  [ -f "$work/old-render/$rel" ] || { echo "$rel: only with the new templates"; different=$((different + 1)); continue; }
  ok=1
  for side in old new; do
    "$nvcc" -gencode=arch=compute_90a,code=sm_90a -cubin -o "$work/$side.cubin" "$work/$side-render/$rel" \
      2>"$work/$side.err" || { echo "$rel: does not compile with the $side templates"; ok=0; }
  done
  if [ $ok = 0 ]; then failed=$((failed + 1))
  elif cmp -s "$work/old.cubin" "$work/new.cubin"; then echo "$rel: identical CUBIN"; same=$((same + 1))
  else echo "$rel: DIFFERENT CUBIN"; different=$((different + 1))
  fi
done < <(find "$work/new-render" -name "$match.cu" | sort)
echo "$same identical, $different different, $failed not compiled"
[ $different = 0 ] && [ $failed = 0 ]
