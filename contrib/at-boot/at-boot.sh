# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=sh
# partalign's realign at boot, shared by the initramfs-tools boot scripts
# (contrib/initramfs-tools/scripts/{local-top,local-premount}/partalign) and the dracut hooks
# (contrib/dracut/90partalign/partalign-at-boot{,-early}.sh), which source it inside the
# initramfs from /usr/share/partalign/at-boot.sh (docs/at-boot.md). The caller defines
#   pa_stop MESSAGE   stops the boot (initramfs-tools: panic; dracut: die) and does not return
# and calls partalign_at_boot (before the root is mounted, after resume from hibernation) or
# partalign_at_boot_early (before the root is looked for: a realign an earlier boot began). When /etc/partalign/next-boot.conf (the staged realign's journal
# filesystem) is there, it finds that filesystem by UUID, mounts it read-write on
# /run/partalign/journal, runs `partalign at-boot` on it with every line on the console (and
# plymouth), and unmounts it. It never lets a failure pass: a half-moved root must not be
# mounted, and booting the same initramfs again resumes. Once per boot: the boot scripts of
# both may run more than once.

pa_conf=/etc/partalign/next-boot.conf
pa_run=/run/partalign
pa_mnt=$pa_run/journal

pa_say() {
	echo "partalign: $*"
	if command -v plymouth >/dev/null 2>&1 && plymouth --ping 2>/dev/null; then
		plymouth message --text="partalign: $*"
	fi
}

pa_fail() {
	if grep -q " $pa_mnt " /proc/mounts 2>/dev/null; then
		sync
		umount "$pa_mnt" 2>/dev/null
	fi
	pa_stop "partalign: $* -- the root filesystem may be half moved: do not mount it; boot this initramfs again to resume (or boot a system with partalign and run 'partalign resume')"
	exit 1
}

pa_conf_value() {
	sed -n "s/^$1=//p" "$pa_conf" | tr -d "\"'"
}

# The journal partition, by its filesystem UUID: /dev/disk/by-uuid may lack it (udev may not
# have named it yet), so blkid is asked too, by -U and by its whole list.
pa_find_journal() {
	if [ -b "/dev/disk/by-uuid/$1" ]; then
		echo "/dev/disk/by-uuid/$1"
		return 0
	fi
	pa_dev=$(blkid -U "$1" 2>/dev/null) && [ -b "$pa_dev" ] && echo "$pa_dev" && return 0
	pa_dev=$(blkid 2>/dev/null | grep -i " UUID=\"$1\"" | sed -n '1s/:.*//p')
	[ -n "$pa_dev" ] && [ -b "$pa_dev" ] && echo "$pa_dev" && return 0
	return 1
}

# The journal filesystem's UUID and type from the staged configuration, checked: pa_uuid,
# pa_fstype. Stops the boot when they are not valid.
pa_read_conf() {
	pa_uuid=$(pa_conf_value PARTALIGN_JOURNAL_UUID)
	pa_fstype=$(pa_conf_value PARTALIGN_JOURNAL_FSTYPE)
	case "$pa_uuid" in
	"" | *[!0-9A-Fa-f-]*)
		pa_fail "$pa_conf names no valid journal filesystem UUID ('$pa_uuid')"
		;;
	esac
	case "$pa_fstype" in
	ext2 | ext3 | ext4 | vfat) ;;
	*)
		pa_fail "$pa_conf names journal filesystem type '$pa_fstype' (expected ext2, ext3, ext4 or vfat)"
		;;
	esac
}

