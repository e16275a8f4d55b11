// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/content/sleeping_systems.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/block/direct_reads.h"
#include "io/boot/ntfs_file.h"
#include "io/device/blkid_probe.h"
#include "io/device/target.h"
#include "io/used/ext_used_map.h"
#include "partalign/used/swap_signature.h"

namespace partalign {
namespace {

// hiberfil.sys: its signature is in the first 4 bytes; libntfs-3g reads a page.
constexpr uint64_t kHiberfilHeadBytes = 4096;
// An fstab larger than this is not read (a real one is a few KiB).
constexpr uint64_t kFstabBytes = 64 * 1024;

std::string AreaName(const ScannedArea& a) {
  return a.partition != 0 ? fmt::format("partition {}", a.partition)
                          : fmt::format("the range at byte {}", a.offset_bytes);
}

SleepingPartition Sleeping(const ScannedArea& a, SleepingOs os, std::string found) {
  return {a.partition, a.offset_bytes, os, std::move(found)};
}

void ScanSwapArea(int fd, const std::string& path, const ScannedArea& a, SleepScan* scan) {
  std::vector<uint8_t> head(std::min(kSwapSignatureHeadBytes, a.length_bytes));
  Result<size_t> got = ReadAt(fd, head.data(), head.size(), a.offset_bytes, path);
  if (!got) {
    scan->warnings.push_back(fmt::format("{}: cannot tell whether it holds a hibernation image: {}",
                                         AreaName(a), got.error().message));
    return;
  }
  head.resize(*got);
  const SwapSignature signature = ReadSwapSignature(head);
  if (signature.kind == SwapAreaKind::kHibernation) {
    scan->sleeping.push_back(
        Sleeping(a, SleepingOs::kLinux, HibernationImageText(signature) + " in its swap area"));
  } else if (a.fs_type == "swsuspend") {
    // libblkid knows a signature this reader does not: its word is enough to refuse.
    scan->sleeping.push_back(Sleeping(
        a, SleepingOs::kLinux, "a hibernation image in its swap area (libblkid: swsuspend)"));
  }
}

void ScanNtfs(int fd, const std::string& path, const ScannedArea& a, SleepScan* scan) {
  Result<NtfsWakeState> state =
      ReadNtfsWakeState(fd, a.offset_bytes, a.length_bytes, kHiberfilHeadBytes,
                        fmt::format("{} of '{}'", AreaName(a), path));
  if (!state) {
    scan->warnings.push_back(fmt::format("{}: cannot tell whether Windows is hibernated on it: {}",
                                         AreaName(a), state.error().message));
    return;
  }
  if (state->hiberfil_head) {
    if (std::optional<std::string> magic = ActiveHiberfilSignature(*state->hiberfil_head)) {
      scan->sleeping.push_back(
          Sleeping(a, SleepingOs::kWindows,
                   fmt::format("its hiberfil.sys starts with {}: Windows hibernated, or shut down "
                               "with Fast Startup",
                               *magic)));
    }
  }
  if (state->dirty) {
    scan->warnings.push_back(fmt::format(
        "{}: the NTFS volume is marked dirty (Windows did not finish with it, or chkdsk is "
        "due): start Windows and shut it down fully before changing this disk",
        AreaName(a)));
  }
}

void ScanExt(const std::string& path, const ScannedArea& a, SleepScan* scan) {
  std::vector<std::string> files(std::begin(kUsualSwapFiles), std::end(kUsualSwapFiles));
  files.push_back("/etc/fstab");
  Result<std::vector<std::optional<std::vector<uint8_t>>>> heads =
      ReadExtFileHeads(path, a.offset_bytes, a.length_bytes, files, kSwapSignatureHeadBytes);
  // A filesystem libext2fs cannot open is copied whole by a move and not looked into here: it
  // holds no swap file partalign can find.
  if (!heads) return;
  files.pop_back();
  std::optional<std::vector<uint8_t>> fstab = std::move(heads->back());
  heads->pop_back();
  if (fstab && fstab->size() <= kFstabBytes) {
    std::vector<std::string> more;
    const std::string text(fstab->begin(), fstab->end());
    for (const std::string& f : SwapFilesOfFstab(text)) {
      if (std::find(files.begin(), files.end(), f) == files.end()) more.push_back(f);
    }
    if (!more.empty()) {
      Result<std::vector<std::optional<std::vector<uint8_t>>>> named =
          ReadExtFileHeads(path, a.offset_bytes, a.length_bytes, more, kSwapSignatureHeadBytes);
      if (named) {
        files.insert(files.end(), more.begin(), more.end());
        heads->insert(heads->end(), named->begin(), named->end());
      }
    }
  }
  for (size_t i = 0; i < files.size() && i < heads->size(); ++i) {
    if (!(*heads)[i]) continue;
    const SwapSignature signature = ReadSwapSignature(*(*heads)[i]);
    if (signature.kind != SwapAreaKind::kHibernation) continue;
    scan->sleeping.push_back(
        Sleeping(a, SleepingOs::kLinux,
                 fmt::format("{} in its swap file {}", HibernationImageText(signature), files[i])));
  }
}

// The areas of `areas` that may hold a sleeping system, each with libblkid's TYPE: those
// libblkid was asked about as they are; of the others, only those whose head may hold a
// signature the scan looks for (HeadMayHoldSleepingSystem), read all at once, then asked about
// one by one. A head that cannot be read that way is asked about too.
std::vector<ScannedArea> TypedAreas(int fd, const std::string& path,
                                    const std::vector<ScannedArea>& areas) {
  std::vector<ByteRange> heads;
  for (const ScannedArea& a : areas) {
    if (!a.typed)
      heads.push_back({a.offset_bytes, std::min(kSwapSignatureHeadBytes, a.length_bytes)});
  }
  if (heads.empty()) return areas;
  Result<std::vector<AlignedBuffer>> read = ReadRanges(path, heads);
  std::vector<ScannedArea> typed;
  size_t i = 0;
  for (const ScannedArea& a : areas) {
    if (a.typed) {
      typed.push_back(a);
      continue;
    }
    const size_t k = i++;
    if (read &&
        !HeadMayHoldSleepingSystem(std::span<const uint8_t>((*read)[k].data(), heads[k].length))) {
      continue;
    }
    ScannedArea known = a;
    Result<PartitionContents> contents =
        ProbePartitionContents(fd, path, a.offset_bytes, a.length_bytes);
    // What libblkid cannot probe is looked into as a swap area, as a partition without a TYPE.
    if (contents) known.fs_type = contents->fs_type;
    known.typed = true;
    typed.push_back(known);
  }
  return typed;
}

}  // namespace

std::vector<ScannedArea> AreasOfTable(const PartitionTable& table, bool typed) {
  std::vector<ScannedArea> areas;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended || p.size_sectors == 0) continue;
    areas.push_back({p.number, p.start_sector * table.sector_size,
                     p.size_sectors * table.sector_size, p.contents.fs_type, typed});
  }
  return areas;
}

