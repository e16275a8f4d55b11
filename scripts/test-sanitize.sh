#!/usr/bin/env bash
# partalign under AddressSanitizer and UndefinedBehaviorSanitizer, in a build of its own
# (gcc, -DPARTALIGN_SANITIZE=ON, -O0 -g1, in build-sanitize/ or $PARTALIGN_SANITIZE_BUILD_DIR):
#   1. every unit test of the pure core, where every parser of bytes partalign reads lives (the
#      table scanner, plan and backup files, specs, LUKS/LVM/MD/filesystem superblocks, used-block
#      maps);
#   2. the device tests of hostile input (partalign_hostile_tests: damaged and unusual tables
#      through every command, the validation gate, tampered and foreign backups, plans that lie,
#      files that are not regular files), run against the sanitized partalign binary itself;
#   3. the pure fuzz harnesses on their seeds and seeded mutations (scripts/fuzz --smoke).
# Any report aborts the process that made it (abort_on_error), so a test fails: never a warning
# in a log. -O0 keeps the second build as cheap as it can be (debug info at -g1: line tables for
# the reports). Device tests need root, as in scripts/test.sh; run it after scripts/build.sh,
# whose partalign makes the harnesses' seeds. Not in CI yet (docs/safety.md says why).
# Usage: scripts/test-sanitize.sh [--mutations N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PARTALIGN_SANITIZE_BUILD_DIR:-build-sanitize}
mutations=500
[ "${1:-}" = --mutations ] && mutations=$2

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPARTALIGN_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" >/dev/null
harnesses=(table plan backup spec stack)
targets=(partalign partalign_core_tests partalign_hostile_tests)
for h in "${harnesses[@]}"; do targets+=("${h}_fuzz"); done
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

# abort_on_error: a report kills the process with SIGABRT, which no test mistakes for one of
# partalign's exit statuses (ASan's and UBSan's own default exit status is 1, partalign's
# "error"). Leaks are checked in the unit tests; in the partalign processes the device tests
# start, the C libraries' allocations still alive at exit are not partalign's findings.
# tests/sanitize/asan.supp: bugs in the libraries partalign links (libparted's initialisation).
supp=$PWD/tests/sanitize/asan.supp
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-abort_on_error=1:halt_on_error=1:print_stacktrace=1}
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:suppressions=$supp} \
  "$build/partalign_core_tests" --gtest_brief=1
trap 'scripts/cleanup-test-loops.sh >/dev/null' EXIT
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=0:suppressions=$supp} \
  "$build/partalign_hostile_tests" --gtest_brief=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:suppressions=$supp}
scripts/fuzz --smoke --build-dir "$build" \
  --tools-dir "${PARTALIGN_BUILD_DIR:-build}" --mutations "$mutations" "${harnesses[@]}"
echo "test-sanitize: the core's unit tests, the hostile-input device tests and" \
  "${#harnesses[@]} fuzz harnesses ($mutations mutations per seed) passed under ASan and UBSan"
