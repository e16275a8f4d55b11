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
  // A version 1 file is written back as the current version (with its empty context); the
  // rest must survive unchanged.
  FUZZ_CHECK(again->format_version == kBackupFormatVersion);
  again->format_version = backup->format_version;
  FUZZ_CHECK(*again == *backup);
  FUZZ_CHECK(BackupDeviceMismatches(backup->device, backup->device).empty());
  // What restore computes before it writes, with the disk holding the saved bytes already.
  std::vector<std::vector<uint8_t>> current;
  for (const BackupRange& r : backup->ranges) current.push_back(r.bytes);
  (void)RestoreTransition(*backup, current);
  return 0;
}
