#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Configures and builds partalign into build/ (or $PARTALIGN_BUILD_DIR).
# Usage: scripts/build.sh [extra cmake -D options]            partalign, its tests and tools
#        scripts/build.sh --sanitize [extra cmake -D options] the same under ASan and UBSan (CI)
#        scripts/build.sh --demo [extra cmake -D options]     the partalign binary only: no
#                                                             GoogleTest, no FUSE (README's
#                                                             first command)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PARTALIGN_BUILD_DIR:-build}
mode=${1:-}
case "$mode" in
  --demo | --sanitize) shift ;;
  *) mode= ;;
esac
if [ "$mode" = --demo ]; then
  # -O1 without -g: the compile is most of what a newcomer waits for. Debug info is about 30%
  # of the compile time (apply_moves.cc: 30 s of CPU with -g, 21 s without), and -O2 a quarter
  # more than -O1 (journal_format.cc: 18.6 s against 12.2 s); the demo's time goes to the disk,
  # not to partalign's own code. The .deb (scripts/package-deb.sh) is built at -O2.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DPARTALIGN_BUILD_TESTS=OFF \
    -DPARTALIGN_BUILD_SSD_SIM=OFF -DPARTALIGN_SANITIZE=OFF -DPARTALIGN_WERROR=ON "$@" >/dev/null
  cmake --build "$build" --parallel "$(nproc)" --target partalign
  exit
fi
if [ "$mode" = --sanitize ]; then
  # Every test runs against programs built with ASan and UBSan (docs/safety.md): -O1, at
  # which the CPU-bound tests run about twice as fast as at -O0, and -g1, line tables for the
  # reports.
  set -- -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DPARTALIGN_SANITIZE=ON "$@"
else
  set -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARTALIGN_SANITIZE=OFF "$@"
fi
# ON explicitly: a build dir first configured by --demo keeps its cached OFF otherwise.
# Warnings are errors in every mode here (and so in CI); PARTALIGN_WERROR is OFF by default, for
# packagers' builds.
cmake -S . -B "$build" -G Ninja -DPARTALIGN_BUILD_TESTS=ON -DPARTALIGN_BUILD_SSD_SIM=ON \
  -DPARTALIGN_WERROR=ON "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
