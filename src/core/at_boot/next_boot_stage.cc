// SPDX-License-Identifier: GPL-3.0-or-later
// stage.json and next-boot.conf (partalign/at_boot/next_boot_stage.h).
#include "partalign/at_boot/next_boot_stage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "partalign/util/json_reader.h"

namespace partalign {
namespace {

constexpr std::string_view kStageFormat = "partalign-next-boot";
constexpr int kStageVersion = 1;

constexpr std::array<std::string_view, 4> kJournalFilesystems = {"ext4", "ext3", "ext2", "vfat"};

// A filesystem UUID as blkid prints it: hex digits and dashes (ext, btrfs: 36 characters;
// vfat: "1234-ABCD"). Nothing a shell would read as anything but a word.
bool IsFilesystemUuid(std::string_view uuid) {
  return !uuid.empty() && uuid.size() <= 36 && std::all_of(uuid.begin(), uuid.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-';
  });
}

Status CheckJournalPartition(const JournalPartition& j, const std::string& path) {
  if (j.number == 0) return MakeError(path + "number: is 0");
  if (!IsFilesystemUuid(j.fs_uuid)) {
    return MakeError(
        fmt::format("{}fs_uuid: '{}' is not a filesystem UUID", path, Printable(j.fs_uuid)));
  }
  if (!IsJournalFilesystem(j.fs_type)) {
    return MakeError(fmt::format("{}fs_type: '{}' is not one the initramfs mounts ({})", path,
                                 Printable(j.fs_type), fmt::join(kJournalFilesystems, ", ")));
  }
  return {};
}

Result<NextBootStage> ReadStageDocument(std::string_view text) {
  Result<nlohmann::json> doc = ParseFormatDocument(text, kStageFormat, kStageVersion);
  if (!doc) return doc.error();
  NextBootStage stage;
  FieldReader root(*doc, "");
  stage.disk_path = root.String("disk_path");
  stage.table_fingerprint = root.String("table_fingerprint");
  stage.staged_at = root.String("staged_at");
  const nlohmann::json* journal = root.Object("journal_partition");
  const nlohmann::json* consent = root.Object("consent");
  if (root.error()) return MakeError(*root.error());
  if (stage.disk_path.empty() || stage.disk_path.front() != '/') {
    return MakeError(
        fmt::format("disk_path: '{}' is not an absolute path", Printable(stage.disk_path)));
  }
  if (stage.table_fingerprint.empty()) return MakeError("table_fingerprint: empty");

  FieldReader j(*journal, "journal_partition.");
  const uint64_t number = j.Uint("number");
  stage.journal.fs_uuid = j.String("fs_uuid");
  stage.journal.fs_type = j.String("fs_type");
  if (j.error()) return MakeError(*j.error());
  if (number > UINT32_MAX) return MakeError("journal_partition.number: too large");
  stage.journal.number = static_cast<uint32_t>(number);
  if (Status s = CheckJournalPartition(stage.journal, "journal_partition."); !s) return s.error();

  FieldReader c(*consent, "consent.");
  stage.consent.make_room = c.Bool("make_room");
  stage.consent.copy_all = c.Bool("copy_all");
  stage.consent.allow_reinstall_bootloader = c.Bool("allow_reinstall_bootloader");
  stage.consent.assume = c.String("assume", /*required=*/false);
  stage.consent.sector_size = c.String("sector_size", /*required=*/false);
  const nlohmann::json* discard = c.Array("discard");
  if (c.error()) return MakeError(*c.error());
  for (size_t i = 0; i < discard->size(); ++i) {
    const nlohmann::json& n = (*discard)[i];
    if (!n.is_number_unsigned() || n.get<uint64_t>() == 0 || n.get<uint64_t>() > UINT32_MAX) {
      return MakeError(fmt::format("consent.discard[{}]: not a partition number", i));
    }
    stage.consent.discard.push_back(n.get<uint32_t>());
  }
  return stage;
}

}  // namespace

bool IsJournalFilesystem(std::string_view fs_type) {
  return std::find(kJournalFilesystems.begin(), kJournalFilesystems.end(), fs_type) !=
         kJournalFilesystems.end();
}

std::string NextBootStageToJson(const NextBootStage& stage) {
  nlohmann::json doc = {
      {"format", kStageFormat},
      {"format_version", kStageVersion},
      {"disk_path", stage.disk_path},
      {"table_fingerprint", stage.table_fingerprint},
      {"journal_partition",
       {{"number", stage.journal.number},
        {"fs_uuid", stage.journal.fs_uuid},
        {"fs_type", stage.journal.fs_type}}},
      {"consent",
       {{"discard", stage.consent.discard},
        {"make_room", stage.consent.make_room},
        {"copy_all", stage.consent.copy_all},
        {"allow_reinstall_bootloader", stage.consent.allow_reinstall_bootloader},
        {"assume", stage.consent.assume},
        {"sector_size", stage.consent.sector_size}}},
      {"staged_at", stage.staged_at},
  };
  return doc.dump(2) + "\n";
}

Result<NextBootStage> NextBootStageFromJson(std::string_view text) {
  Result<NextBootStage> stage = ReadStageDocument(text);
  if (!stage) return MakeError(OneLine(stage.error().message));
  return stage;
}

Result<std::string> NextBootConf(const JournalPartition& journal) {
  if (Status s = CheckJournalPartition(journal, "journal partition "); !s) return s.error();
  return fmt::format(
      "# partalign: a plan is staged for the next boot (partalign apply --cancel-next-boot\n"
      "# takes it back). Read by the initramfs (docs/at-boot.md).\n"
      "PARTALIGN_JOURNAL_UUID={}\nPARTALIGN_JOURNAL_FSTYPE={}\n",
      journal.fs_uuid, journal.fs_type);
}

}  // namespace partalign
