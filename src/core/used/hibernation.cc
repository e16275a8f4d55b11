// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/hibernation.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/used/swap_signature.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

// What hiberfil.sys starts with while Windows sleeps in it (libntfs-3g checks HIBR and hibr;
// "wake" and "RSTR" are written while it resumes, and a resume cut short leaves them).
constexpr std::string_view kActiveHiberfil[] = {"HIBR", "hibr", "wake", "RSTR"};

std::string Where(const SleepingPartition& s) {
  return s.partition != 0 ? fmt::format("partition {}", s.partition)
                          : fmt::format("the range at byte {}", s.offset_bytes);
}

}  // namespace

std::string_view ToString(SleepingOs os) {
  return os == SleepingOs::kWindows ? "windows" : "linux";
}

bool HeadMayHoldSleepingSystem(std::span<const uint8_t> head) {
  // libblkid's ext2/3/4 probers: EXT_SB_MAGIC at 0x38 in the superblock at 1 KiB; its NTFS
  // prober: the OEM ID at byte 3 of the boot sector.
  constexpr size_t kExtMagicAt = 1024 + 0x38;
  constexpr std::string_view kNtfsOemId = "NTFS    ";
  if (head.size() >= kExtMagicAt + 2 && head[kExtMagicAt] == 0x53 &&
      head[kExtMagicAt + 1] == 0xEF) {
    return true;
  }
  if (head.size() >= 3 + kNtfsOemId.size() &&
      std::equal(kNtfsOemId.begin(), kNtfsOemId.end(), head.begin() + 3)) {
    return true;
  }
  return ReadSwapSignature(head).kind != SwapAreaKind::kNotSwap;
}

std::optional<std::string> ActiveHiberfilSignature(std::span<const uint8_t> head) {
  for (std::string_view magic : kActiveHiberfil) {
    if (HasMagic(head, 0, magic)) return std::string(magic);
  }
  return std::nullopt;
}

std::vector<std::string> SwapFilesOfFstab(std::string_view fstab, size_t max_files) {
  std::vector<std::string> files;
  size_t at = 0;
  while (at < fstab.size() && files.size() < max_files) {
    size_t end = fstab.find('\n', at);
    if (end == std::string_view::npos) end = fstab.size();
    std::string_view line = fstab.substr(at, end - at);
    at = end + 1;
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < line.size() && fields.size() < 3) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i == line.size() || line[i] == '#') break;
      const size_t from = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      fields.push_back(line.substr(from, i - from));
    }
    if (fields.size() < 3 || fields[2] != "swap") continue;
    const std::string_view source = fields[0];
    if (source.size() < 2 || source.front() != '/' || source.starts_with("/dev/")) continue;
    std::string file(source);
    if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  }
  return files;
}

std::string_view WakeAdvice(SleepingOs os) {
  return os == SleepingOs::kWindows
             ? "for Windows, turn Fast Startup off or shut down while holding Shift"
             : "resume the hibernated system and shut it down fully";
}

std::string SleepingLine(const SleepingPartition& s) {
  return fmt::format(
      "{} holds a hibernated {} ({}): {}; until then apply, move and translate refuse to change "
      "this disk",
      Where(s), s.os == SleepingOs::kWindows ? "Windows" : "system", s.found, WakeAdvice(s.os));
}

std::string SleepingRefusal(const std::string& path,
                            const std::vector<SleepingPartition>& sleeping) {
  std::vector<std::string> found;
  bool linux_os = false;
  bool windows = false;
  for (const SleepingPartition& s : sleeping) {
    found.push_back(fmt::format("{}: {}", Where(s), s.found));
    (s.os == SleepingOs::kWindows ? windows : linux_os) = true;
  }
  std::string advice;
  if (linux_os) advice = std::string(WakeAdvice(SleepingOs::kLinux));
  if (windows) {
    if (!advice.empty()) advice += "; ";
    advice += WakeAdvice(SleepingOs::kWindows);
  }
  return fmt::format(
      "refusing to change '{}': it holds a hibernated system, which would resume into a disk "
      "changed under it ({}): {}, then run this again; nothing was written",
      path, fmt::join(found, "; "), advice);
}

}  // namespace partalign