SleepScan ScanForSleepingSystems(const std::string& path, const std::vector<ScannedArea>& areas) {
  SleepScan scan;
  Result<Target> disk = OpenTarget(path);
  if (!disk) {
    scan.warnings.push_back(fmt::format("cannot tell whether '{}' holds a hibernated system: {}",
                                        path, disk.error().message));
    return scan;
  }
  for (const ScannedArea& a : TypedAreas(disk->fd.get(), path, areas)) {
    const std::string& type = a.fs_type;
    if (type == "swap" || type == "swsuspend" || type.empty()) {
      ScanSwapArea(disk->fd.get(), path, a, &scan);
    } else if (type == "ntfs") {
      ScanNtfs(disk->fd.get(), path, a, &scan);
    } else if (type == "ext2" || type == "ext3" || type == "ext4") {
      ScanExt(path, a, &scan);
    }
  }
  return scan;
}

SleepScan ScanForSleepingSystems(const std::string& path, const PartitionTable& table, bool typed) {
  return ScanForSleepingSystems(path, AreasOfTable(table, typed));
}

bool RefuseIfSleeping(Streams io, const std::string& path, const SleepScan& scan) {
  for (const std::string& w : scan.warnings) PrintWarning(io.err, w);
  if (!scan.asleep()) return false;
  PrintError(io.err, SleepingRefusal(path, scan.sleeping));
  return true;
}

std::vector<std::string> SleepingLines(const SleepScan& scan) {
  std::vector<std::string> lines;
  for (const SleepingPartition& s : scan.sleeping) lines.push_back(SleepingLine(s));
  for (const std::string& w : scan.warnings) lines.push_back("warning: " + w);
  return lines;
}

nlohmann::json SleepingJson(const SleepScan& scan) {
  nlohmann::json out = nlohmann::json::array();
  for (const SleepingPartition& s : scan.sleeping) {
    out.push_back({{"partition", s.partition},
                   {"offset_bytes", s.offset_bytes},
                   {"system", ToString(s.os)},
                   {"found", s.found},
                   {"advice", WakeAdvice(s.os)}});
  }
  return out;
}

}  // namespace partalign
