#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# dracut pre-mount hook of partalign (docs/at-boot.md): runs a realign staged with
# `partalign apply --at-next-boot` before the root filesystem is mounted (and checked). The
# work is /usr/share/partalign/at-boot.sh's (module-setup.sh put it there). dracut-pre-mount
# ignores a hook's status, so a failure stops the boot with die: a half-moved root is never
# mounted.
[ -f /etc/partalign/next-boot.conf ] || return 0 2>/dev/null || exit 0
# shellcheck source=/dev/null
command -v die >/dev/null || . /lib/dracut-lib.sh
pa_stop() {
	die "$*"
}
# shellcheck source=contrib/at-boot/at-boot.sh
. /usr/share/partalign/at-boot.sh
partalign_at_boot
