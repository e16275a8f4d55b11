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
# With AB_GRUB=1 the disk boots through GRUB 2 for BIOS as grub-install leaves it on a DOS disk:
# boot.img in the MBR, core.img (biosdisk, part_msdos, ext2; prefix (hd0,msdos1)/boot/grub) in
# the embedding gap, sectors 1..62, and /boot on the root: /boot/grub (the i386-pc modules and a
# grub.cfg that finds the root by UUID and boots /boot/vmlinuz with /boot/initrd.img), the host's
# kernel as /boot/vmlinuz. The initrd is put there by ab_install_initrd, after the staging.
#
# Variables the caller may set before ab_init: PARTALIGN (the binary, default build/partalign),
# AB_NAME (the name in messages), AB_DATA_MIB (MiB of random files, default 24), AB_P1_MIB (the
# root partition's MiB, default 48, at most 62: its realigned place must end before 64 MiB),
# AB_GRUB (1: the GRUB disk above), AB_TIMEOUT (seconds per boot, default 300).

ab_name=${AB_NAME:-at-boot}
ab_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ab_loops=()
ab_mounts=()
ab_qemu_pid=""
ab_sector=512
ab_grub_dir=/usr/lib/grub/i386-pc
ab_p1_start=63
ab_p1_size=98304     # 48 MiB (AB_P1_MIB, read by ab_init)
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
  if [ "${AB_GRUB:-}" = 1 ]; then
    command -v grub-mkimage >/dev/null 2>&1 || echo "grub-mkimage (command; grub-common)"
    [ -f "$ab_grub_dir/boot.img" ] && [ -f "$ab_grub_dir/normal.mod" ] ||
      echo "grub-pc-bin ($ab_grub_dir/boot.img and modules)"
    [ -f /usr/share/seabios/bios-256k.bin ] || echo "SeaBIOS (/usr/share/seabios/bios-256k.bin)"
  fi
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
  ab_p1_size=$((${AB_P1_MIB:-48} * 2048))
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
  ab_root_uuid=$(cat /proc/sys/kernel/random/uuid)
  ab_boot_uuid=$(cat /proc/sys/kernel/random/uuid)
  [ "${AB_GRUB:-}" != 1 ] || ab_grub_files "$root"
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
  [ "${AB_GRUB:-}" != 1 ] || ab_grub_install "$img"
}

