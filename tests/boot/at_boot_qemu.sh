#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The realign of the disk the system runs from, at the next boot (issue 39, docs/at-boot.md),
# end to end: a raw disk whose root ext4 starts at sector 63 and whose ext4 /boot (partition 2)
# holds the journal; the realign staged from the host with `partalign apply --at-next-boot`
# while both are mounted; an initramfs built by mkinitramfs with contrib/initramfs-tools; a
# Debian kernel booted in QEMU (TCG). Then:
#   - the console shows the realign done and the system came up with every file intact
#     (PARTALIGN-ROOT-OK, printed by the disk's own /sbin/init after sha256sum -c);
#   - from the host: partition 1 starts at 2048, e2fsck -fn of both partitions is clean, every
#     file is intact, partition 2 kept its place and files, the stage is gone;
#   - a second boot with the same initramfs says "nothing staged", comes up, and changes
#     nothing (the digest of the table and of partition 1's bytes);
#   - the staged disk whose swap (partition 3) holds a hibernation image by then (also with
#     --boot-path-only): the boot says the realign waits, does not run it, and comes up with
#     partition 1 where it was.
# With --boot-path-only (what can be checked without `apply --at-next-boot` and `at-boot`): the
# staged configuration is written by hand; the boot must run the script, run partalign inside
# the initramfs (every library there) and stop the boot when `partalign at-boot` fails.
# With --dracut DIR the initramfs is dracut's (contrib/dracut/90partalign), dracut run from DIR
# holding an unpacked dracut-core (scripts/lib/at-boot-qemu.sh says how; not installed: it
# conflicts with initramfs-tools).
# With --grub the machine boots as an installed system does, through GRUB 2 for BIOS: boot.img in
# the MBR, core.img in the gap before the root (sectors 1..62), /boot on the root (partition 1, 62
# MiB here, 8 MiB of random files) with GRUB's modules, a grub.cfg finding the root by UUID, the
# kernel, and the initrd built after the staging and copied into the mounted root's /boot (as
# update-initramfs does). QEMU boots the disk (SeaBIOS -> GRUB -> kernel -> initramfs, no
# -kernel); the checks above, plus: GRUB found the root and loaded the kernel in both boots (the
# second one after the move), and its boot.img and core.img are byte for byte as installed. No
# hibernation boot (the case without --grub has it).
# Usage: tests/boot/at_boot_qemu.sh [--boot-path-only | --grub] [--dracut DIR] [--keep]
#   --keep: leave the work directory (the serial logs) also when every check passed
# Needs root (exit 77 otherwise) and qemu-system-x86, linux-image-amd64, busybox-static,
# initramfs-tools, and for --grub grub-pc-bin (exit 77 when missing; 1 under
# PARTALIGN_REQUIRE_DEVICE_TESTS=1).
# PARTALIGN=path/to/partalign overrides build/partalign.
set -euo pipefail
AB_NAME=at_boot_qemu
[[ " $* " != *" --grub "* ]] || AB_NAME=at_boot_qemu_grub
# shellcheck source=scripts/lib/at-boot-qemu.sh
source "$(dirname "$0")/../../scripts/lib/at-boot-qemu.sh"

boot_path_only=""
keep=""
dracut=""
grub=""
while [ $# -gt 0 ]; do
  case "$1" in
    --boot-path-only) boot_path_only=1; shift ;;
    --keep) keep=1; shift ;;
    --dracut) dracut=$2; shift 2 ;;
    --grub) grub=1; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "at_boot_qemu: unknown option '$1'" >&2; exit 1 ;;
  esac
done

if [ -n "$grub" ] && { [ -n "$boot_path_only" ] || [ -n "$dracut" ]; }; then
  echo "at_boot_qemu: --grub goes with neither --boot-path-only nor --dracut" >&2
  exit 1
fi
if [ -n "$grub" ]; then
  # The kernel and the initrd live on the root now: a larger root, fewer random files.
  export AB_GRUB=1 AB_P1_MIB=${AB_P1_MIB:-62} AB_DATA_MIB=${AB_DATA_MIB:-8}
fi

