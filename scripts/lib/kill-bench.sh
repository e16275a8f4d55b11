# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by scripts/bench-apply-kill and scripts/bench-translate-kill (sourced, not run): runs
# one KillBench gtest of partalign_device_tests with many seeded kill points and sums its
# "kill-bench:" lines.
#   run_kill_bench NAME GTEST_FILTER [--points N] [--external N] [--seed S]
run_kill_bench() {
  local name=$1 filter=$2
  shift 2
  cd "$(dirname "$0")/.."
  local build=${PARTALIGN_BUILD_DIR:-build}
  local points=15 external=5 seed=1
  while [ $# -gt 0 ]; do
    case "$1" in
      --points) points=$2; shift 2 ;;
      --external) external=$2; shift 2 ;;
      --seed) seed=$2; shift 2 ;;
      -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) echo "$name: unknown option '$1'" >&2; exit 1 ;;
    esac
  done
  if [ "$(id -u)" != 0 ]; then
    echo "$name: needs root (loop devices)" >&2
    exit 1
  fi
  local tests="$build/partalign_device_tests"
  if [ ! -x "$tests" ]; then
    echo "$name: '$tests' not found; run scripts/build.sh first" >&2
    exit 1
  fi
  # Global, so that the EXIT trap still sees it after the function returned.
  kill_bench_log=$(mktemp)
  trap 'rm -f "$kill_bench_log"' EXIT
  local log=$kill_bench_log
  echo "$name: seed $seed, per layout $points hook points + $external external kills"
  local status=0
  PARTALIGN_REQUIRE_DEVICE_TESTS=1 PARTALIGN_KILL_POINTS=$points PARTALIGN_KILL_EXTERNAL=$external \
    PARTALIGN_KILL_SEED=$seed "$tests" --gtest_also_run_disabled_tests \
    --gtest_filter="$filter" >"$log" 2>&1 || status=$?
  grep '^kill-bench:' "$log" | sed 's/^kill-bench: //' || true
  awk '/^kill-bench:/ {
         for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[2] ~ /^[0-9]+$/ && kv[1] != "sectors") sum[kv[1]] += kv[2] }
       }
       END {
         printf "total: points=%d old=%d (of which untouched=%d) new=%d mixed_restored=%d completed_before_kill=%d not_restorable=%d\n",
                sum["points"], sum["old"], sum["old_untouched"], sum["new"], sum["mixed"], sum["completed"], sum["not_restorable"]
       }' "$log"
  if [ "$status" != 0 ]; then
    grep -E 'Failure|NOT RESTORABLE|FAILED' "$log" | head -40 >&2 || true
    echo "$name: FAILED (see above)" >&2
    exit 1
  fi
  echo "$name: every killed disk held the old or the new table, or was restored byte for byte"
}
