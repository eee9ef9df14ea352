# Sourced by the tools/*-eval.sh scripts on a GPU machine, after they set here: sets out ($OUT, or
# build-gpu/out) and p (the builtin test problems) unless the script did, and makes out.
# run NAME ARGS... evaluates with tools/idea-eval.sh into $out/NAME, prints its table and each
# kernel's worst scaled error over its trials (the strict tolerance is 1e-4). With KF_EVAL_UNTIL
# (seconds since the epoch) set, a part that would start after it is skipped, so what follows the
# parts keeps its time.
run() {
  local name=$1; shift
  if [ -n "${KF_EVAL_UNTIL:-}" ] && [ "$(date +%s)" -ge "$KF_EVAL_UNTIL" ]; then
    echo "== $name: skipped (KF_EVAL_UNTIL passed)"
    return
  fi
  OUT=$out/$name bash "$here/tools/idea-eval.sh" "$@" >"$out/$name.log" 2>&1
  echo "== $name: $*" | sed "s|$here/||g"
  grep -q '^problem ' "$out/$name.log" && sed -n '/^problem /,$p' "$out/$name.log" || tail -5 "$out/$name.log"
  for log in "$out/$name"/eval-*.log; do
    [ -f "$log" ] || continue
    awk -v k="$(basename "$log" .log)" '$1 ~ /^[0-9]+$/ && NF >= 6 { if ($4 + 0 > w) w = $4 + 0 }
      END { if (w > 0) printf "   worst scaled error %.2e  %s\n", w, k }' "$log"
  done
}

# A call's time: `deadline` starts its clock (KF_EVAL_SECONDS, default 560) and sets KF_EVAL_UNTIL
# so that parts stop starting KF_TEST_SECONDS (default 170) before its end; `gpu_tests STREAMS`
# then runs tools/gpu-streams.sh on those streams for what is left, in the same build.
deadline() {
  began=$(date +%s)
  total=${KF_EVAL_SECONDS:-560}
  export KF_EVAL_UNTIL=$(( began + total - ${KF_TEST_SECONDS:-170} ))
}
gpu_tests() {
  KF_STREAMS=$1 KF_STREAM_SECONDS=$(( began + total - $(date +%s) - 30 )) OUT=$out/streams \
    bash "$here/tools/gpu-streams.sh" 2>&1 | tail -30
}

out=${out:-${OUT:-$here/build-gpu/out}}
p=${p:-$here/tests/builtin/data/problems}
mkdir -p "$out"