# Before the boot looks for the root filesystem (initramfs-tools' local-top, dracut's
# initqueue/settled): only when an earlier boot began the realign and did not end it
# (partalign-next-boot/started on the journal partition). The partition it moves is out of the
# table until its move is done (docs/at-boot.md, "The fence"), so the boot would wait for a root
# it cannot find. Resume from hibernation has not run yet here: an image waiting stops the boot,
# with what to do. Otherwise the realign waits for partalign_at_boot, after resume.
partalign_at_boot_early() {
	[ -f "$pa_conf" ] || return 0
	[ -e "$pa_run/done" ] && return 0
	[ -e "$pa_run/early" ] && return 0
	mkdir -p "$pa_run" "$pa_mnt"
	pa_read_conf
	pa_i=0
	while ! pa_dev=$(pa_find_journal "$pa_uuid"); do
		pa_i=$((pa_i + 1))
		if [ "$pa_i" -gt "${PARTALIGN_WAIT:-30}" ]; then
			# dracut runs its settled hooks again while it waits for the root: looked for
			# again then; initramfs-tools looks again in local-premount.
			pa_say "no partition holds the journal filesystem UUID=$pa_uuid yet"
			return 0
		fi
		sleep 1
	done
	: >"$pa_run/early"
	if ! grep -q " $pa_mnt " /proc/mounts; then
		mount -t "$pa_fstype" -o rw "$pa_dev" "$pa_mnt" ||
			pa_fail "cannot mount the journal partition $pa_dev ($pa_fstype) on $pa_mnt"
	fi
	if [ ! -e "$pa_mnt/partalign-next-boot/started" ]; then
		umount "$pa_mnt" || pa_fail "cannot unmount the journal partition $pa_dev"
		return 0
	fi
	if blkid -t TYPE=swsuspend >/dev/null 2>&1; then
		pa_fail "a hibernation image is on $(blkid -t TYPE=swsuspend -o device | tr '\n' ' ')and the realign an earlier boot began is unfinished: partalign moves no data under a hibernated system. Discard that image from a live system (mkswap on that partition loses the hibernated session), then boot this initramfs again"
	fi
	pa_say "the realign an earlier boot began did not end: finishing it before the root filesystem is looked for"
	partalign_at_boot
}

partalign_at_boot() {
	[ -f "$pa_conf" ] || return 0
	[ -e "$pa_run/done" ] && return 0
	mkdir -p "$pa_run"
	pa_read_conf

	# Never while a hibernation image waits: resume ran before this script, so an image still
	# there was not resumed (noresume, or it failed). The realign waits for a boot without it.
	if blkid -t TYPE=swsuspend >/dev/null 2>&1; then
		pa_say "a hibernation image is on $(blkid -t TYPE=swsuspend -o device | tr '\n' ' ')- the staged realign waits until it is resumed or discarded"
		return 0
	fi

	pa_wait=${PARTALIGN_WAIT:-30}
	pa_i=0
	while ! pa_dev=$(pa_find_journal "$pa_uuid"); do
		pa_i=$((pa_i + 1))
		[ "$pa_i" -gt "$pa_wait" ] && pa_fail "no partition holds the journal filesystem UUID=$pa_uuid after $pa_wait s"
		sleep 1
	done

	mkdir -p "$pa_mnt"
	if ! grep -q " $pa_mnt " /proc/mounts; then
		mount -t "$pa_fstype" -o rw "$pa_dev" "$pa_mnt" ||
			pa_fail "cannot mount the journal partition $pa_dev ($pa_fstype) on $pa_mnt"
	fi
	pa_version=$(partalign --version 2>&1) || pa_fail "partalign does not run in this initramfs: $pa_version"
	pa_say "running the realign staged for this boot ($pa_version; journal on $pa_dev)"
	pa_say "do not switch off; if power fails, the next boot resumes"

	# Every line on the console as it comes (and on plymouth); the exit status and the output
	# are kept for the message that stops the boot.
	: >"$pa_run/at-boot.log"
	{
		partalign at-boot "$pa_mnt" 2>&1
		echo "$?" >"$pa_run/at-boot.rc"
	} | while IFS= read -r pa_line; do
		echo "$pa_line"
		echo "$pa_line" >>"$pa_run/at-boot.log"
		if command -v plymouth >/dev/null 2>&1 && plymouth --ping 2>/dev/null; then
			plymouth message --text="$pa_line"
		fi
	done
	pa_rc=$(cat "$pa_run/at-boot.rc" 2>/dev/null)
	[ "$pa_rc" = 0 ] ||
		pa_fail "the realign failed (exit ${pa_rc:-unknown}): $(tail -n 3 "$pa_run/at-boot.log" | tr '\n' ' ')"
	sync
	umount "$pa_mnt" || pa_fail "cannot unmount the journal partition $pa_dev"
	: >"$pa_run/done"
	# The kernel was told the new table (BLKPG): let udev name the moved partitions again
	# (/dev/disk/by-uuid/...) before the boot looks for the root filesystem by them.
	if command -v udevadm >/dev/null 2>&1; then
		udevadm settle --timeout=30 || true
	fi
}
