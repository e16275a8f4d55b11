# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by the scripts that measure speed (bench-precision, bench-detect, bench-move,
# bench-plan, bench-vs-fio; sourced, not run). They refuse a partalign built with the sanitizers
# (scripts/build.sh --sanitize, the README's second command and CI's build): its timings would
# be the sanitizers' as much as the disk's.
#   require_unsanitized PATH
require_unsanitized() {
  if ldd "$1" 2>/dev/null | grep -q 'libasan\.so'; then
    echo "$(basename "$0"): '$1' is built with ASan and UBSan (scripts/build.sh --sanitize)," \
      "whose timings are not partalign's: build it without them" \
      "(PARTALIGN_BUILD_DIR=build-release scripts/build.sh) and set" \
      "PARTALIGN=build-release/partalign" >&2
    exit 1
  fi
}
