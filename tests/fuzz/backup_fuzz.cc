// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the table backup reader (restore BACKUP). Any input: no crash, no
// sanitizer report; an accepted backup survives a round trip through its own file format, and
// the transition restore would write from it is computed without a crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "partalign/table/table_backup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<TableBackup> backup = BackupFromJson(text);
  if (!backup) {
    FUZZ_CHECK(!backup.error().message.empty());
    FUZZ_CHECK(backup.error().message.find('\n') == std::string::npos);
    return 0;
  }
  Result<TableBackup> again = BackupFromJson(BackupToJson(*backup).dump());
  FUZZ_CHECK(again);
  // A version 1 or 2 file is written back as the current version (with its empty context and
  // identity); the rest must survive unchanged.
  FUZZ_CHECK(again->format_version == kBackupFormatVersion);
  again->format_version = backup->format_version;
  FUZZ_CHECK(*again == *backup);
  FUZZ_CHECK(BackupDeviceMismatches(backup->device, backup->device).empty());
  // A disk that holds at every place what the backup recorded there contradicts nothing, and
  // is proven the backup's exactly when a record has a UUID or non-zero first bytes.
  const std::vector<BackupPartition>& places = backup->identity.partitions;
  std::vector<PartitionSeen> same;
  bool identifying = false;
  for (const BackupPartition& p : places) {
    FUZZ_CHECK(p.head_bytes <= p.length_bytes && p.head_bytes <= kPartitionHeadBytes);
    same.push_back({p.fs_type, p.fs_uuid, p.fs_label, p.head_xxh64});
    identifying =
        identifying || (!p.fs_type.empty() && !p.fs_uuid.empty()) || !p.head_xxh64.empty();
  }
  const ContentEvidence evidence = CompareContents(places, same);
  FUZZ_CHECK(evidence.other.empty());
  FUZZ_CHECK(evidence.proven() == identifying);
  // A disk that shows nothing at those places proves nothing either way.
  const ContentEvidence blank = CompareContents(places, std::vector<PartitionSeen>(places.size()));
  FUZZ_CHECK(!blank.proven());
  // What restore computes before it writes, with the disk holding the saved bytes already.
  std::vector<std::vector<uint8_t>> current;
  for (const BackupRange& r : backup->ranges) current.push_back(r.bytes);
  (void)RestoreTransition(*backup, current);
  return 0;
}
