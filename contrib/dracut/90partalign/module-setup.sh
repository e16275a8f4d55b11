#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dracut module of partalign (docs/at-boot.md): when a realign is staged for the next boot
# (`partalign apply --at-next-boot` wrote ${PARTALIGN_STATE_DIR:-/var/lib/partalign}/
# next-boot.conf), puts partalign with its libraries, the staged configuration, blkid and the
# journal filesystem's driver into the initrd, and a pre-mount hook that runs the realign
# before the root filesystem is checked and mounted (/usr/share/partalign/at-boot.sh, shared
# with the initramfs-tools script). Without a staged realign the module is left out.
# PARTALIGN_BINARY and PARTALIGN_AT_BOOT_SH override what is copied (tests).

pa_staged_conf() {
	echo "${PARTALIGN_STATE_DIR:-/var/lib/partalign}/next-boot.conf"
}

pa_binary() {
	if [ -n "${PARTALIGN_BINARY:-}" ]; then
		echo "$PARTALIGN_BINARY"
	elif [ -x /usr/sbin/partalign ]; then
		echo /usr/sbin/partalign
	else
		command -v partalign
	fi
}

# 0: include (a realign is staged); 255: only when asked for, and then it adds nothing.
check() {
	[ -f "$(pa_staged_conf)" ] || return 255
	[ -x "$(pa_binary)" ] || return 1
	# A realign the boot has applied already: forgotten here, and left out of this initramfs.
	"$(pa_binary)" at-boot --finished >&2 || true
	[ -f "$(pa_staged_conf)" ] || return 255
	return 0
}

depends() {
	return 0
}

installkernel() {
	local conf
	conf=$(pa_staged_conf)
	[ -f "$conf" ] || return 0
	case "$(sed -n 's/^PARTALIGN_JOURNAL_FSTYPE=//p' "$conf" | tr -d "\"'")" in
	ext2 | ext3 | ext4) hostonly='' instmods ext4 ;;
	vfat) hostonly='' instmods vfat nls_cp437 nls_ascii nls_utf8 nls_iso8859-1 ;;
	*)
		derror "partalign: $conf names no journal filesystem type partalign can use"
		return 1
		;;
	esac
}

install() {
	local conf
	conf=$(pa_staged_conf)
	if [ ! -f "$conf" ]; then
		dinfo "partalign: no realign staged ($conf); nothing added"
		return 0
	fi
	inst_binary "$(pa_binary)" /usr/sbin/partalign
	inst_multiple blkid mount umount sync sed tr grep tail cat sleep mkdir
	inst_simple "$conf" /etc/partalign/next-boot.conf
	inst_simple "${PARTALIGN_AT_BOOT_SH:-/usr/share/partalign/at-boot.sh}" /usr/share/partalign/at-boot.sh
	# shellcheck disable=SC2154 # moddir: dracut sets it to this module's directory
	inst_hook pre-mount 10 "$moddir/partalign-at-boot.sh"
	# A realign an earlier boot began: finished while dracut waits for the root (its fence).
	inst_hook initqueue/settled 10 "$moddir/partalign-at-boot-early.sh"
}
