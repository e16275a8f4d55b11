#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Cleans up after a test run that was killed before its destructors ran: unmounts, deletes the
# partition nodes of, and detaches every loop device whose backing file lies in a
# partalign-test.<pid>.* directory whose process <pid> is gone, then unmounts what is mounted
# inside those directories (the bench tests' FUSE filesystem) and removes them.
# Anything else (other loop devices, live test runs) is never touched.
# Usage: scripts/cleanup-test-loops.sh   (as root; does nothing otherwise)
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "cleanup-test-loops: not root, no loop devices to clean up"
  exit 0
fi

owner_is_dead() {  # $1 = a path containing partalign-test.<pid>.
  local pid
  pid=$(sed -n 's|.*/partalign-test\.\([0-9][0-9]*\)\..*|\1|p' <<<"$1")
  [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null
}

losetup --list --noheadings --output NAME,BACK-FILE | while read -r dev file; do
  case "$file" in */partalign-test.*) ;; *) continue ;; esac
  owner_is_dead "$file" || continue
  # `|| true`: no match is the usual case, and under pipefail it would end the script.
  { grep -E "^${dev}(p[0-9]+)? " /proc/self/mounts || true; } | cut -d' ' -f2 | while read -r mnt; do
    umount "$mnt" && echo "unmounted $mnt"
  done
  { grep -E "^${dev}(p[0-9]+)?[[:space:]]" /proc/swaps || true; } | cut -d' ' -f1 | while read -r swap; do
    swapoff "$swap" && echo "swapoff $swap"
  done
  partx -d "$dev" 2>/dev/null || true
  losetup -d "$dev" && echo "detached $dev ($file)"
done

for dir in "${TMPDIR:-/tmp}"/partalign-test.*; do
  [ -d "$dir" ] || continue
  owner_is_dead "$dir/" || continue
  # Mounts inside it, such as the bench tests' FUSE filesystem (src/sim/ssd_sim.cc).
  { cut -d' ' -f2 /proc/self/mounts | grep -F "$dir/" || true; } | while read -r mnt; do
    umount -l "$mnt" && echo "unmounted $mnt"
  done
  rm -rf -- "$dir" && echo "removed $dir"
done
exit 0
