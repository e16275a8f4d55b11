#!/usr/bin/env bash
# The pure core under AddressSanitizer and UndefinedBehaviorSanitizer: builds partalign_core,
# its unit tests and the pure fuzz harnesses with -DPARTALIGN_SANITIZE=ON (gcc; in
# build-sanitize/ or $PARTALIGN_SANITIZE_BUILD_DIR), runs every unit test, and runs the
# harnesses on their seeds and seeded mutations of them (scripts/fuzz --smoke). Every parser of
# bytes partalign reads lives in the core (the table scanner, plan and backup files, specs,
# LUKS/LVM/MD/filesystem superblocks, used-block maps), so this is where a sanitizer report
# matters most; the I/O edge's journal reader is covered by the libFuzzer runs of scripts/fuzz
# (ASan and UBSan too). Any report aborts: a failure, never a warning in a log. It needs the
# ordinary build of scripts/build.sh for the seeds; docs/safety.md says what it covers.
# Usage: scripts/test-sanitize.sh [--mutations N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PARTALIGN_SANITIZE_BUILD_DIR:-build-sanitize}
mutations=2000
[ "${1:-}" = --mutations ] && mutations=$2

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPARTALIGN_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" >/dev/null
harnesses=(table plan backup spec stack)
targets=(partalign_core_tests)
for h in "${harnesses[@]}"; do targets+=("${h}_fuzz"); done
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

# abort_on_error: a report fails the test; UBSan halts on its first report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
"$build/partalign_core_tests" --gtest_brief=1
# The seeds come from the ordinary build's partalign (scripts/test.sh ran it).
scripts/fuzz --smoke --build-dir "$build" \
  --tools-dir "${PARTALIGN_BUILD_DIR:-build}" --mutations "$mutations" "${harnesses[@]}"
echo "test-sanitize: the core's unit tests and ${#harnesses[@]} fuzz harnesses ($mutations mutations per seed) passed under ASan and UBSan"
