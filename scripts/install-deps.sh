#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the Debian 12 packages partalign needs, as root.
# Usage: scripts/install-deps.sh          every package: build, test and benchmark (CI)
#        scripts/install-deps.sh --demo   only what `scripts/build.sh --demo` and
#                                         `partalign demo` need (README's first command)
#        scripts/install-deps.sh --fuzz   every package, and clang-14 and its libFuzzer runtime,
#                                         for the long fuzz runs of scripts/fuzz (the fuzz
#                                         harnesses' smoke runs in the tests need only gcc)
#        scripts/install-deps.sh --package the demo's packages, debhelper and lintian: what
#                                         scripts/package-deb.sh and checking its .deb need
set -euo pipefail

set_name=full
case "${1:-}" in
  "") ;;
  --demo) set_name=demo ;;
  --fuzz) set_name=fuzz ;;
  --package) set_name=package ;;
  *) echo "install-deps: unknown option '$1' (expected --demo, --fuzz, --package or nothing)" >&2
     exit 1 ;;
esac

if [ "$(id -u)" != 0 ]; then
  echo "install-deps: must run as root (it calls apt-get)" >&2
  exit 1
fi

# The demo set: what building the partalign binary alone and running `partalign demo` need.
demo_packages=(
  # build
  build-essential cmake ninja-build pkg-config
  # C libraries of the I/O edge (libparted-dev brings libparted-fs-resize too: the FAT shrink
  # of "make room", docs/resize.md)
  libblkid-dev libfdisk-dev libparted-dev libmount-dev libsmartcols-dev liburing-dev libxxhash-dev
  # the terminal of plan --interactive (ncursesw, as cfdisk uses)
  libncurses-dev
  # the LUKS payload offset of the stack walk (src/io/stack/luks_header.cc)
  libcryptsetup-dev
  # the used blocks of ext2/3/4 (the mover copies only those; docs/used-map.md)
  libext2fs-dev
  # Windows' BCD store and MountedDevices inside NTFS partitions, read without a mount
  # (src/io/boot: libntfs-3g and libhivex)
  ntfs-3g-dev libhivex-dev
  # header-only libraries of the core and CLI
  nlohmann-json3-dev libcli11-dev libfmt-dev
  # the tools whose versions and behaviour `explain` reports in the demo
  util-linux fdisk parted gdisk
)

# The package set: what scripts/package-deb.sh (dpkg-buildpackage from debian/, without the
# tests) needs beyond the demo's build packages, and lintian to check the .deb.
package_packages=(debhelper lintian)

# The full set adds the tests, their oracles and fixtures, and the benches.
packages=(
  "${demo_packages[@]}"
  clang-format
  # tests
  libgtest-dev libgmock-dev libfuse3-dev fuse3
  # the real tools, used as oracles and as test fixtures
  util-linux fdisk parted gdisk fio systemd e2fsprogs dosfstools xxhash
  # drives plan --interactive in its end-to-end tests (send-keys, capture-pane)
  tmux
  # filesystems whose superblock sizes the planner reads (tests/io/device/blkid_probe_test.cc)
  xfsprogs btrfs-progs
  # scripts/bench-vs-fio reads partalign's and fio's JSON
  jq
  # the completions test loads contrib/completions/_partalign in a real zsh (bash is there)
  zsh bash-completion
  # the stack tests' oracles and fixtures: pvcreate/vgcreate/lvcreate/pvs/lvs and cryptsetup
  # (tests/io/stack, tests/cli/commands/*stack*)
  lvm2 cryptsetup-bin
  # the used-map tests cross-check partalign's maps with partclone's domain files, and put
  # files on vfat with mtools (the test kernel has no vfat driver to mount it)
  partclone mtools
  # the report test renders the HTML page in a headless browser (screenshot, CSP log) and needs a
  # font for its text (tests/cli/commands/report_test.cc)
  chromium fonts-dejavu-core
  # the .deb test builds it from debian/ and checks it (tests/cli/contrib/deb_package_test.cc)
  "${package_packages[@]}"
  # scripts/build-matrix builds with Clang 14 too (Debian's clang)
  clang
  # runs contrib/ansible/partalign-audit.yml against images (tests/cli/contrib/ansible_playbook_test.cc)
  ansible-core
  # the boot records' tests (tests/io/boot): the filesystems that record their start, made and
  # checked by their own tools (mkntfs/ntfsfix/ntfscat/ntfs-3g, mkfs.exfat/fsck.exfat and a FUSE
  # mount: the test kernel has no exFAT driver), hives read back with hivexget; disks that boot
  # GRUB 2 and EXTLINUX on BIOS, booted in QEMU with SeaBIOS (tests/support/qemu_boot.h);
  # scripts/apply-invariant-sweep fills partitions with exFAT and NTFS holding files the same way
  ntfs-3g exfatprogs exfat-fuse libhivex-bin
  qemu-system-x86 grub-pc-bin grub-common extlinux syslinux-common
  # the realign at the next boot (tests/boot/at_boot_qemu.sh, docs/at-boot.md): a Debian kernel
  # and its modules to boot in QEMU, mkinitramfs to build its initramfs with partalign's hook,
  # and a static busybox as the test disk's whole root system
  linux-image-amd64 initramfs-tools busybox-static
  # shellcheck for the boot scripts (contrib/initramfs-tools, contrib/dracut)
  shellcheck
  # the installer sweep's oracles (tests/tools/installer_sweep.cc, docs/explain.md): Calamares'
  # partition module and KPMcore with Qt to build partalign_calamares_layout against (calamares
  # only without its recommends, which would add udev: see mdadm below); Debian's libblockdev,
  # pyparted and bytesize under blivet, which comes from PyPI into a venv (below)
  libkpmcore-dev qtbase5-dev calamares
  python3-venv python3-blockdev gir1.2-blockdev-2.0 python3-parted python3-bytesize
)

