#!/bin/sh
# Stands in for Nsight Compute in test_gui_profile: takes the options the workbench passes, writes
# a report in the shape of `ncu --csv --page raw` where --log-file says, then runs the command
# that follows the options (the fake worker), as ncu runs its target.
log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log=$2; shift 2 ;;
    --target-processes|--kernel-name-base|--kernel-name|--launch-count|--metrics|--page) shift 2 ;;
    --csv) shift ;;
    *) break ;;
  esac
done
[ -n "$log" ] || { echo "fake ncu: no --log-file" >&2; exit 2; }
cat > "$log" <<'CSV'
"ID","Process ID","Kernel Name","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed","dram__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
"","","","usecond","%","%","%","inst","inst"
"0","1","softmax_cluster(const float *, float *)","612.5","41.2","88.9","93.1","7.5","2.25"
CSV
exec "$@"