# /boot/grub and the kernel in the root tree ROOT (AB_GRUB=1). grub.cfg finds the root by its
# filesystem UUID (not by the partition core.img's prefix names), says so on the serial port
# (PARTALIGN-GRUB: ...), and boots; when the search or the boot fails it says so and halts, so
# that QEMU ends instead of waiting at GRUB's prompt.
ab_grub_files() {  # ROOT
  mkdir -p "$1/boot/grub/i386-pc"
  cp "$ab_grub_dir"/*.mod "$ab_grub_dir"/*.lst "$1/boot/grub/i386-pc/"
  cp "/boot/vmlinuz-$ab_kver" "$1/boot/vmlinuz"
  cat >"$1/boot/grub/grub.cfg" <<CFG
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
if search --no-floppy --fs-uuid --set=root $ab_root_uuid; then
  echo "PARTALIGN-GRUB: found the root by UUID at (\$root), prefix \$prefix"
else
  echo "PARTALIGN-GRUB-NO-ROOT: no filesystem with UUID $ab_root_uuid"
  halt
fi
linux /boot/vmlinuz root=UUID=$ab_root_uuid ro console=ttyS0 panic=-1 ${AB_APPEND:-}
initrd /boot/initrd.img
boot
echo "PARTALIGN-GRUB-BOOT-FAILED"
halt
CFG
}

# VALUE little-endian in BYTES bytes at byte OFFSET of FILE.
ab_poke_le() {  # FILE OFFSET VALUE BYTES
  local i esc=""
  for ((i = 0; i < $4; i++)); do esc+=$(printf '\\x%02x' $((($3 >> (8 * i)) & 255))); done
  printf '%b' "$esc" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# GRUB 2 for BIOS on IMAGE as grub-install (grub-setup) leaves it on a DOS disk, done by hand as
# tests/support/qemu_boot.cc does: core.img (grub-mkimage: biosdisk part_msdos ext2, prefix
# (hd0,msdos1)/boot/grub) at sector 1, in the embedding gap before partition 1, its diskboot
# blocklist pointing at the rest of it (sector 2 on); boot.img in the MBR's first 440 bytes (the
# disk signature and the table stay), its pointer (u64 at 0x5C) at sector 1.
ab_grub_install() {  # IMAGE
  local core=$ab_work/core.img sectors
  grub-mkimage -O i386-pc -o "$core" -p '(hd0,msdos1)/boot/grub' biosdisk part_msdos ext2
  sectors=$((($(stat -c %s "$core") + ab_sector - 1) / ab_sector))
  [ "$sectors" -lt "$ab_p1_start" ] ||
    { ab_say "core.img ($sectors sectors) does not fit before sector $ab_p1_start"; return 1; }
  truncate -s $((sectors * ab_sector)) "$core"
  ab_poke_le "$core" $((0x1F4)) 2 8
  ab_poke_le "$core" $((0x1FC)) $((sectors - 1)) 2
  ab_poke_le "$core" $((0x1FE)) $((0x820)) 2
  dd if="$core" of="$1" bs=$ab_sector seek=1 conv=notrunc status=none
  head -c 440 "$ab_grub_dir/boot.img" | dd of="$1" conv=notrunc status=none
  ab_poke_le "$1" $((0x5C)) 1 8
}

# The digest of GRUB's records on IMAGE: boot.img (the MBR's first 440 bytes) and core.img in
# the embedding gap (sectors 1..62).
ab_grub_digest() {  # IMAGE
  { head -c 440 "$1"; dd if="$1" bs=$ab_sector skip=1 count=$((ab_p1_start - 1)) status=none; } |
    sha256sum | cut -d' ' -f1
}

# After the staging, the root still mounted (AB_GRUB=1): the initramfs INITRD, built now that it
# carries the stage, goes into the root's /boot as update-initramfs puts it there on a running
# system; both manifests (the host's and the root's own) learn it.
ab_install_initrd() {  # INITRD
  local line
  line="$(sha256sum <"$1" | cut -d' ' -f1)  ./boot/initrd.img"
  cp "$1" "$ab_work/mnt-root/boot/initrd.img" &&
    echo "$line" >>"$ab_work/mnt-root/manifest.sha256" &&
    echo "$line" >>"$ab_work/manifest"
}

# Makes the swap partition of IMAGE hold a hibernation image, as far as blkid and the kernel
# see: the swap signature (the last 10 bytes of its first 4 KiB page) becomes S1SUSPEND.
ab_hibernate() {  # IMAGE
  printf 'S1SUSPEND\0' | dd of="$1" bs=1 seek=$((ab_p3_start * ab_sector + 4096 - 10)) \
    conv=notrunc status=none
}

# Stages the realign of IMAGE from the host, as a person would on the running system: root
# (partition 1) and /boot (partition 2) mounted, plan, apply --at-next-boot. The plan goes to
# $ab_work/plan.json, the staging's output to $ab_work/stage.out. COMMAND, when given, runs after
# a staging that succeeded, both partitions still mounted (chain its steps with &&: it runs where
# set -e does not stop it).
ab_stage() {  # IMAGE [COMMAND...]
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
  if [ "$rc" = 0 ] && [ $# -gt 1 ]; then
    "${@:2}" || { ab_say "after the staging, '${*:2}' failed"; rc=1; }
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
  install -D -m 0755 "$ab_src/contrib/initramfs-tools/scripts/local-top/partalign" \
    "$conf/scripts/local-top/partalign"
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

# Starts QEMU on IMAGE in the background (pid in ab_qemu_pid), serial console to LOG. With
# INITRD empty, the machine boots from the disk (SeaBIOS, then whatever is in the MBR: GRUB);
# otherwise QEMU loads the host's kernel and INITRD itself.
ab_boot_start() {  # IMAGE INITRD LOG
  local direct=()
  [ -z "$2" ] || direct=(-kernel "/boot/vmlinuz-$ab_kver" -initrd "$2"
    -append "root=UUID=$ab_root_uuid ro console=ttyS0 panic=-1 ${AB_APPEND:-}")
  rm -f "$3"
  timeout --signal=KILL "$ab_timeout" qemu-system-x86_64 -nodefaults -machine accel=tcg -m 1024 \
    "${direct[@]}" -drive "file=$1,format=raw,if=virtio" -serial "file:$3" -display none -no-reboot \
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
    sed 's/^[0-9a-f]*  //' "$ab_work/manifest" | sort | diff - "$ab_work/files.now" >/dev/null ||
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
