#!/usr/bin/env bash
# Configures and builds partalign into build/ (or $PARTALIGN_BUILD_DIR).
# Usage: scripts/build.sh [extra cmake -D options]          partalign, its tests and tools (CI)
#        scripts/build.sh --demo [extra cmake -D options]   the partalign binary only: no
#                                                           GoogleTest, no FUSE (README's first command)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PARTALIGN_BUILD_DIR:-build}
if [ "${1:-}" = --demo ]; then
  shift
  # -O1 without -g: the compile is most of what a newcomer waits for. Debug info is about 30%
  # of the compile time (apply_moves.cc: 30 s of CPU with -g, 21 s without), and -O2 a quarter
  # more than -O1 (journal_format.cc: 18.6 s against 12.2 s); the demo's time goes to the disk,
  # not to partalign's own code. The .deb (scripts/package-deb.sh) is built at -O2.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DPARTALIGN_BUILD_TESTS=OFF \
    -DPARTALIGN_BUILD_SSD_SIM=OFF "$@" >/dev/null
  cmake --build "$build" --parallel "$(nproc)" --target partalign
else
  # ON explicitly: a build dir first configured by --demo keeps its cached OFF otherwise.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPARTALIGN_BUILD_TESTS=ON -DPARTALIGN_BUILD_SSD_SIM=ON "$@" >/dev/null
  cmake --build "$build" --parallel "$(nproc)"
fi
