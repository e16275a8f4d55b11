#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# dracut initqueue/settled hook of partalign (docs/at-boot.md, "The fence"): while dracut waits
# for the root device, finishes a realign an earlier boot began and did not end (a power loss),
# whose moved partition is out of the table until then, so that the root can be found. A first
# run waits for the pre-mount hook as before. The work is /usr/share/partalign/at-boot.sh's;
# once per boot (the settled hooks run on every pass of dracut's wait).
[ -f /etc/partalign/next-boot.conf ] || return 0 2>/dev/null || exit 0
# shellcheck source=/dev/null
command -v die >/dev/null || . /lib/dracut-lib.sh
pa_stop() {
	die "$*"
}
# shellcheck source=contrib/at-boot/at-boot.sh
. /usr/share/partalign/at-boot.sh
partalign_at_boot_early
