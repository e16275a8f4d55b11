# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=bash
# Shared by tests/boot/at_boot_qemu.sh and scripts/bench-at-boot-kill (sourced, not run): a
# small raw disk whose root ext4 starts at sector 63, a realign of it staged from the host with
# `partalign apply --at-next-boot`, an initramfs built by mkinitramfs with partalign's hook and
# boot script (contrib/initramfs-tools), a Debian kernel booting it in QEMU (TCG), and the checks
# of the disk afterwards. Every loop device and mount it makes is undone by its own name in
# ab_cleanup (the callers' EXIT trap).
#
# The disk (160 MiB, DOS table): partition 1 = the root ext4 at sector 63 (48 MiB), a busybox
# root whose /sbin/init checks every file against a manifest made at build time and prints
# PARTALIGN-ROOT-OK or PARTALIGN-ROOT-BAD, then powers off; random data files. Partition 2 = a
# 96 MiB ext4 "/boot" at 64 MiB (aligned, not moved by the plan): the journal partition.
# Partition 3 = swap at 160 MiB, where ab_hibernate puts a hibernation image's signature.
#
# Variables the caller may set before ab_init: PARTALIGN (the binary, default build/partalign),
# AB_NAME (the name in messages), AB_DATA_MIB (MiB of random files, default 24), AB_TIMEOUT
# (seconds per boot, default 300).

ab_name=${AB_NAME:-at-boot}
ab_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ab_loops=()
ab_mounts=()
ab_qemu_pid=""
ab_sector=512
ab_p1_start=63
ab_p1_size=98304     # 48 MiB
# 96 MiB: the journal of the root's move is there, and while the root is mounted (at staging)
# its used blocks cannot be trusted, so its saved copies are counted for all of it (docs/at-boot.md).
ab_p2_start=131072   # 64 MiB
ab_p2_size=196608    # 96 MiB
ab_p3_start=327680   # 160 MiB: swap, 8 MiB (a hibernation image can be put in it)
ab_p3_size=16384
ab_disk_sectors=$((ab_p3_start + ab_p3_size))

ab_say() { echo "$ab_name: $*"; }