skip() {
  ab_say "SKIPPED: $*"
  [ "${PARTALIGN_REQUIRE_DEVICE_TESTS:-0}" = 1 ] && { ab_say "FAILED (PARTALIGN_REQUIRE_DEVICE_TESTS=1)"; exit 1; }
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (loop devices, mounts)"
missing=$(ab_missing)
[ -z "$missing" ] || skip "missing: $(echo "$missing" | paste -sd, -) (scripts/install-deps.sh)"

# partalign-test.<pid>.*: scripts/cleanup-test-loops.sh undoes what a killed run left.
work=$(mktemp -d "${TMPDIR:-/tmp}/partalign-test.$$.at-boot.XXXXXX")
finish() {
  local rc=$?
  ab_cleanup
  if [ -n "$keep" ] || [ "$rc" != 0 ]; then
    ab_say "work directory kept: $work"
  else
    rm -rf -- "$work"
  fi
}
trap finish EXIT
ab_init "$work"
failures=0
check() {  # DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then
    ab_say "ok: $what"
  else
    ab_say "FAIL: $what"
    failures=$((failures + 1))
  fi
}
in_log() { grep -q -- "$2" "$1"; }
not_in_log() { ! grep -q -- "$2" "$1"; }

t0=$(date +%s)
ab_say "kernel $ab_kver, partalign $("$ab_partalign" --version 2>&1 | head -1)"
ab_make_disk
disk=$work/disk.img
cp --sparse=always "$work/pristine.img" "$disk"
if [ -n "$boot_path_only" ]; then
  printf 'PARTALIGN_JOURNAL_UUID=%s\nPARTALIGN_JOURNAL_FSTYPE=ext4\n' "$ab_boot_uuid" \
    >"$work/state/next-boot.conf"
elif [ -n "$grub" ]; then
  grub_before=$(ab_grub_digest "$disk")
  # The realistic order: stage with the root mounted, then build the initramfs (it carries the
  # stage) and put it in the root's /boot, then reboot.
  update_initramfs() { ab_make_initrd "$work/initrd.img" && ab_install_initrd "$work/initrd.img"; }
  ab_stage "$disk" update_initramfs ||
    { ab_say "FAIL: staging the realign or installing the initrd failed (above)"; exit 1; }
  ab_say "staged: $(grep -c . "$work/stage.out") lines of output; initrd copied into the root's /boot"
  check "the staging wrote next-boot.conf naming partition 2's filesystem" \
    grep -qx "PARTALIGN_JOURNAL_UUID=$ab_boot_uuid" "$work/state/next-boot.conf"
  check "staging changed nothing on partition 1 yet" test "$(ab_part_start "$disk" 1)" = 63
  check "staging left GRUB's boot.img and core.img as installed" \
    test "$(ab_grub_digest "$disk")" = "$grub_before"
else
  ab_stage "$disk" || { ab_say "FAIL: staging the realign failed (above)"; exit 1; }
  ab_say "staged: $(grep -c . "$work/stage.out") lines of output"
  check "the staging wrote next-boot.conf naming partition 2's filesystem" \
    grep -qx "PARTALIGN_JOURNAL_UUID=$ab_boot_uuid" "$work/state/next-boot.conf"
  check "staging changed nothing on partition 1 yet" test "$(ab_part_start "$disk" 1)" = 63
  cp --sparse=always "$disk" "$work/staged.img"
fi
if [ -n "$dracut" ]; then
  # A failure stops the boot without a shell: QEMU ends instead of waiting at a prompt.
  export AB_APPEND="rd.shell=0 ${AB_APPEND:-}"
  ab_make_initrd_dracut "$work/initrd.img" "$dracut"
  script="usr/lib/dracut/hooks/pre-mount/10-partalign-at-boot.sh usr/lib/dracut/hooks/initqueue/settled/10-partalign-at-boot-early.sh"
else
  [ -n "$grub" ] || ab_make_initrd "$work/initrd.img"
  script="scripts/local-premount/partalign scripts/local-top/partalign"
fi
# dracut's image is not compressed (faster to build and boot here): cpio lists it.
{ [ -n "$dracut" ] && cpio -it <"$work/initrd.img" || lsinitramfs "$work/initrd.img"; } \
  >"$work/initrd.list" 2>/dev/null || true
# shellcheck disable=SC2086 # $script: the boot scripts, one word each
for f in usr/sbin/partalign etc/partalign/next-boot.conf usr/share/partalign/at-boot.sh $script; do
  check "the initramfs holds $f" grep -qx "$f" "$work/initrd.list"
done
ab_say "initramfs $(du -h "$work/initrd.img" | cut -f1) built in $(($(date +%s) - t0)) s since start"

# Through GRUB: QEMU boots the disk (no initrd of its own).
boot_initrd=$work/initrd.img
[ -z "$grub" ] || boot_initrd=""
log1=$work/boot1.log
ab_boot "$disk" "$boot_initrd" "$log1" || true
ab_say "first boot: ${ab_boot_seconds} s"
[ -z "$grub" ] || check "GRUB found the root by UUID and booted the kernel" \
  in_log "$log1" "PARTALIGN-GRUB: found the root by UUID"
check "the boot script ran partalign inside the initramfs" \
  in_log "$log1" "partalign: running the realign staged for this boot (partalign"
if [ -n "$boot_path_only" ]; then
  check "a failing at-boot stops the boot with what to do" \
    in_log "$log1" "partalign: the realign failed (exit"
  check "the stopped boot never mounted the root" not_in_log "$log1" "PARTALIGN-ROOT-"
  check "the disk is untouched" test "$(ab_part_start "$disk" 1)" = 63
else
  check "the realign said it is done" in_log "$log1" "partalign: at-boot done"
  check "the system came up with every file intact" in_log "$log1" "PARTALIGN-ROOT-OK"
  check "no panic" not_in_log "$log1" "do not mount it; boot this initramfs again"
  check "the disk after the realign" ab_check_moved "$disk"
  before=$(ab_disk_digest "$disk")
  [ -z "$grub" ] || check "the realign left GRUB's boot.img and core.img as installed" \
    test "$(ab_grub_digest "$disk")" = "$grub_before"
  log2=$work/boot2.log
  ab_boot "$disk" "$boot_initrd" "$log2" || true
  ab_say "second boot: ${ab_boot_seconds} s"
  [ -z "$grub" ] || check "the second boot: GRUB found its files and the root at their new place" \
    in_log "$log2" "PARTALIGN-GRUB: found the root by UUID"
  check "the second boot found nothing staged" in_log "$log2" "partalign: nothing staged"
  check "the second boot came up with every file intact" in_log "$log2" "PARTALIGN-ROOT-OK"
  check "the second boot changed neither the table nor partition 1" \
    test "$(ab_disk_digest "$disk")" = "$before"
fi
if [ -n "$grub" ]; then
  ab_say "total $(($(date +%s) - t0)) s"
  [ "$failures" = 0 ] || { ab_say "FAILED: $failures check(s); the serial logs are in $work"; exit 1; }
  ab_say "PASSED"
  exit 0
fi
# The staged disk again (the pristine one in --boot-path-only), now with a hibernation image.
hibernated=$work/staged.img
[ -z "$boot_path_only" ] || cp --sparse=always "$work/pristine.img" "$hibernated"
ab_hibernate "$hibernated"
before=$(ab_disk_digest "$hibernated")
log3=$work/boot-hibernated.log
ab_boot "$hibernated" "$work/initrd.img" "$log3" || true
ab_say "boot with a hibernation image: ${ab_boot_seconds} s"
check "with a hibernation image the realign waits" in_log "$log3" "a hibernation image is on"
check "with a hibernation image partalign does not run" \
  not_in_log "$log3" "partalign: running the realign"
check "with a hibernation image the system comes up" in_log "$log3" "PARTALIGN-ROOT-OK"
check "with a hibernation image nothing moved" test "$(ab_disk_digest "$hibernated")" = "$before"
ab_say "total $(($(date +%s) - t0)) s"
if [ "$failures" != 0 ]; then
  ab_say "FAILED: $failures check(s); the serial logs are in $work"
  exit 1
fi
ab_say "PASSED"
