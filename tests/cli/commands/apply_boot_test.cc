// SPDX-License-Identifier: GPL-3.0-or-later
// apply moves a partition and the records that name its place with it (issue #28,
// docs/boot-records.md): NTFS, FAT16, FAT32 and exFAT made by their own mkfs at sector 63 of a
// DOS disk (mkfs writes the start itself, as on a real disk), a file on each; the real planner
// makes the plan, `apply --dry-run` lists the record updates of the step that moves the
// partition, apply writes them. Then every record says 2048 (read raw at the specification's
// offset), the filesystem's own checker is clean (it compares the backups), the file reads
// back, and the disk invariant (support/disk_invariant.h) holds with exactly the listed records
// allowed to differ. A kill at each write of the step's table phase (where the records are
// written, with the table) is finished by resume to the same disk, or rolled back to the
// original bytes. A GRUB disk with /boot at 63 boots in QEMU before and after apply.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <random>
#include <regex>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "support/boot_disks.h"
#include "support/boot_sectors.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/partitioned_loop.h"
#include "support/qemu_boot.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;

constexpr uint64_t kOldStart = 63;
constexpr uint64_t kNewStart = 2048;
constexpr char kFileText[] = "partalign apply: this file and the boot sector both follow\n";

enum class Fs { kNtfs, kFat16, kFat32, kExfat };

struct FsCase {
  Fs fs;
  const char* name;
  const char* dos_type;
  uint64_t sectors;
  /// Where the start is recorded (bytes into the partition) and how wide.
  std::vector<uint64_t> record_offsets;
  unsigned record_width;
  const char* description;  ///< the line apply prints for the step
};

void PrintTo(const FsCase& c, std::ostream* os) { *os << c.name; }

uint64_t RecordAt(const std::string& target, uint64_t offset, unsigned width) {
  const test::Bytes b = test::ReadBytes(target, offset, width);
  return width == 4 ? *Le<uint32_t>(b, 0) : *Le<uint64_t>(b, 0);
}

