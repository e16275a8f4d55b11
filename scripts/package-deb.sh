#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the Debian packages partalign_VERSION_ARCH.deb and its -dbgsym from debian/ with
# dpkg-buildpackage, in a copy of the source tree under OUT (default build-deb/, or
# $PARTALIGN_DEB_BUILD_DIR), so that nothing is written into the tree or next to it; prints the
# paths of the .debs, partalign's first. Needs the packages of `scripts/install-deps.sh --package`.
# Usage: scripts/package-deb.sh [--out DIR] [--commit REV] [--check] [--jobs N]
#   --out DIR     where the copy, the build and the packages go (emptied first)
#   --commit REV  build that commit (git archive), not the files of the work tree
#   --check       build and run the unit tests too (dh_auto_test), as a distribution does;
#                 without it, DEB_BUILD_OPTIONS and DEB_BUILD_PROFILES hold nocheck: partalign
#                 alone is built, the same binary, without GoogleTest and FUSE
#   --jobs N      compile N files at a time (default: one per core)
# SOURCE_DATE_EPOCH, when set, dates every file in the packages; dpkg-buildpackage takes
# debian/changelog's date otherwise (scripts/check-reproducible).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${PARTALIGN_DEB_BUILD_DIR:-build-deb}
commit=
check=
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --commit) commit=${2:?--commit needs a revision}; shift 2 ;;
    --check) check=1; shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb: unknown argument '$1' (try --help)" >&2; exit 1 ;;
  esac
done

if [ -n "$commit" ]; then
  version=$(git show "$commit:debian/changelog" | dpkg-parsechangelog -l - -S Version)
else
  version=$(dpkg-parsechangelog -l debian/changelog -S Version)
fi
# Emptied first, so it must be this script's: empty, or holding a previous build (src/).
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -d "$out/src" ]; then
  echo "package-deb: '$out' is not empty and holds no previous package build; not emptying it" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
# dpkg-buildpackage writes the packages next to the source tree: the copy's parent is OUT/src.
src="$out/src/partalign-$version"
mkdir -p "$src"
if [ -n "$commit" ]; then
  git archive --format=tar "$commit" | tar -x -C "$src"
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # The work tree as it is: tracked files and new ones not ignored (build dirs are ignored).
  git ls-files -z --cached --others --exclude-standard |
    xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf - | tar -x -C "$src"
else
  tar --exclude='./build*' --exclude='./obj-*' --exclude='./debian/tmp' \
    --exclude='./debian/partalign' --exclude='./debian/.debhelper' -cf - . | tar -x -C "$src"
fi

if [ -n "$check" ]; then
  options=
  profiles=
else
  options=nocheck
  profiles=nocheck
fi
# -J: parallel=N in DEB_BUILD_OPTIONS for debhelper. The log goes to OUT; its tail on failure.
if ! (cd "$src" && DEB_BUILD_OPTIONS="$options ${DEB_BUILD_OPTIONS:-}" \
      DEB_BUILD_PROFILES="$profiles" dpkg-buildpackage -us -uc -b "-J$jobs") \
    >"$out/build.log" 2>&1; then
  tail -n 40 "$out/build.log" >&2
  echo "package-deb: dpkg-buildpackage failed; log: $out/build.log" >&2
  exit 1
fi
mv "$out"/src/*.deb "$out"/
arch=$(dpkg --print-architecture)
ls "$out/partalign_${version}_${arch}.deb"
ls "$out"/*.deb | grep -v "/partalign_${version}_${arch}.deb$" || true