if [ "$set_name" = fuzz ]; then
  packages+=(clang-14 libclang-rt-14-dev)
elif [ "$set_name" = demo ]; then
  packages=("${demo_packages[@]}")
elif [ "$set_name" = package ]; then
  packages=("${demo_packages[@]}" "${package_packages[@]}")
fi

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages of the $set_name set already installed"
else
  echo "install-deps: installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The demo and the package need nothing below (test oracles only).
if [ "$set_name" = demo ] || [ "$set_name" = package ]; then
  exit 0
fi

# `mdadm --examine` is the oracle for the MD superblocks the stack tests write. The mdadm package
# depends on udev, and installing udev adds udevadm, which changes what parted does on machines
# without a udev daemon like this one (environment.md): so the Debian package is unpacked, not
# installed, and only its mdadm binary is kept (tests/io/stack/md_reader_test.cc looks here).
# (initramfs-tools, above, for the at-boot test, depends on udev too: udevadm is there since
# issue 39, and every test passes with it, no udev daemon running.)
mdadm_bin=/opt/partalign-test-tools/sbin/mdadm
if [ ! -x "$mdadm_bin" ]; then
  echo "install-deps: unpacking mdadm into ${mdadm_bin%/sbin/mdadm}"
  work=$(mktemp -d)
  (cd "$work" && apt-get download -qq mdadm 2>/dev/null || { apt-get update -qq && apt-get download -qq mdadm; })
  dpkg-deb -x "$work"/mdadm_*.deb "$work/root"
  install -D -m 0755 "$work/root/sbin/mdadm" "$mdadm_bin"
  rm -rf "$work"
fi

# blivet (Anaconda's partitioning library) is not packaged for Debian 12: the installer sweep
# runs the PyPI release that still uses libblockdev 2 (blivet 3.8 moved to libblockdev 3), in a
# venv of Debian's python3 that sees the Debian packages above (CMake's PARTALIGN_BLIVET_PYTHON).
blivet_venv=/usr/local/lib/partalign/blivet-venv
if [ ! -x "$blivet_venv/bin/python" ] || ! "$blivet_venv/bin/python" -c 'import blivet' 2>/dev/null; then
  echo "install-deps: installing blivet 3.7.1 into $blivet_venv"
  /usr/bin/python3 -m venv --system-site-packages "$blivet_venv"
  "$blivet_venv/bin/pip" install -q 'blivet==3.7.1'
fi

# `promtool check metrics` checks the node_exporter textfile `audit --format prometheus` writes
# (tests/cli/commands/audit_fleet_test.cc). Only promtool is needed, not a Prometheus server: the
# Debian package is unpacked, not installed (no service, no user), and only promtool is kept.
promtool_bin=/opt/partalign-test-tools/bin/promtool
if [ ! -x "$promtool_bin" ]; then
  echo "install-deps: unpacking promtool into ${promtool_bin%/bin/promtool}"
  work=$(mktemp -d)
  (cd "$work" && apt-get download -qq prometheus 2>/dev/null || { apt-get update -qq && apt-get download -qq prometheus; })
  dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
  install -D -m 0755 "$work/root/usr/bin/promtool" "$promtool_bin"
  rm -rf "$work"
fi
