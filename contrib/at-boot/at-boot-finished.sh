#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Run on the running system once it is up (partalign-at-boot-finished.service, docs/at-boot.md):
# when the realign staged for the boot is done, `partalign at-boot --finished` forgets the stage
# and the initramfs is rebuilt without partalign; while a realign is still staged (the boot has
# not run it), nothing changes. PARTALIGN_BINARY and PARTALIGN_STATE_DIR override where partalign
# and the stage are (tests).
set -eu

state="${PARTALIGN_STATE_DIR:-/var/lib/partalign}"
binary="${PARTALIGN_BINARY:-/usr/sbin/partalign}"
conf="$state/next-boot.conf"

[ -f "$conf" ] || exit 0
"$binary" at-boot --finished
if [ -f "$conf" ]; then
	exit 0 # still staged: the initramfs that runs it stays as it is
fi
if command -v update-initramfs >/dev/null 2>&1; then
	echo "partalign: rebuilding the initramfs without partalign (update-initramfs -u)"
	exec update-initramfs -u
elif command -v dracut >/dev/null 2>&1; then
	echo "partalign: rebuilding the initramfs without partalign (dracut -f)"
	exec dracut -f
fi
echo "partalign: neither update-initramfs nor dracut is here: rebuild the initramfs with your" \
	"distribution's tool; until then it mounts the journal partition at each boot and finds" \
	"nothing staged" >&2
exit 1