class ApplyBootTest : public testing::TestWithParam<FsCase> {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    const FsCase& c = GetParam();
    // Partition 1 at 63 with the filesystem; vendor bytes in sectors 1-62 (never written).
    disk_ = std::make_unique<PartitionedLoop>(
        fmt::format("label: dos\nlabel-id: 0x5eed0028\nstart={}, size={}, type={}, bootable\n",
                    kOldStart, c.sectors, c.dos_type),
        512, 96ull << 20);
    std::filesystem::create_directories(disk_->File("state"));
    std::filesystem::create_directories(disk_->File("mnt"));
    std::mt19937_64 random(28);
    std::string vendor(62 * 512, '\0');
    for (char& ch : vendor) ch = static_cast<char>(random());
    test::RunOrThrow(
        {"dd", "of=" + disk_->device(), "bs=512", "seek=1", "conv=notrunc,fsync", "status=none"},
        vendor);
    MakeFilesystem();
    for (uint64_t at : c.record_offsets) {
      ASSERT_EQ(RecordAt(Node(), at, c.record_width), kOldStart)
          << "mkfs wrote the start at " << at;
    }
  }

  std::string Node() const { return disk_->loop().PartitionPath(1); }

  void MakeFilesystem() const {
    const FsCase& c = GetParam();
    const std::string file = disk_->File("hello.txt");
    test::WriteFile(file, kFileText);
    switch (c.fs) {
      case Fs::kNtfs:
        // mkntfs takes the start from HDIO_GETGEO, which a loop device lacks: given as a
        // disk's geometry would give it.
        test::RunOrThrow({"mkntfs", "-q", "-Q", "-p", std::to_string(kOldStart), "-H", "255", "-S",
                          "63", Node()});
        test::RunOrThrow({"ntfscp", "-f", Node(), file, "/hello.txt"});
        break;
      case Fs::kFat16:
      case Fs::kFat32:
        // Hidden sectors from the kernel's start of the partition: 63.
        test::RunOrThrow({"mkfs.fat", "-F", c.fs == Fs::kFat16 ? "16" : "32", Node()});
        test::RunOrThrow({"mcopy", "-i", Node(), file, "::/hello.txt"});
        break;
      case Fs::kExfat: {
        test::RunOrThrow({"mkfs.exfat", Node()});  // PartitionOffset from sysfs: 63
        test::FuseMount mount("mount.exfat-fuse", Node(), disk_->File("mnt"));
        test::RunOrThrow({"cp", file, mount.path() + "/hello.txt"});
        break;
      }
    }
  }

  std::string ReadFileBack() const {
    switch (GetParam().fs) {
      case Fs::kNtfs:
        return RunCommand({"ntfscat", Node(), "/hello.txt"}).out;
      case Fs::kExfat: {
        test::FuseMount mount("mount.exfat-fuse", Node(), disk_->File("mnt"));
        return test::ReadFile(mount.path() + "/hello.txt");
      }
      default:
        return RunCommand({"mtype", "-i", Node(), "::/hello.txt"}).out;
    }
  }

  // The filesystem's own checker, read-only: clean, and no word of a difference between the
  // boot sector and its backup.
  void ExpectCheckerClean(uint64_t hidden) const {
    const Fs fs = GetParam().fs;
    const std::vector<std::string> argv =
        fs == Fs::kNtfs    ? std::vector<std::string>{"ntfsfix", "-n", Node()}
        : fs == Fs::kExfat ? std::vector<std::string>{"fsck.exfat", "-n", Node()}
                           : std::vector<std::string>{"fsck.fat", "-n", "-v", Node()};
    const CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << test::Describe(argv, r);
    EXPECT_EQ(r.out.find("differ"), std::string::npos) << r.out;
    if (fs == Fs::kNtfs) {
      EXPECT_NE(r.out.find("Checking the alternate boot sector... OK"), std::string::npos) << r.out;
    } else if (fs == Fs::kExfat) {
      EXPECT_NE(r.out.find("clean"), std::string::npos) << r.out;
    } else {
      EXPECT_TRUE(
          std::regex_search(r.out, std::regex(fmt::format(R"(\n\s*{} hidden sectors\n)", hidden))))
          << r.out;
    }
  }

  void ExpectRecords(uint64_t start) const {
    const FsCase& c = GetParam();
    for (uint64_t at : c.record_offsets) {
      EXPECT_EQ(RecordAt(disk_->device(), start * 512 + at, c.record_width), start)
          << "record at byte " << at << " of the partition";
    }
  }

  std::map<std::string, std::string> Env() const {
    return {{"PARTALIGN_STATE_DIR", disk_->File("state")}};
  }

  CommandResult Partalign(const std::vector<std::string>& args,
                          std::map<std::string, std::string> env = {}) const {
    env.merge(Env());
    return test::RunPartalign(args, "", env);
  }

  // plan -o, checked: partition 1 moves its data from 63 to 2048.
  std::string MakePlan() const {
    const std::string file = disk_->File("plan.json");
    const CommandResult r = Partalign({"plan", "-o", file, disk_->device()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json plan = nlohmann::json::parse(test::ReadFile(file), nullptr, false);
    EXPECT_TRUE(plan.is_object()) << r.out;
    bool moves = false;
    for (const nlohmann::json& a : plan["actions"]) {
      moves |=
          a["partition"] == 1 && a["kind"] == "move-data" && a["new_start_sector"] == kNewStart;
    }
    EXPECT_TRUE(moves) << plan.dump(2);
    // plan names the record it will update.
    EXPECT_NE(r.out.find(GetParam().description), std::string::npos) << r.out;
    return file;
  }

  // apply --dry-run --json: the step's records, and the invariant's options allowing exactly
  // those bytes to differ.
  test::DiskInvariantOptions DryRunRecords(const std::string& plan_file) const {
    const CommandResult r = Partalign(test::ApplyArgs(*disk_, plan_file, {"--dry-run", "--json"}));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    test::DiskInvariantOptions options = test::InvariantOptionsForPlan(plan_file, 512);
    if (!doc.is_object() || doc["steps"].size() != 1) {
      ADD_FAILURE() << r.out;
      return options;
    }
    const nlohmann::json& records = doc["steps"][0]["boot_records"];
    EXPECT_EQ(records["descriptions"], nlohmann::json::array({GetParam().description}))
        << records.dump(2);
    EXPECT_FALSE(records["sectors"].empty()) << records.dump(2);
    for (const nlohmann::json& s : records["sectors"]) {
      const uint64_t first = s["offset_bytes"];
      options.updated_records.emplace_back(first, first + s["length_bytes"].get<uint64_t>());
    }
    return options;
  }

  std::unique_ptr<PartitionedLoop> disk_;
};

TEST_P(ApplyBootTest, EveryRecordFollowsThePartitionAndTheCheckerIsClean) {
  const std::string before = disk_->Snapshot("before.img");
  const std::string plan_file = MakePlan();
  const test::DiskInvariantOptions options = DryRunRecords(plan_file);
  const CommandResult dry = Partalign(test::ApplyArgs(*disk_, plan_file, {"--dry-run"}));
  EXPECT_NE(dry.out.find(fmt::format("Step 1 updates a boot record")), std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find(GetParam().description), std::string::npos) << dry.out;
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");

  const CommandResult r = Partalign(test::ApplyArgs(*disk_, plan_file));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::KernelStartSize(disk_->loop(), 1).first, kNewStart);
  // Compared before any driver mounts the partition (exfat-fuse writes access times).
  for (const std::string& v : test::DiskInvariantViolations(before, disk_->device(), options)) {
    ADD_FAILURE() << v;
  }
  ExpectRecords(kNewStart);
  ExpectCheckerClean(kNewStart);
  EXPECT_EQ(ReadFileBack(), kFileText);
  // The disk signature, which Windows names its volumes by, is kept.
  EXPECT_EQ(test::SfdiskJson(disk_->device())["id"], "0x5eed0028");
  // audit finds nothing stale on the moved disk.
  const CommandResult audit = Partalign({"audit", disk_->device()});
  EXPECT_EQ(audit.exit_code, 0) << audit.out << audit.err;
  EXPECT_EQ(audit.out.find("stale"), std::string::npos) << audit.out;
}

