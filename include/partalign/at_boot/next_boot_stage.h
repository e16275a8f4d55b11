// SPDX-License-Identifier: GPL-3.0-or-later
// A plan staged for the next boot (`partalign apply --at-next-boot`, docs/at-boot.md): the
// record written beside the plan on the journal partition (stage.json), and the shell file the
// initramfs reads to find that partition (next-boot.conf). Both are read back as untrusted
// input: the record by the boot runner, the shell file by a shell that sources it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// The directory, at the root of the journal partition's filesystem, that holds everything of
/// a staged plan: the plan, this record, and later the journals, backups and registry of the
/// move.
inline constexpr std::string_view kNextBootDirName = "partalign-next-boot";

/// The filesystems the initramfs mounts to reach the journal partition.
bool IsJournalFilesystem(std::string_view fs_type);

/// Where the staged plan's journals live: a partition of the same disk that the plan does not
/// write, holding a filesystem the initramfs mounts.
struct JournalPartition {
  uint32_t number = 0;
  std::string fs_uuid;  ///< blkid UUID: "0a1b..." (ext) or "1234-ABCD" (vfat)
  std::string fs_type;  ///< one IsJournalFilesystem accepts
  bool operator==(const JournalPartition&) const = default;
};

/// What the person consented to when staging, repeated at the boot (the plan file's claims are
/// never consent: docs/apply.md).
struct StagedConsent {
  std::vector<uint32_t> discard;
  bool make_room = false;
  bool copy_all = false;
  bool allow_reinstall_bootloader = false;
  std::string assume;       ///< --assume as given ("" for none)
  std::string sector_size;  ///< --sector-size as given ("" for none)
  bool operator==(const StagedConsent&) const = default;
};

struct NextBootStage {
  /// The disk as the running system named it, and its table when the plan was staged.
  std::string disk_path;
  std::string table_fingerprint;
  JournalPartition journal;
  StagedConsent consent;
  std::string staged_at;  ///< UTC, ISO 8601
  bool operator==(const NextBootStage&) const = default;
};

/// stage.json.
std::string NextBootStageToJson(const NextBootStage& stage);

/// Parses stage.json; the error names the key. Rejects a journal filesystem the initramfs does
/// not mount and a UUID that is not one (so that next-boot.conf stays plain data).
Result<NextBootStage> NextBootStageFromJson(std::string_view text);

/// next-boot.conf: `PARTALIGN_JOURNAL_UUID=...` and `PARTALIGN_JOURNAL_FSTYPE=...`, lines a
/// shell sources in the initramfs. Only UUID characters ([0-9A-Za-z-]) and a known filesystem
/// reach it: an error otherwise.
Result<std::string> NextBootConf(const JournalPartition& journal);

}  // namespace partalign
