#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs every test (unit and device) of an existing build. Device tests need root; with
# PARTALIGN_REQUIRE_DEVICE_TESTS=1 (CI) a skipped device test counts as a failure.
# Usage: scripts/test.sh [extra ctest options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PARTALIGN_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "$@"