# What is missing to run at all, one per line (nothing when all is there).
ab_missing() {
  local tool
  for tool in qemu-system-x86_64 mkinitramfs mke2fs mkswap e2fsck sfdisk partx losetup \
      sha256sum timeout; do
    command -v "$tool" >/dev/null 2>&1 || echo "$tool (command)"
  done
  [ -f /usr/share/initramfs-tools/hook-functions ] || echo "initramfs-tools"
  { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || echo "busybox-static (/bin/busybox, static)"
  [ -n "$(ab_kernel_version)" ] || echo "linux-image-amd64 (/boot/vmlinuz-* with /lib/modules)"
  [ -x "${PARTALIGN:-$ab_src/build/partalign}" ] || echo "partalign binary (${PARTALIGN:-$ab_src/build/partalign}; build first)"
}

# The newest kernel under /boot whose modules are installed.
ab_kernel_version() {
  local k v
  for k in $(printf '%s\n' /boot/vmlinuz-* | sort -V -r); do
    v=${k#/boot/vmlinuz-}
    [ -d "/lib/modules/$v" ] && { echo "$v"; return; }
  done
}

ab_init() {  # WORK_DIR
  ab_work=$1
  ab_partalign=${PARTALIGN:-$ab_src/build/partalign}
  ab_kver=$(ab_kernel_version)
  ab_timeout=${AB_TIMEOUT:-300}
  mkdir -p "$ab_work/state" "$ab_work/mnt-root" "$ab_work/mnt-boot"
}

# Cuts the power of the QEMU ab_boot_start started: SIGKILL to QEMU itself (ab_qemu_pid is the
# `timeout` around it, which does not pass SIGKILL on) and to the timeout, and waits for both,
# so that the disk image's lock is free for the next boot.
ab_power_cut() {
  [ -n "$ab_qemu_pid" ] || return 0
  pkill -KILL -P "$ab_qemu_pid" 2>/dev/null || true
  kill -KILL "$ab_qemu_pid" 2>/dev/null || true
  wait "$ab_qemu_pid" 2>/dev/null || true
  ab_qemu_pid=""
}

ab_cleanup() {
  local i
  ab_power_cut
  for ((i = ${#ab_mounts[@]} - 1; i >= 0; i--)); do
    mountpoint -q "${ab_mounts[i]}" && umount "${ab_mounts[i]}"
  done
  ab_mounts=()
  for i in "${ab_loops[@]}"; do
    partx -d "$i" 2>/dev/null || true
    losetup -d "$i" 2>/dev/null || true
  done
  ab_loops=()
}

ab_attach() {  # IMAGE -> the loop device in REPLY, its partitions added (BLKPG)
  REPLY=$(losetup --find --show "$1")
  ab_loops+=("$REPLY")
  partx -a "$REPLY"
}

ab_detach() {  # LOOP
  local rest=() l
  partx -d "$1" 2>/dev/null || true
  losetup -d "$1"
  for l in "${ab_loops[@]}"; do [ "$l" = "$1" ] || rest+=("$l"); done
  ab_loops=("${rest[@]}")
}

ab_mount() {  # DEV DIR [OPTIONS]
  mount ${3:+-o "$3"} "$1" "$2"
  ab_mounts+=("$2")
}

ab_umount() {  # DIR
  local rest=() m
  umount "$1"
  for m in "${ab_mounts[@]}"; do [ "$m" = "$1" ] || rest+=("$m"); done
  ab_mounts=("${rest[@]}")
}

# Builds $ab_work/pristine.img, the root's manifest ($ab_work/manifest, paths relative to the
# root) and the boot partition's ($ab_work/boot-manifest). Sets ab_root_uuid, ab_boot_uuid.
ab_make_disk() {
  local root=$ab_work/rootfs boot=$ab_work/bootfs img=$ab_work/pristine.img i
  rm -rf "$root" "$boot"
  mkdir -p "$root"/{bin,sbin,dev,proc,sys,run,tmp,etc,data/a/b} "$boot/grub"
  cp /bin/busybox "$root/bin/busybox"
  cat >"$root/sbin/init" <<'INIT'
#!/bin/busybox sh
# The test's whole system: checks every file against the manifest made when the disk was
# built, says so on the console and powers off.
cd /
if /bin/busybox sha256sum -c -s /manifest.sha256; then
  echo "PARTALIGN-ROOT-OK $(/bin/busybox wc -l < /manifest.sha256) files"
else
  echo PARTALIGN-ROOT-BAD
  /bin/busybox sha256sum -c /manifest.sha256 2>&1 | /bin/busybox grep -v ': OK$' | /bin/busybox head -5
fi
/bin/busybox sync
/bin/busybox poweroff -f
INIT
  chmod 755 "$root/sbin/init"
  for i in $(seq 1 "${AB_DATA_MIB:-24}"); do
    head -c $((1024 * 1024 - i * 777)) /dev/urandom >"$root/data/$([ $((i % 3)) = 0 ] && echo a/b/)f$i"
  done
  echo "the boot partition of the at-boot test: it must come back unchanged" >"$boot/grub/marker"
  head -c 300000 /dev/urandom >"$boot/vmlinuz-test"
  (cd "$root" && find . -type f ! -name manifest.sha256 -print0 | sort -z | xargs -0 sha256sum) \
    >"$ab_work/manifest"
  cp "$ab_work/manifest" "$root/manifest.sha256"
  (cd "$boot" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$ab_work/boot-manifest"
  ab_root_uuid=$(cat /proc/sys/kernel/random/uuid)
  ab_boot_uuid=$(cat /proc/sys/kernel/random/uuid)
  rm -f "$img"
  truncate -s $((ab_disk_sectors * ab_sector)) "$img"
  # A DOS table as old tools made it: the first partition at sector 63.
  printf 'label: dos\nstart=%s, size=%s, type=83, bootable\nstart=%s, size=%s, type=83\nstart=%s, size=%s, type=82\n' \
    "$ab_p1_start" "$ab_p1_size" "$ab_p2_start" "$ab_p2_size" "$ab_p3_start" "$ab_p3_size" |
    sfdisk --quiet "$img"
  mke2fs -q -F -t ext4 -L pa-root -U "$ab_root_uuid" -E offset=$((ab_p1_start * ab_sector)) \
    -d "$root" "$img" $((ab_p1_size / 2))k
  mke2fs -q -F -t ext4 -L pa-boot -U "$ab_boot_uuid" -E offset=$((ab_p2_start * ab_sector)) \
    -d "$boot" "$img" $((ab_p2_size / 2))k
  rm -f "$ab_work/swap"
  truncate -s $((ab_p3_size * ab_sector)) "$ab_work/swap"
  mkswap -q "$ab_work/swap"
  dd if="$ab_work/swap" of="$img" bs=1M seek=$((ab_p3_start * ab_sector)) oflag=seek_bytes \
    conv=notrunc,sparse status=none
  rm -rf "$root" "$boot" "$ab_work/swap"
}

# Makes the swap partition of IMAGE hold a hibernation image, as far as blkid and the kernel
# see: the swap signature (the last 10 bytes of its first 4 KiB page) becomes S1SUSPEND.
ab_hibernate() {  # IMAGE
  printf 'S1SUSPEND\0' | dd of="$1" bs=1 seek=$((ab_p3_start * ab_sector + 4096 - 10)) \
    conv=notrunc status=none
}

# Stages the realign of IMAGE from the host, as a person would on the running system: root
# (partition 1) and /boot (partition 2) mounted, plan, apply --at-next-boot. The plan goes to
# $ab_work/plan.json, the staging's output to $ab_work/stage.out.
ab_stage() {  # IMAGE
  local loop rc=0
  ab_attach "$1"
  loop=$REPLY
  ab_mount "${loop}p1" "$ab_work/mnt-root"
  ab_mount "${loop}p2" "$ab_work/mnt-boot"
  PARTALIGN_STATE_DIR=$ab_work/state "$ab_partalign" plan --at-next-boot --output "$ab_work/plan.json" "$loop" \
    >"$ab_work/plan.out" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    PARTALIGN_STATE_DIR=$ab_work/state "$ab_partalign" apply --at-next-boot "$ab_work/plan.json" \
      --yes >"$ab_work/stage.out" 2>&1 || rc=$?
  fi
  ab_umount "$ab_work/mnt-boot"
  ab_umount "$ab_work/mnt-root"
  ab_detach "$loop"
  if [ "$rc" != 0 ]; then
    cat "$ab_work/plan.out" "$ab_work/stage.out" 2>/dev/null
    return 1
  fi
}

# The initramfs: mkinitramfs with a configuration directory of its own (a copy of
# /etc/initramfs-tools plus partalign's hook and boot script), only the modules the test's
# machine needs (the hook adds the journal filesystem's), PARTALIGN_STATE_DIR and
# PARTALIGN_BINARY from the test. The binary copied is partalign without its debug sections
# (the same code: a smaller initramfs boots faster).
ab_make_initrd() {  # OUT
  local conf=$ab_work/initramfs-conf
  rm -rf "$conf"
  cp -a /etc/initramfs-tools "$conf"
  install -D -m 0755 "$ab_src/contrib/initramfs-tools/hooks/partalign" "$conf/hooks/partalign"
  install -D -m 0755 "$ab_src/contrib/initramfs-tools/scripts/local-premount/partalign" \
    "$conf/scripts/local-premount/partalign"
  sed -i 's/^MODULES=.*/MODULES=list/; s/^BUSYBOX=.*/BUSYBOX=y/' "$conf/initramfs.conf"
  printf 'virtio_pci\nvirtio_blk\next4\n' >"$conf/modules"
  mkdir -p "$conf/conf.d"
  echo "RESUME=none" >"$conf/conf.d/resume"
  objcopy --strip-debug "$ab_partalign" "$ab_work/partalign-initramfs"
  # A sanitized build (scripts/build.sh --sanitize, as CI builds) reads its ASan suppressions
  # from the source tree at start: a test-only hook puts that file in the initramfs at the
  # same path, so that the sanitizers check partalign at boot too.
  local supp
  supp=$(strings -a "$ab_partalign" | grep -o -m1 '/[^:]*/tests/sanitize/asan\.supp' || true)
  if [ -n "$supp" ]; then
    cat >"$conf/hooks/partalign-test-sanitizer" <<HOOK
#!/bin/sh
[ "\$1" = prereqs ] && exit 0
mkdir -p "\${DESTDIR}${supp%/*}"
cp "$ab_src/tests/sanitize/asan.supp" "\${DESTDIR}$supp"
HOOK
    chmod 755 "$conf/hooks/partalign-test-sanitizer"
  fi
  PARTALIGN_STATE_DIR=$ab_work/state PARTALIGN_BINARY=$ab_work/partalign-initramfs \
    PARTALIGN_AT_BOOT_SH=$ab_src/contrib/at-boot/at-boot.sh \
    mkinitramfs -d "$conf" -o "$1" "$ab_kver" >"$ab_work/mkinitramfs.out" 2>&1 ||
    { cat "$ab_work/mkinitramfs.out"; return 1; }
}

# The same with dracut instead (Fedora, openSUSE, Arch): the module contrib/dracut/90partalign
# in a copy of dracut's modules, dracut run from DRACUT_ROOT, a directory holding an unpacked
# dracut-core (`apt-get download dracut-core && dpkg-deb -x dracut-core_*.deb DIR`: Debian's
# dracut package conflicts with initramfs-tools, so it is not installed), without systemd in
# the initrd: dracut's own shell init runs the pre-mount hooks.
ab_make_initrd_dracut() {  # OUT DRACUT_ROOT
  local base=$ab_work/dracut supp includes=()
  rm -rf "$base"
  mkdir -p "$base/conf.d"
  cp -a "$2/usr/lib/dracut" "$base/lib"
  cp -a "$ab_src/contrib/dracut/90partalign" "$base/lib/modules.d/"
  objcopy --strip-debug "$ab_partalign" "$ab_work/partalign-initramfs"
  supp=$(strings -a "$ab_partalign" | grep -o -m1 '/[^:]*/tests/sanitize/asan\.supp' || true)
  [ -z "$supp" ] || includes=(--include "$ab_src/tests/sanitize/asan.supp" "$supp")
  dracutbasedir=$base/lib PARTALIGN_STATE_DIR=$ab_work/state \
    PARTALIGN_BINARY=$ab_work/partalign-initramfs PARTALIGN_AT_BOOT_SH=$ab_src/contrib/at-boot/at-boot.sh \
    bash "$2/usr/bin/dracut" --conf /dev/null --confdir "$base/conf.d" --no-hostonly \
    --kver "$ab_kver" -m "bash base rootfs-block udev-rules fs-lib partalign" \
    --drivers "virtio_pci virtio_blk ext4" --no-compress --force "${includes[@]}" "$1" \
    >"$ab_work/dracut.out" 2>&1 || { tail -30 "$ab_work/dracut.out"; return 1; }
}

# Starts QEMU on IMAGE in the background (pid in ab_qemu_pid), serial console to LOG.
ab_boot_start() {  # IMAGE INITRD LOG
  rm -f "$3"
  timeout --signal=KILL "$ab_timeout" qemu-system-x86_64 -nodefaults -machine accel=tcg -m 1024 \
    -kernel "/boot/vmlinuz-$ab_kver" -initrd "$2" \
    -append "root=UUID=$ab_root_uuid ro console=ttyS0 panic=-1 ${AB_APPEND:-}" \
    -drive "file=$1,format=raw,if=virtio" -serial "file:$3" -display none -no-reboot \
    >"$ab_work/qemu.out" 2>&1 &
  ab_qemu_pid=$!
}

ab_boot_wait() {  # -> QEMU's (or timeout's) exit status
  local rc=0
  wait "$ab_qemu_pid" || rc=$?
  ab_qemu_pid=""
  return "$rc"
}

# Boots IMAGE once to its end; the seconds it took in ab_boot_seconds (read by the callers).
# shellcheck disable=SC2034
ab_boot() {  # IMAGE INITRD LOG
  local t0 rc=0
  t0=$(date +%s%N)
  ab_boot_start "$@"
  ab_boot_wait || rc=$?
  ab_boot_seconds=$(awk -v ns=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.1f", ns / 1e9 }')
  [ "$rc" = 0 ] || { ab_say "QEMU exited $rc (124/137: the ${ab_timeout} s timeout)"; cat "$ab_work/qemu.out"; }
  return "$rc"
}

# The start of partition N of IMAGE, from sfdisk's dump.
ab_part_start() {  # IMAGE N
  sfdisk --dump "$1" | sed -n "s|^$1$2 : start= *\([0-9]*\),.*|\1|p"
}
ab_part_size() {  # IMAGE N
  sfdisk --dump "$1" | sed -n "s|^$1$2 : .*size= *\([0-9]*\),.*|\1|p"
}

# The digest of partition 1's bytes and of the table, to prove a boot changed nothing.
# The table and partition 1's bytes but its first 4 KiB: the ext4 superblock there holds the
# mount time and count, which a boot's own mount writes (dracut mounts the root read-write once
# before its fsck), while every other byte of a root the realign leaves alone stays.
ab_disk_digest() {  # IMAGE
  local start size
  start=$(ab_part_start "$1" 1)
  size=$(ab_part_size "$1" 1)
  { sfdisk --dump "$1"; dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip=$((start * ab_sector + 4096)) \
      count=$((size * ab_sector - 4096)) status=none; } | sha256sum | cut -d' ' -f1
}

# The disk after a completed realign: partition 1 at 2048 with its size, partition 2 where it
# was, both filesystems clean, every file of the root intact and no other, the boot partition's
# own files intact and the stage gone from it. Prints what is off; 0 when nothing is.
ab_check_moved() {  # IMAGE
  local img=$1 bad=0 loop start
  start=$(ab_part_start "$img" 1)
  [ "$start" = 2048 ] || { ab_say "partition 1 starts at sector '$start', not 2048"; bad=1; }
  [ "$(ab_part_size "$img" 1)" -ge "$ab_p1_size" ] ||
    { ab_say "partition 1 is $(ab_part_size "$img" 1) sectors, smaller than $ab_p1_size"; bad=1; }
  if [ "$(ab_part_start "$img" 2)" != "$ab_p2_start" ] || [ "$(ab_part_size "$img" 2)" != "$ab_p2_size" ]; then
    ab_say "partition 2 moved or resized: $(sfdisk --dump "$img" | grep "${img}2")"; bad=1
  fi
  ab_attach "$img"
  loop=$REPLY
  e2fsck -fn "${loop}p1" >"$ab_work/fsck1.out" 2>&1 ||
    { ab_say "e2fsck -fn of partition 1:"; tail -5 "$ab_work/fsck1.out"; bad=1; }
  e2fsck -fn "${loop}p2" >"$ab_work/fsck2.out" 2>&1 ||
    { ab_say "e2fsck -fn of partition 2:"; tail -5 "$ab_work/fsck2.out"; bad=1; }
  if ab_mount "${loop}p1" "$ab_work/mnt-root" ro; then
    (cd "$ab_work/mnt-root" && sha256sum --quiet -c "$ab_work/manifest") >"$ab_work/files.out" 2>&1 ||
      { ab_say "root files differ:"; head -5 "$ab_work/files.out"; bad=1; }
    (cd "$ab_work/mnt-root" && find . -type f ! -name manifest.sha256 | sort) >"$ab_work/files.now"
    sed 's/^[0-9a-f]*  //' "$ab_work/manifest" | diff - "$ab_work/files.now" >/dev/null ||
      { ab_say "the root holds other files than it was built with"; bad=1; }
    ab_umount "$ab_work/mnt-root"
  else
    ab_say "partition 1 does not mount"; bad=1
  fi
  if ab_mount "${loop}p2" "$ab_work/mnt-boot" ro; then
    (cd "$ab_work/mnt-boot" && sha256sum --quiet -c "$ab_work/boot-manifest") >"$ab_work/boot.out" 2>&1 ||
      { ab_say "boot partition files differ:"; head -5 "$ab_work/boot.out"; bad=1; }
    (cd "$ab_work/mnt-boot" && find . -type f ! -path './partalign-next-boot/*' ! -path './lost+found/*' |
      sort) >"$ab_work/boot.now"
    sed 's/^[0-9a-f]*  //' "$ab_work/boot-manifest" | diff - "$ab_work/boot.now" >/dev/null ||
      { ab_say "the boot partition holds other files than before:"; cat "$ab_work/boot.now"; bad=1; }
    for f in plan.json stage.json; do
      [ ! -e "$ab_work/mnt-boot/partalign-next-boot/$f" ] ||
        { ab_say "the stage is still there after the realign (partalign-next-boot/$f)"; bad=1; }
    done
    ab_umount "$ab_work/mnt-boot"
  else
    ab_say "partition 2 does not mount"; bad=1
  fi
  ab_detach "$loop"
  return "$bad"
}
