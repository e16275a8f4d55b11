// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the snapshot reader (`partalign verify --against FILE`; a snapshot is a
// file anybody may have edited or damaged). Any input: no crash, no sanitizer report; an error
// is one line; an accepted snapshot survives a round trip through its own format, names no
// digest longer than what a snapshot records (verify reads those bytes from the disk), and
// compared with itself - the disk unchanged - shows no change.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.h"
#include "partalign/migrate/snapshot.h"
#include "partalign/migrate/verify_report.h"
#include "partalign/tools/tool_version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Snapshot> snapshot = SnapshotFromJson(text);
  if (!snapshot) {
    FUZZ_CHECK(!snapshot.error().message.empty());
    FUZZ_CHECK(snapshot.error().message.find('\n') == std::string::npos);
    return 0;
  }
  const nlohmann::json written = SnapshotToJson(*snapshot);
  Result<Snapshot> again = SnapshotFromJson(written.dump());
  FUZZ_CHECK(again);
  FUZZ_CHECK(SnapshotToJson(*again) == written);
  for (const ContentDigest& d : snapshot->digests) {
    FUZZ_CHECK(d.length_bytes > 0 && d.length_bytes <= kContentDigestBytes);
  }
  // The disk as the snapshot saw it: the same identity, table, contents and verdicts.
  const ToolVersions versions = NewestKnownVersions();
  const VerifyReport same = CompareSnapshots(*snapshot, *snapshot, snapshot->digests, versions);
  if (same.same_disk) {
    FUZZ_CHECK(!same.matched_by.empty());
    FUZZ_CHECK(same.changes.empty());
  }
  FUZZ_CHECK(!VerifyJson(same, "/dev/fuzz", "fuzz.partalign-snapshot", *snapshot).dump().empty());
  for (const std::string& line : VerifyLines(same, "/dev/fuzz", *snapshot)) {
    FUZZ_CHECK(line.find('\n') == std::string::npos);
  }
  // Nothing found where the partitions were: verify must still answer.
  const VerifyReport blank = CompareSnapshots(*snapshot, *snapshot, {}, versions);
  (void)VerifyLines(blank, "/dev/fuzz", *snapshot);
  return 0;
}
