// SPDX-License-Identifier: GPL-3.0-or-later
// A system sleeping on a disk (docs/used-map.md, "Hibernation is a refusal"): a Linux
// hibernation image in a swap area or swap file, or Windows hibernated (Fast Startup leaves it
// so after every shutdown) with its hiberfil.sys. The kernel that resumes believes the offsets
// it went to sleep with, so nothing on that disk may change until it has resumed and shut
// down: what was found, and the one line each command says about it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace partalign {

enum class SleepingOs : uint8_t { kLinux, kWindows };

/// "linux", "windows": stable names for JSON.
std::string_view ToString(SleepingOs os);

/// A partition (or, for `move`, a byte range) that holds a sleeping system.
struct SleepingPartition {
  uint32_t partition = 0;     ///< 1-based; 0: not a partition (the range at `offset_bytes`)
  uint64_t offset_bytes = 0;  ///< where it starts on the disk
  SleepingOs os = SleepingOs::kLinux;
  /// What holds it: "a hibernation image (S1SUSPEND) in its swap area", "hiberfil.sys starts
  /// with HIBR".
  std::string found;
  bool operator==(const SleepingPartition&) const = default;
};

/// The first four bytes of an active hiberfil.sys, from its first bytes `head`: "HIBR", "hibr"
/// (hibernated, or shut down with Fast Startup), "wake" (resuming), "RSTR" (being restored);
/// nullopt when the file is inactive (Windows zeroes the signature once it has resumed) or too
/// short to hold one.
std::optional<std::string> ActiveHiberfilSignature(std::span<const uint8_t> head);

/// Where distributions put a swap file (Debian's and Arch's guides, Ubuntu's installer, Fedora's
/// btrfs layout, dphys-swapfile): the names looked up in an ext2/3/4 filesystem, besides those
/// its /etc/fstab names.
inline constexpr std::string_view kUsualSwapFiles[] = {
    "/swapfile",  "/swap.img", "/swap/swapfile", "/swap",
    "/swapfile1", "/var/swap", "/var/swapfile",  "/.swapfile"};

/// The swap files an fstab (its text, `fstab`) names: the first field of each entry whose type
/// is "swap" and whose source is an absolute path outside /dev. At most `max_files`, without
/// duplicates, in their order.
std::vector<std::string> SwapFilesOfFstab(std::string_view fstab, size_t max_files = 8);

/// What to do: "resume the hibernated system and shut it down fully" (Linux), "for Windows, turn
/// Fast Startup off or shut down while holding Shift" (Windows).
std::string_view WakeAdvice(SleepingOs os);

/// "partition 2 holds a hibernated system (a hibernation image (S1SUSPEND) in its swap area):
/// resume the hibernated system and shut it down fully; until then apply, move and translate
/// refuse to change this disk": one line per partition, for probe, audit, plan, the planner and
/// the report.
std::string SleepingLine(const SleepingPartition& sleeping);

/// Whether an area whose first bytes are `head` (kSwapSignatureHeadBytes, or all of a smaller
/// area) can be one the scan looks into, as libblkid 2.38 names them: ext2/3/4 (the magic 0xEF53
/// at byte 1080), ntfs ("NTFS    " at byte 3), or swap or swsuspend (a signature
/// ReadSwapSignature knows). False means the scan finds nothing there whatever libblkid would
/// call it: a command that did not ask libblkid need not ask it (docs/used-map.md).
bool HeadMayHoldSleepingSystem(std::span<const uint8_t> head);

/// The one line a write command refuses with (exit 3): what was found where, and what to do.
/// `sleeping` is not empty.
std::string SleepingRefusal(const std::string& path,
                            const std::vector<SleepingPartition>& sleeping);

}  // namespace partalign
