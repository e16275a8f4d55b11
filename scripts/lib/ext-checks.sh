# SPDX-License-Identifier: GPL-3.0-or-later
# Checks of an ext2/3/4 filesystem after a used-only move, for the kill scripts (sourced).
# A used-only move copies what the filesystem uses, so the whole partition no longer compares
# equal: these compare what partclone.extfs calls used (its domain file, an oracle independent of
# partalign's own map) and read the first backup superblock.

# used_ranges DEVICE -> "offset length" lines (bytes, from the filesystem's start): the ranges
# partclone.extfs -D marks used ("+").
used_ranges() {
  local map
  map=$(mktemp)
  partclone.extfs -D -s "$1" -O "$map" -L /dev/null > /dev/null 2>&1 ||
    { rm -f "$map"; echo "used_ranges: partclone.extfs failed on $1" >&2; return 1; }
  local pos size status
  while read -r pos size status; do
    if [ "$status" = "+" ] && [ "${pos:0:1}" != "#" ]; then echo "$((pos)) $((size))"; fi
  done < "$map"
  rm -f "$map"
}

# used_digest DEVICE START RANGES_FILE -> XXH128 of the used ranges' bytes of the filesystem at
# byte START of DEVICE, range by range.
used_digest() {
  local device=$1 start=$2 ranges=$3 offset length
  while read -r offset length; do
    dd if="$device" bs=1M iflag=direct,skip_bytes,count_bytes skip=$((start + offset)) \
      count="$length" status=none | xxhsum -H2 2> /dev/null | cut -d' ' -f1
  done < "$ranges" | xxhsum -H2 2> /dev/null | cut -d' ' -f1
}

# backup_super_ok DEVICE -> 0 when the first backup superblock (group 1) reads with the ext
# magic. (e2fsck -b on a backup reports stale group counters even on a fresh filesystem, so
# dumpe2fs reads it instead.)
backup_super_ok() {
  local head block per_group first backup
  head=$(dumpe2fs -h "$1" 2> /dev/null) || return 1
  block=$(sed -n 's/^Block size: *//p' <<< "$head")
  per_group=$(sed -n 's/^Blocks per group: *//p' <<< "$head")
  first=$(sed -n 's/^First block: *//p' <<< "$head")
  backup=$((first + per_group))
  dumpe2fs -h -o superblock="$backup" -o blocksize="$block" "$1" 2> /dev/null |
    grep '^Filesystem magic number: *0xEF53' > /dev/null
}