// A kill at each write of the table phase, where the step writes the records with its table:
// resume finishes the step (records at the new start), or --rollback puts every byte back.
TEST_P(ApplyBootTest, KilledWhileTheRecordsAreWrittenIsFinishedOrRolledBack) {
  const std::string before = disk_->Snapshot("before.img");
  const std::string plan_file = MakePlan();
  const test::DiskInvariantOptions options = DryRunRecords(plan_file);
  const std::string pristine = disk_->File("pristine.img");
  std::filesystem::copy_file(before, pristine);
  int killed_runs = 0;
  for (int point = 1; point <= 6; ++point) {
    SCOPED_TRACE(fmt::format("killed at table:{}", point));
    const bool rollback = point % 2 == 0;
    // Each run starts from the original disk, with no journal or registration left.
    test::RunOrThrow({"dd", "if=" + pristine, "of=" + disk_->device(), "bs=1M",
                      "conv=notrunc,fsync", "status=none"});
    disk_->loop().DeletePartitions();
    test::AddKernelPartitions(disk_->loop(), 512);
    std::filesystem::remove_all(disk_->File("journals"));
    std::filesystem::remove_all(disk_->File("state"));
    std::filesystem::create_directories(disk_->File("state"));
    const CommandResult killed =
        Partalign(test::ApplyArgs(*disk_, plan_file),
                  {{"PARTALIGN_TEST_KILL_AFTER", fmt::format("table:{}", point)}});
    if (killed.exit_code == 0) break;  // the table phase has fewer writes than `point`
    ASSERT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
    ++killed_runs;
    const std::vector<std::string> journals =
        test::FilesIn(disk_->File("journals"), ".partalign-journal");
    ASSERT_EQ(journals.size(), 1u);
    std::vector<std::string> args = {"resume", journals[0], "--yes"};
    if (rollback) args.push_back("--rollback");
    const CommandResult resumed = Partalign(args);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_EQ(test::KernelStartSize(disk_->loop(), 1).first, rollback ? kOldStart : kNewStart)
        << "resume tells the kernel the table it left";
    if (rollback) {
      // Every byte is back: the partition's used bytes at its old place (its unused ones may
      // hold what the move wrote there, as a completed move leaves them), and every byte
      // outside it, the space the destination took beyond the old end too; the records are
      // the old ones (below).
      test::DiskInvariantOptions back;
      back.rolled_back = {1};
      for (const std::string& v : test::DiskInvariantViolations(before, disk_->device(), back)) {
        ADD_FAILURE() << v;
      }
      ExpectRecords(kOldStart);
      ExpectCheckerClean(kOldStart);
    } else {
      for (const std::string& v : test::DiskInvariantViolations(before, disk_->device(), options)) {
        ADD_FAILURE() << v;
      }
      ExpectRecords(kNewStart);
      ExpectCheckerClean(kNewStart);
    }
    EXPECT_EQ(ReadFileBack(), kFileText);
  }
  // The table phase writes the MBR and the record sectors, each flushed: several points.
  EXPECT_GE(killed_runs, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Filesystems, ApplyBootTest,
    testing::Values(FsCase{Fs::kNtfs,
                           "ntfs",
                           "7",
                           40000,
                           {0x1C, 39999 * 512 + 0x1C},
                           4,
                           "NTFS boot sector: hidden sectors 63 -> 2048, primary and backup"},
                    FsCase{Fs::kFat16,
                           "fat16",
                           "6",
                           40000,
                           {0x1C},
                           4,
                           "FAT16 boot sector: hidden sectors 63 -> 2048"},
                    FsCase{Fs::kFat32,
                           "fat32",
                           "c",
                           80000,
                           {0x1C, 6 * 512 + 0x1C},
                           4,
                           "FAT32 boot sector: hidden sectors 63 -> 2048, primary and backup"},
                    FsCase{Fs::kExfat,
                           "exfat",
                           "7",
                           40000,
                           {64, 12 * 512 + 64},
                           8,
                           "exFAT boot region: PartitionOffset 63 -> 2048, main and backup (boot "
                           "checksums recomputed)"}),
    [](const testing::TestParamInfo<FsCase>& p) { return std::string(p.param.name); });

// A disk that booted before partalign's own plan and apply boots after it, in QEMU (SeaBIOS,
// TCG): GRUB 2 on a DOS disk with /boot at 63 (core.img in the embedding area, which apply never
// writes), GRUB 2 on GPT with a BIOS boot partition at 34 and /boot at 2081 (the planner leaves
// the BIOS boot partition where it is), EXTLINUX on a DOS disk at 63 (its boot record's hidden
// sectors updated with the move). The loaders print a marker from a config file on the moved
// partition.
struct QemuCase {
  test::BootLoader loader;
  const char* name;
  uint64_t boot_start;
  uint32_t boot_partition;
};

void PrintTo(const QemuCase& c, std::ostream* os) { *os << c.name; }

class ApplyBootQemuTest : public testing::TestWithParam<QemuCase> {};

TEST_P(ApplyBootQemuTest, BootsBeforeAndAfterApply) {
  const QemuCase& c = GetParam();
  PARTALIGN_REQUIRE_BOOT_TEST(c.loader);
  test::TempDir dir;
  const std::string image = dir.File(std::string(c.name) + ".img");
  test::BootDiskLayout layout{c.loader};
  layout.boot_start = c.boot_start;
  layout.marker = fmt::format("PARTALIGN-APPLY-{}", c.name);
  test::BuildBootDisk(image, layout, dir.path());
  const test::QemuBoot first = test::BootInQemu(image, dir.path());
  ASSERT_TRUE(test::PrintedMarker(first, layout.marker)) << "before apply:\n" << first.serial;

  const std::string before = dir.File("before.img");
  test::RunOrThrow({"cp", "--sparse=always", image, before});
  const std::map<std::string, std::string> env = {{"PARTALIGN_STATE_DIR", dir.File("state")}};
  std::filesystem::create_directories(dir.File("state"));
  const CommandResult planned =
      test::RunPartalign({"plan", "-o", dir.File("plan.json"), image}, "", env);
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  const CommandResult applied =
      test::RunPartalign({"apply", "--yes", "--backup-dir", dir.File("backups"), "--journal-dir",
                          dir.File("journals"), dir.File("plan.json")},
                         "", env);
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  const nlohmann::json table = test::SfdiskJson(image);
  const uint64_t moved_to = table["partitions"][c.boot_partition - 1]["start"];
  EXPECT_NE(moved_to, c.boot_start) << applied.out;
  EXPECT_EQ(moved_to % 2048, 0u) << applied.out;
  if (c.loader == test::BootLoader::kGrubGpt) {
    // The BIOS boot partition stays at 34, its bytes (core.img) with it.
    EXPECT_EQ(table["partitions"][0]["start"], 34) << applied.out;
    EXPECT_EQ(test::ReadBytes(image, 34 * 512, 2014 * 512),
              test::ReadBytes(before, 34 * 512, 2014 * 512));
  } else {
    // The DOS embedding area (sectors 1-62: GRUB's core.img) holds the same bytes.
    EXPECT_EQ(test::ReadBytes(image, 512, 62 * 512), test::ReadBytes(before, 512, 62 * 512));
  }
  const test::QemuBoot after = test::BootInQemu(image, dir.path());
  EXPECT_TRUE(test::PrintedMarker(after, layout.marker)) << "after apply:\n" << after.serial;
  EXPECT_TRUE(after.exited) << "QEMU did not stop by itself";
}

INSTANTIATE_TEST_SUITE_P(
    Loaders, ApplyBootQemuTest,
    testing::Values(QemuCase{test::BootLoader::kGrubDos, "grub_dos", 63, 1},
                    QemuCase{test::BootLoader::kGrubGpt, "grub_gpt", 2081, 2},
                    QemuCase{test::BootLoader::kExtlinuxDos, "extlinux_dos", 63, 1}),
    [](const testing::TestParamInfo<QemuCase>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace partalign
