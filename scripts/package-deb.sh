#!/usr/bin/env bash
# Builds the Debian package partalign_VERSION_ARCH.deb (lintian-clean, installs under /usr) from
# a Release build of the partalign binary alone (no tests, no FUSE) in build-deb/ (or
# $PARTALIGN_DEB_BUILD_DIR), and prints its path. Needs the packages of
# `scripts/install-deps.sh --demo`; `cpack -G DEB` in any configured build dir does the same.
# Usage: scripts/package-deb.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PARTALIGN_DEB_BUILD_DIR:-build-deb}
# -O2, as Debian builds its packages (dpkg-buildflags), and as build.sh --demo: with GCC 12, -O3
# (CMake's Release default) makes false -Wrestrict errors inside libstdc++'s std::string.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DPARTALIGN_BUILD_TESTS=OFF -DPARTALIGN_BUILD_SSD_SIM=OFF "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target partalign partalign_deb_files
(cd "$build" && cpack -G DEB >/dev/null)
ls "$(cd "$build" && pwd)"/partalign_*.deb
