// SPDX-License-Identifier: GPL-3.0-or-later
// The disks people bring (issue 38), as Windows XP and the old Linux fdisk wrote them, byte for
// byte (support/old_tool_disks.h): cylinders of 255 x 63, every EBR on a cylinder, every
// logical partition 63 sectors after its EBR, filled to the last whole cylinder, with NTFS,
// FAT32, ext4 and swap made by their own tools and files in them.
//  - plan says which partitions it cannot align and the way through, the command that gives up
//    the swap; that command, run word for word, makes a plan apply carries out: every partition
//    on 1 MiB, every file intact, ntfsfix, fsck.vfat and e2fsck clean, the NTFS and FAT boot
//    records updated, the disk invariant (support/disk_invariant.h) kept, and every reader
//    (partx, sfdisk, fdisk, parted) reads the new table without an error or a warning;
//  - a disk that has no room at all (one NTFS to the last cylinder): plan says how much room is
//    missing, and apply of that plan says what stays misaligned and exits 3.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "support/advice.h"
#include "support/boot_disks.h"
#include "support/boot_sectors.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/loop_device.h"
#include "support/mount_point.h"
#include "support/old_tool_disks.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/table_readers.h"
#include "support/temp_dir.h"
#include "support/tmux_session.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr int kRefused = 3;
constexpr uint64_t kGrainSectors = 2048;

// The swap's UUID and label, read by blkid from partition `node`.
std::string SwapIdentity(const std::string& node) {
  return RunCommand(
             {"blkid", "-p", "-s", "UUID", "-s", "LABEL", "-s", "TYPE", "-o", "export", node})
      .out;
}

// An old tool's disk on an image and a loop device, its partitions known to the kernel.
class OldToolDiskTest : public testing::Test {
 protected:
  void Build(const test::OldLayout& layout) {
    layout_ = layout;
    image_ = dir_.File("disk.img");
    files_ = test::BuildOldToolImage(layout, image_, 38);
    loop_ = std::make_unique<test::LoopDevice>(image_, 512);
    test::AddKernelPartitions(*loop_, 512);
    std::filesystem::create_directories(dir_.File("state"));
    before_ = dir_.File("before.img");
    test::RunOrThrow({"cp", "--sparse=always", image_, before_});
  }

  std::map<std::string, std::string> Env() const {
    return {{"PARTALIGN_STATE_DIR", dir_.File("state")}};
  }

  std::string Node(uint32_t n) const { return loop_->PartitionPath(static_cast<int>(n)); }
  // The planner on the disk, as the tmux tests start it: its state and backups in the test's
  // directory.
  std::string PlannerCommand() const {
    return fmt::format("PARTALIGN_STATE_DIR='{}' '{}' plan --interactive --backup-dir '{}' '{}'",
                       dir_.File("state"), PARTALIGN_BINARY, dir_.File("backups"), loop_->path());
  }

  // Every file of every filesystem, read back through the filesystem's own tools.
  void ExpectFilesIntact() const {
    for (const test::OldPlace& p : test::OldPlaces(layout_)) {
      auto it = files_.find(p.number);
      if (it == files_.end()) continue;
      for (const auto& [name, bytes] : it->second) {
        std::string got;
        if (p.fs == "ntfs") {
          got = RunCommand({"ntfscat", Node(p.number), "/" + name}).out;
        } else if (p.fs == "vfat") {
          got = RunCommand({"mtype", "-i", Node(p.number), "::/" + name}).out;
        } else if (p.fs == "ext4") {
          got = RunCommand({"debugfs", "-R", "cat /" + name, Node(p.number)}).out;
        }
        EXPECT_TRUE(got == bytes) << "partition " << p.number << " (" << p.fs << "): " << name
                                  << " differs (" << got.size() << " bytes read, " << bytes.size()
                                  << " written)";
      }
    }
  }

  void ExpectCheckersClean() const {
    for (const test::OldPlace& p : test::OldPlaces(layout_)) {
      std::vector<std::string> checker;
      if (p.fs == "ntfs") checker = {"ntfsfix", "-n", Node(p.number)};
      if (p.fs == "vfat") checker = {"fsck.vfat", "-n", Node(p.number)};
      if (p.fs == "ext4") checker = {"e2fsck", "-fn", Node(p.number)};
      if (checker.empty()) continue;
      CommandResult r = RunCommand(checker);
      EXPECT_EQ(r.exit_code, 0) << test::Describe(checker, r);
    }
  }

  // Applies `plan_file` (checked: nothing impossible in it) with the person's word that the
  // contents of `discard` are given up (a plan file's word is not consent: apply --discard N),
  // and returns its dry run's JSON, for the boot records the invariant allows to change.
  std::string ApplyPlan(const std::string& plan_file, uint32_t discard) {
    for (const nlohmann::json& a : nlohmann::json::parse(test::ReadFile(plan_file))["actions"]) {
      EXPECT_NE(a["kind"], "impossible") << a;
    }
    const std::vector<std::string> apply_args = {"apply",         "--yes",
                                                 "--backup-dir",  dir_.File("backups"),
                                                 "--journal-dir", dir_.File("journals"),
                                                 "--discard",     std::to_string(discard)};
    std::vector<std::string> dry = apply_args;
    dry.insert(dry.end(), {"--dry-run", "--json", plan_file});
    CommandResult dry_run = RunPartalign(dry, "", Env());
    EXPECT_EQ(dry_run.exit_code, 0) << dry_run.err;
    std::vector<std::string> apply = apply_args;
    apply.push_back(plan_file);
    CommandResult applied = RunPartalign(apply, "", Env());
    EXPECT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    return dry_run.out;
  }

  // apply with its backups and journals in the test's directory, asking nothing.
  std::vector<std::string> ApplyArgs() const {
    return {"apply",         "--yes",
            "--backup-dir",  dir_.File("backups"),
            "--journal-dir", dir_.File("journals")};
  }

  // A plan file's word is not consent: without the person's `consent` ("--discard 1",
  // "--make-room") apply writes nothing and names the command that says it.
  void ExpectRefusedWithoutConsent(const std::string& plan_file, const std::string& consent) {
    std::vector<std::string> unsaid = ApplyArgs();
    unsaid.push_back(plan_file);
    CommandResult refused = RunPartalign(unsaid, "", Env());
    EXPECT_EQ(refused.exit_code, kRefused) << refused.out << refused.err;
    EXPECT_NE(refused.err.find(fmt::format("'partalign apply {} {}'", consent, plan_file)),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(test::CmpFiles(image_, before_), "");
  }

  // Applies `plan_file`, which shrinks the swap (partition 7) to make room, with the person's
  // --make-room, and checks the disk the issue's way (issue 38, "Done when"): every partition
  // on 1 MiB, the checkers clean, every file intact, the swap's UUID and label as
  // `swap_before`, the NTFS and FAT boot records naming the new starts, every byte outside the
  // partitions unchanged but the table's own sectors, every reader reading the new table, and
  // nothing left to do.
  void ApplyWithTheSwapShrunk(const std::string& plan_file, const std::string& swap_before) {
    const std::string dev = loop_->path();
    std::vector<std::string> said = ApplyArgs();
    said.insert(said.end(), {"--make-room", plan_file});
    CommandResult applied = RunPartalign(said, "", Env());
    ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    ExpectRealignedWithTheSwapShrunk(plan_file, swap_before);
  }

  // The disk after `plan_file` (which shrinks the swap, partition 7) was applied: the checks of
  // ApplyWithTheSwapShrunk.
  void ExpectRealignedWithTheSwapShrunk(const std::string& plan_file,
                                        const std::string& swap_before) {
    const std::string dev = loop_->path();
    ExpectAligned();
    ExpectCheckersClean();
    ExpectFilesIntact();
    EXPECT_EQ(SwapIdentity(Node(7)), swap_before);
    const nlohmann::json after = test::SfdiskJson(dev);
    // The boot records name the new starts; they are the bytes of NTFS and FAT the moves may
    // change (with their backups: FAT32's sector 6, NTFS's last sector).
    test::DiskInvariantOptions invariant = test::InvariantOptionsForPlan(plan_file, 512);
    invariant.left_behind.push_back(7);  // the swap area is made again, smaller, by mkswap
    for (const nlohmann::json& q : after["partitions"]) {
      const uint64_t start = q["start"].get<uint64_t>() * 512;
      const uint64_t size = q["size"].get<uint64_t>() * 512;
      if (q["node"] == Node(1)) {
        EXPECT_EQ(*Le<uint32_t>(test::ReadBytes(Node(1), 0, 512), 0x1C), q["start"]);
        invariant.updated_records.push_back({start, start + 512});
        invariant.updated_records.push_back({start + size - 512, start + size});
      }
      if (q["node"] == Node(6)) {
        EXPECT_EQ(*Le<uint32_t>(test::ReadBytes(Node(6), 0, 512), 0x1C), q["start"]);
        invariant.updated_records.push_back({start, start + 512});
        invariant.updated_records.push_back({start + 6 * 512, start + 7 * 512});
      }
    }
    EXPECT_EQ(test::DiskInvariantViolations(before_, dev, invariant), std::vector<std::string>{});
    EXPECT_EQ(test::TableReaderProblems(*loop_, 512), std::vector<std::string>{});
    // Nothing is left to do.
    CommandResult again = RunPartalign({"plan", "--json", dev}, "", Env());
    ASSERT_EQ(again.exit_code, 0) << again.err;
    for (const nlohmann::json& a : nlohmann::json::parse(again.out)["actions"]) {
      EXPECT_EQ(a["kind"], "none") << a;
    }
  }

  // Every partition but the extended one starts on 1 MiB.
  // The Markdown of `plan --format markdown` with `options` (issue 40): its "Applying it" names
  // the command that saves the plan and the apply that carries it out, with the consent the plan
  // needs. Runs the first word for word, checks the second is `expected_apply`, and returns it.
  std::string MarkdownApplyAdvice(const std::vector<std::string>& options,
                                  const std::string& expected_apply) {
    std::vector<std::string> args = {"plan", "--format", "markdown"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(loop_->path());
    CommandResult markdown = RunPartalign(args, "", Env());
    EXPECT_EQ(markdown.exit_code, 0) << markdown.err;
    const std::string save = test::AdviceIn(markdown.out, "Save the plan with `([^`]+)`");
    CommandResult saved = test::RunAdvice(save, dir_.path());
    EXPECT_EQ(saved.exit_code, 0) << save << "\n" << saved.out << saved.err;
    const std::string apply = test::AdviceIn(markdown.out, "then apply it with `([^`]+)`");
    EXPECT_EQ(apply, expected_apply) << markdown.out;
    EXPECT_EQ(test::CmpFiles(image_, before_), "");
    return apply;
  }

  void ExpectAligned() const {
    for (const nlohmann::json& p : test::SfdiskJson(loop_->path())["partitions"]) {
      if (p["type"] == "f" || p["type"] == "5") continue;
      EXPECT_EQ(p["start"].get<uint64_t>() % kGrainSectors, 0u) << p;
    }
  }

  test::TempDir dir_;
  test::OldLayout layout_;
  std::string image_;
  std::string before_;
  test::OldFiles files_;
  std::unique_ptr<test::LoopDevice> loop_;
};

TEST_F(OldToolDiskTest, TheXpDiskIsWrittenAsXpWroteIt) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  nlohmann::json t = test::SfdiskJson(image_);
  const nlohmann::json& parts = t["partitions"];
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[0]["start"], 63);
  EXPECT_EQ(parts[0]["type"], "7");
  EXPECT_EQ(parts[1]["type"], "f");
  // The extended partition to the last whole cylinder of 2 GiB: 261 x 16065 - 1, 1339 free.
  EXPECT_EQ(parts[1]["start"].get<uint64_t>() + parts[1]["size"].get<uint64_t>(),
            261 * test::kCylinderSectors);
  for (size_t i = 2; i < parts.size(); ++i) {
    EXPECT_EQ((parts[i]["start"].get<uint64_t>() - 63) % test::kCylinderSectors, 0u) << parts[i];
    // The EBR a cylinder boundary before, 63 sectors before the partition.
    const test::Bytes ebr =
        test::ReadBytes(image_, (parts[i]["start"].get<uint64_t>() - 63) * 512, 512);
    EXPECT_EQ(ebr[510], 0x55);
    EXPECT_EQ(*Le<uint32_t>(ebr, 446 + 8), 63u);
  }
  // The CHS of the NTFS entry: 0/1/1 to 15/254/63.
  const test::Bytes mbr = test::ReadBytes(image_, 0, 512);
  EXPECT_EQ(mbr[446 + 1], 1);
  EXPECT_EQ(mbr[446 + 2], 1);
  EXPECT_EQ(mbr[446 + 3], 0);
  EXPECT_EQ(mbr[446 + 5], 254);
  EXPECT_EQ(mbr[446 + 6], 63);
  EXPECT_EQ(mbr[446 + 7], 15);
  ExpectCheckersClean();
  ExpectFilesIntact();
}

// The disk of the issue: plan cannot align it as it is, says so with the way through, and the
// way through works end to end.
TEST_F(OldToolDiskTest, TheXpDiskIsRealignedByGivingUpItsSwap) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  CommandResult plan = RunPartalign({"plan", dev}, "", Env());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("impossible"), std::string::npos) << plan.out;
  // Filesystems at +0 are fixed by an aligned start, not by mkfs.
  EXPECT_EQ(plan.out.find("no partition start fixes it"), std::string::npos) << plan.out;
  const std::string advice = test::AdviceIn(
      plan.out,
      "way through: partition 7 \\(swap, [^)]*\\) can give the room: '(partalign plan "
      "--discard[^']*)'");
  ASSERT_EQ(advice, "partalign plan --discard 7 -o plan.json " + dev) << plan.out;

  CommandResult planned = test::RunAdvice(advice, dir_.path());
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  const std::string plan_file = dir_.File("plan.json");
  const std::string dry_run = ApplyPlan(plan_file, 7);
  ASSERT_FALSE(HasFailure());
  ExpectAligned();
  const nlohmann::json after = test::SfdiskJson(dev);
  ExpectCheckersClean();
  ExpectFilesIntact();
  // The boot records name the new starts (the boot domain updated them with the moves).
  for (const test::OldPlace& p : test::OldPlaces(layout_)) {
    if (p.fs != "ntfs" && p.fs != "vfat") continue;
    const test::Bytes boot = test::ReadBytes(Node(p.number), 0, 512);
    uint64_t start = 0;
    for (const nlohmann::json& q : after["partitions"]) {
      if (q["node"] == Node(p.number)) start = q["start"];
    }
    EXPECT_EQ(*Le<uint32_t>(boot, 0x1C), start) << p.fs << " hidden sectors";
  }
  test::DiskInvariantOptions invariant = test::InvariantOptionsForPlan(plan_file, 512);
  test::AddDryRunRecords(invariant, dry_run);
  EXPECT_EQ(test::DiskInvariantViolations(before_, dev, invariant), std::vector<std::string>{});
  const std::string boot_code = test::OldBootCode();
  EXPECT_EQ(test::ReadBytes(dev, 0, 440), test::Bytes(boot_code.begin(), boot_code.end()));
  EXPECT_EQ(test::TableReaderProblems(*loop_, 512), std::vector<std::string>{});
  // Nothing is left to do.
  CommandResult again = RunPartalign({"plan", "--json", dev}, "", Env());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (const nlohmann::json& a : nlohmann::json::parse(again.out)["actions"]) {
    EXPECT_TRUE(a["kind"] == "none" || a["partition"] == 7) << a;
  }
}

// plan --discard 7 in Markdown (issue 40): "Applying it" says the apply with --discard 7, and
// that command, run word for word (with --yes, as no terminal asks), realigns the disk.
TEST_F(OldToolDiskTest, TheMarkdownOfADiscardingPlanSaysTheApplyThatRunsIt) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string apply =
      MarkdownApplyAdvice({"--discard", "7"}, "partalign apply --discard 7 plan.json");
  ASSERT_FALSE(HasFailure());
  const std::string plan_file = dir_.File("plan.json");
  CommandResult dry_run = test::RunAdvice(apply + " --yes --dry-run --json", dir_.path());
  ASSERT_EQ(dry_run.exit_code, 0) << dry_run.out << dry_run.err;
  EXPECT_EQ(test::CmpFiles(image_, before_), "");
  CommandResult applied = test::RunAdvice(apply + " --yes", dir_.path());
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectAligned();
  ExpectCheckersClean();
  ExpectFilesIntact();
  test::DiskInvariantOptions invariant = test::InvariantOptionsForPlan(plan_file, 512);
  test::AddDryRunRecords(invariant, dry_run.out);
  EXPECT_EQ(test::DiskInvariantViolations(before_, loop_->path(), invariant),
            std::vector<std::string>{});
  EXPECT_EQ(test::TableReaderProblems(*loop_, 512), std::vector<std::string>{});
}

TEST_F(OldToolDiskTest, TheOldFdiskDiskIsRealignedByGivingUpItsSwap) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::OldFdiskDisk());
  const std::string dev = loop_->path();
  const std::string plan_file = dir_.File("plan.json");
  CommandResult plan = RunPartalign({"plan", "--discard", "7", "-o", plan_file, dev}, "", Env());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string dry_run = ApplyPlan(plan_file, 7);
  ASSERT_FALSE(HasFailure());
  ExpectAligned();
  ExpectCheckersClean();
  ExpectFilesIntact();
  test::DiskInvariantOptions invariant = test::InvariantOptionsForPlan(plan_file, 512);
  test::AddDryRunRecords(invariant, dry_run);
  EXPECT_EQ(test::DiskInvariantViolations(before_, dev, invariant), std::vector<std::string>{});
  EXPECT_EQ(test::TableReaderProblems(*loop_, 512), std::vector<std::string>{});
}

// One NTFS from sector 63 to the last cylinder: no partition can give room. plan says how much
// is missing; apply of that plan aligns nothing, says so and exits 3.
TEST_F(OldToolDiskTest, AFullSingleNtfsDiskSaysWhatIsMissingAndApplyRefuses) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpSingleNtfs());
  const std::string dev = loop_->path();
  const std::string plan_file = dir_.File("plan.json");
  CommandResult plan = RunPartalign({"plan", "-o", plan_file, dev}, "", Env());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("partition 1: impossible"), std::string::npos) << plan.out;
  // 63 -> 2048 needs 1985 sectors; 1339 are free after the last cylinder: 646 are missing.
  EXPECT_NE(plan.out.find("partition 1 needs 323 KiB more room than the disk has free (646 "
                          "sectors)"),
            std::string::npos)
      << plan.out;
  CommandResult applied =
      RunPartalign({"apply", "--yes", "--backup-dir", dir_.File("backups"), plan_file}, "", Env());
  EXPECT_EQ(applied.exit_code, kRefused) << applied.out << applied.err;
  EXPECT_NE(applied.err.find("1 partition stays misaligned"), std::string::npos) << applied.err;
  EXPECT_NE(applied.err.find("partition 1: start 63 cannot be aligned"), std::string::npos)
      << applied.err;
  EXPECT_NE(applied.err.find("646 sectors"), std::string::npos) << applied.err;
  EXPECT_EQ(test::CmpFiles(image_, before_), "");
}

// The disk of the issue realigned the least invasive way (issue 38, "Make room"): plan names
// `plan --make-room`, which shrinks the swap by the few MiB needed; apply asks for --make-room
// again, shrinks it as a journaled step before the moves, and realigns everything: every
// partition on 1 MiB, every file intact, the checkers clean, the swap's UUID and label kept,
// every byte outside the partitions unchanged but the table's own sectors.
TEST_F(OldToolDiskTest, TheXpDiskIsRealignedByShrinkingItsSwap) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  const std::string swap_before = SwapIdentity(Node(7));
  ASSERT_NE(swap_before.find("TYPE=swap"), std::string::npos) << swap_before;
  CommandResult plan = RunPartalign({"plan", dev}, "", Env());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string advice = test::AdviceIn(
      plan.out,
      "way through: partition 7 \\(swap, [^)]*\\) can give the room: '([^']*)' makes it 2 MiB "
      "smaller at its end");
  ASSERT_EQ(advice, "partalign plan --make-room -o plan.json " + dev) << plan.out;
  CommandResult planned = test::RunAdvice(advice, dir_.path());
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  EXPECT_NE(planned.out.find("make room: partition 7 (swap, 321.58 MiB) gives 2 MiB at its end"),
            std::string::npos)
      << planned.out;
  EXPECT_NE(planned.out.find("0 impossible"), std::string::npos) << planned.out;
  const std::string plan_file = dir_.File("plan.json");
  const nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan_file));
  for (const nlohmann::json& a : doc["actions"]) {
    EXPECT_NE(a["kind"], "impossible") << a;
    EXPECT_EQ(a.contains("shrink"), a["partition"] == 7) << a;
  }
  const std::vector<std::string> apply_args = ApplyArgs();
  // The plan file's "shrink" is no consent: without --make-room apply writes nothing and names
  // the command that says it.
  ExpectRefusedWithoutConsent(plan_file, "--make-room");
  // The dry run shows the shrink and writes nothing.
  std::vector<std::string> dry = apply_args;
  dry.insert(dry.end(), {"--make-room", "--dry-run", plan_file});
  CommandResult dry_run = RunPartalign(dry, "", Env());
  ASSERT_EQ(dry_run.exit_code, 0) << dry_run.out << dry_run.err;
  EXPECT_NE(dry_run.out.find("Make room first (--make-room): partition 7 (swap) gives 2 MiB"),
            std::string::npos)
      << dry_run.out;
  // Then the whole plan: every partition it moves, where the plan file puts it, after the shrink.
  const size_t then = dry_run.out.find("Then the rest of the plan (");
  ASSERT_NE(then, std::string::npos) << dry_run.out;
  EXPECT_LT(then, dry_run.out.find("Dry run: nothing was written."));
  size_t moves = 0;
  for (const nlohmann::json& a : doc["actions"]) {
    if (a["kind"] != "move-data") continue;
    ++moves;
    const std::regex row(
        fmt::format("\n *{} +{} +[0-9]+ +{} +{} +move-data ", a["partition"].get<int>(),
                    a["old_start_sector"].get<uint64_t>(), a["new_start_sector"].get<uint64_t>(),
                    a["new_end_sector"].get<uint64_t>()));
    EXPECT_TRUE(std::regex_search(dry_run.out.substr(then), row)) << a << dry_run.out;
  }
  EXPECT_GT(moves, 0u);
  std::vector<std::string> dry_json = apply_args;
  dry_json.insert(dry_json.end(), {"--make-room", "--dry-run", "--json", plan_file});
  CommandResult dry_doc = RunPartalign(dry_json, "", Env());
  ASSERT_EQ(dry_doc.exit_code, 0) << dry_doc.out << dry_doc.err;
  const nlohmann::json shown = nlohmann::json::parse(dry_doc.out);
  ASSERT_EQ(shown["then"].size(), doc["actions"].size()) << shown;
  for (size_t i = 0; i < doc["actions"].size(); ++i) {
    EXPECT_EQ(shown["then"][i]["new_start_sector"], doc["actions"][i]["new_start_sector"]);
    // A shrunk partition that does not move is done by its shrink ("none" after it).
    if (doc["actions"][i].contains("shrink")) continue;
    EXPECT_EQ(shown["then"][i]["kind"], doc["actions"][i]["kind"]) << shown["then"][i];
  }
  EXPECT_EQ(test::CmpFiles(image_, before_), "");

  ApplyWithTheSwapShrunk(plan_file, swap_before);
}

// plan --make-room in Markdown (issue 40): "Applying it" says the apply with --make-room, and
// that command, run word for word (with --yes, as no terminal asks), shrinks the swap and
// realigns the disk.
TEST_F(OldToolDiskTest, TheMarkdownOfAShrinkingPlanSaysTheApplyThatRunsIt) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string swap_before = SwapIdentity(Node(7));
  const std::string apply =
      MarkdownApplyAdvice({"--make-room"}, "partalign apply --make-room plan.json");
  ASSERT_FALSE(HasFailure());
  CommandResult applied = test::RunAdvice(apply + " --yes", dir_.path());
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectRealignedWithTheSwapShrunk(dir_.File("plan.json"), swap_before);
}

// The same through the planner's own w: the plan it applies carries the shrink the person took
// with M, and apply runs it with that consent (as apply --make-room).
TEST_F(OldToolDiskTest, TheXpDiskIsRealignedByTheShrinkTakenInThePlannerAndWritten) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  const std::string swap_before = SwapIdentity(Node(7));
  test::TmuxSession t(PlannerCommand(), 80, 24);
  ASSERT_TRUE(t.WaitFor("table on disk", 60)) << t.Screen();
  t.Keys({"M"});
  ASSERT_TRUE(t.WaitFor("Make room?")) << t.Screen();
  t.Keys({"y"});
  ASSERT_TRUE(t.WaitFor("room made: every partition")) << t.Screen();
  t.Keys({"w"});
  ASSERT_TRUE(t.WaitFor("Type yes to write")) << t.Screen();
  t.Type("yes");
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("Press Enter to return to the planner", 600)) << t.Screen();
  EXPECT_NE(t.ScreenJoined().find("Verified: the table on"), std::string::npos) << t.Screen();
  t.Keys({"Enter", "q"});
  EXPECT_EQ(t.WaitForExit(30), 0) << t.Screen();
  const std::vector<std::string> plans = test::FilesIn(dir_.File("backups"), ".plan.json");
  ASSERT_EQ(plans.size(), 1u);
  ExpectRealignedWithTheSwapShrunk(plans[0], swap_before);
}

// report --make-room (issue 38: the shrink "is shown in ... the report"): the report's plan is
// plan --make-room's, with the shrink and why, in Markdown and HTML; nothing is written to the
// disk.
TEST_F(OldToolDiskTest, TheReportWithMakeRoomShowsTheShrink) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  const std::string shrink =
      "make room: partition 7 (swap, 321.58 MiB) gives 2 MiB at its end, shrunk by mkswap";
  for (const std::string format : {"markdown", "html"}) {
    const std::string page = dir_.File("report." + format);
    CommandResult report =
        RunPartalign({"report", "--make-room", "--format", format, "-o", page, dev}, "", Env());
    ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
    const std::string text = test::ReadFile(page);
    EXPECT_NE(text.find(shrink), std::string::npos) << format;
    // The shrunk partition's action says the shrink first; nothing is impossible.
    EXPECT_NE(text.find("swap shrunk first by 2 MiB"), std::string::npos) << format;
    EXPECT_NE(text.find("0 impossible"), std::string::npos) << format;
    if (format == "markdown") {
      EXPECT_NE(text.find("### Make room"), std::string::npos) << text;
      // Its "Applying it" names the consent the plan needs (issue 40).
      EXPECT_NE(text.find("then apply it with `partalign apply --make-room plan.json`"),
                std::string::npos)
          << text;
    }
  }
  EXPECT_EQ(test::CmpFiles(image_, before_), "");
}

// apply killed while it shrinks the swap: `resume --rollback` puts every byte back; killed
// again and resumed, the swap is shrunk with its UUID and label, and a plan of the disk then
// aligns everything without a shrink.
TEST_F(OldToolDiskTest, AKillDuringTheShrinkIsRolledBackOrCompleted) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  const std::string swap_before = SwapIdentity(Node(7));
  const std::string plan_file = dir_.File("plan.json");
  CommandResult plan = RunPartalign({"plan", "--make-room", "-o", plan_file, dev}, "", Env());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string journals = dir_.File("journals");
  const std::vector<std::string> apply = {
      "apply",         "--yes",  "--make-room", "--backup-dir", dir_.File("backups"),
      "--journal-dir", journals, plan_file};
  // The first kill points fall before the journal's header is durable (the step never wrote
  // the disk): the first point after them whose rollback puts every byte back.
  auto kill_at = [&](uint64_t point) {
    std::map<std::string, std::string> kill = Env();
    kill["PARTALIGN_TEST_KILL_AFTER"] = std::to_string(point);
    CommandResult killed = RunPartalign(apply, "", kill);
    EXPECT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
    EXPECT_EQ(killed.out.find("Step 1/"), std::string::npos) << killed.out;  // no move started
    return test::FilesIn(journals, ".partalign-journal");
  };
  uint64_t point = 1;
  std::vector<std::string> journal;
  for (; point <= 40; ++point) {
    journal = kill_at(point);
    ASSERT_FALSE(HasFailure()) << "point " << point;
    ASSERT_EQ(journal.size(), 1u) << "point " << point;
    CommandResult back = RunPartalign({"resume", "--rollback", journal[0], "--yes"}, "", Env());
    EXPECT_EQ(test::CmpFiles(image_, before_), "") << "point " << point;
    if (back.exit_code == 0) break;
    // An unreadable journal: its step never wrote the disk.
    ASSERT_NE(back.err.find("never wrote to its device"), std::string::npos) << back.err;
    std::filesystem::remove(journal[0]);
  }
  ASSERT_LE(point, 40u);
  EXPECT_FALSE(std::filesystem::exists(journal[0]));

  journal = kill_at(point);
  ASSERT_EQ(journal.size(), 1u);
  CommandResult done = RunPartalign({"resume", journal[0], "--yes"}, "", Env());
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  test::RunOrThrow({"partx", "-u", dev});
  EXPECT_EQ(SwapIdentity(Node(7)), swap_before);
  CommandResult again = RunPartalign({"plan", "--json", dev}, "", Env());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (const nlohmann::json& a : nlohmann::json::parse(again.out)["actions"]) {
    EXPECT_NE(a["kind"], "impossible") << a;
  }
  ExpectCheckersClean();
  ExpectFilesIntact();
}

// The same disk through the planner under tmux at 80x24: ? and x say the way through, d on the
// swap gives up its contents, A aligns the rest, w applies; the result as with plan + apply.
TEST_F(OldToolDiskTest, TheXpDiskIsRealignedInThePlannerUnderTmux) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  test::TmuxSession t(PlannerCommand(), 80, 24);
  ASSERT_TRUE(t.WaitFor("table on disk", 60)) << t.Screen();
  t.Keys({"?"});
  ASSERT_TRUE(t.WaitFor("way through: partition 7")) << t.Screen();
  t.Keys({"Enter", "x"});
  ASSERT_TRUE(t.WaitFor("way through: partition 7")) << t.Screen();
  t.Keys({"Enter", "Down", "Down", "Down", "Down", "d"});
  ASSERT_TRUE(t.WaitFor("contents are given up")) << t.Screen();
  t.Keys({"A"});
  ASSERT_TRUE(t.WaitFor("discarded")) << t.Screen();
  EXPECT_EQ(t.Screen().find("impossible"), std::string::npos) << t.Screen();
  t.Keys({"w"});
  ASSERT_TRUE(t.WaitFor("Type yes to write")) << t.Screen();
  t.Type("yes");
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("Press Enter to return to the planner", 600)) << t.Screen();
  EXPECT_NE(t.ScreenJoined().find("Verified: the table on"), std::string::npos) << t.Screen();
  t.Keys({"Enter", "q"});
  EXPECT_EQ(t.WaitForExit(30), 0) << t.Screen();

  ExpectAligned();
  ExpectCheckersClean();
  ExpectFilesIntact();
  EXPECT_EQ(test::TableReaderProblems(*loop_, 512), std::vector<std::string>{});
}

// The screen's text with every run of spaces and line ends one space: what the planner wraps
// between words, read as one text.
std::string Words(const std::string& screen) {
  std::string out;
  for (char c : screen) {
    const bool blank = c == ' ' || c == '\n';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  return out;
}

// The same disk through the planner under tmux at 80x24, the least invasive way (issue 38,
// "Make room"): ? says that M makes room; M shows which partition gives how many MiB, with
// what tool and why, and changes nothing until y; y shrinks the swap in the layout and aligns
// everything; the plan exported (e) holds the shrink, which apply runs only with --make-room;
// the result as with plan --make-room + apply.
TEST_F(OldToolDiskTest, TheXpDiskIsRealignedInThePlannerByShrinkingItsSwapUnderTmux) {
  PARTALIGN_REQUIRE_DEVICES();
  Build(test::XpDiskOfIssue38());
  const std::string dev = loop_->path();
  const std::string swap_before = SwapIdentity(Node(7));
  ASSERT_NE(swap_before.find("TYPE=swap"), std::string::npos) << swap_before;
  const std::string plan_file = dir_.File("planner.json");
  test::TmuxSession t(PlannerCommand(), 80, 24);
  ASSERT_TRUE(t.WaitFor("table on disk", 60)) << t.Screen();
  // A alone leaves partitions 1, 5 and 6 where they are (ALIGNED: NO): aligned starts do not
  // fit.
  t.Keys({"A"});
  ASSERT_TRUE(t.WaitFor("every partition where partalign plan puts it")) << t.Screen();
  EXPECT_NE(t.Screen().find(" NO "), std::string::npos) << t.Screen();
  t.Keys({"?"});
  ASSERT_TRUE(t.WaitFor("way through: partition 7")) << t.Screen();
  EXPECT_NE(Words(t.Screen()).find("M (make room, as plan --make-room) makes it 2 MiB smaller"),
            std::string::npos)
      << t.Screen();
  t.Keys({"Enter", "M"});
  ASSERT_TRUE(t.WaitFor("Make room?")) << t.Screen();
  const std::string offer = Words(t.Screen());
  EXPECT_NE(offer.find("make room: partition 7 (swap, 321.58 MiB) gives 2 MiB at its end, shrunk "
                       "by mkswap before any move"),
            std::string::npos)
      << t.Screen();
  EXPECT_NE(offer.find("the least invasive way that aligns partitions 1, 5 and 6"),
            std::string::npos)
      << t.Screen();
  EXPECT_NE(offer.find("with the same UUID, label and page size"), std::string::npos) << t.Screen();
  // Any other key than y leaves the layout as it is.
  t.Keys({"n"});
  ASSERT_TRUE(t.WaitFor("no room made")) << t.Screen();
  EXPECT_NE(t.Screen().find(" NO "), std::string::npos) << t.Screen();
  t.Keys({"M"});
  ASSERT_TRUE(t.WaitFor("Make room?")) << t.Screen();
  t.Keys({"y"});
  ASSERT_TRUE(t.WaitFor("room made: every partition")) << t.Screen();
  EXPECT_EQ(t.Screen().find(" NO "), std::string::npos) << t.Screen();
  EXPECT_EQ(t.Screen().find("impossible"), std::string::npos) << t.Screen();
  EXPECT_NE(Words(t.Screen()).find("partition 7 shrunk by 2 MiB first (mkswap)"), std::string::npos)
      << t.Screen();
  t.Keys({"e"});
  ASSERT_TRUE(t.WaitFor("Export to")) << t.Screen();
  t.Type(plan_file);
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("wrote '")) << t.Screen();
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(30), 0) << t.Screen();
  EXPECT_EQ(test::CmpFiles(image_, before_), "");

  const nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan_file));
  for (const nlohmann::json& a : doc["actions"]) {
    EXPECT_NE(a["kind"], "impossible") << a;
    EXPECT_EQ(a.contains("shrink"), a["partition"] == 7) << a;
    if (a.contains("shrink")) {
      EXPECT_EQ(a["shrink"]["tool"], "mkswap") << a;
    }
  }
  ExpectRefusedWithoutConsent(plan_file, "--make-room");
  ApplyWithTheSwapShrunk(plan_file, swap_before);
}

// A swap at sector 63 with an NTFS right after it to the last cylinder (XP's layout): plan can
// align neither, so apply of its plan does nothing, exits 3, and names the way through, which
// works when run word for word.
TEST_F(OldToolDiskTest, ApplyOfAPlanThatAlignsNothingNamesTheWayThrough) {
  PARTALIGN_REQUIRE_DEVICES();
  // 65 cylinders and 100 sectors: too little after the last cylinder for either to move up.
  Build({test::OldTool::kWindowsXp,
         (65 * test::kCylinderSectors + 100) * 512,
         {{"swap", 5, false}, {"ntfs", 0, true}},
         {}});
  const std::string dev = loop_->path();
  const std::string plan_file = dir_.File("plan.json");
  CommandResult plan = RunPartalign({"plan", "-o", plan_file, dev}, "", Env());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  for (const nlohmann::json& a : nlohmann::json::parse(test::ReadFile(plan_file))["actions"]) {
    EXPECT_EQ(a["kind"], "impossible") << a;
  }
  CommandResult applied =
      RunPartalign({"apply", "--yes", "--backup-dir", dir_.File("backups"), plan_file}, "", Env());
  EXPECT_EQ(applied.exit_code, kRefused) << applied.out << applied.err;
  EXPECT_NE(applied.err.find("2 partitions stay misaligned"), std::string::npos) << applied.err;
  EXPECT_EQ(test::CmpFiles(image_, before_), "");
  const std::string advice = test::AdviceIn(
      applied.err,
      "way through: partition 1 \\(swap, [^)]*\\) can give the room: '(partalign plan "
      "--discard[^']*)'");
  ASSERT_EQ(advice, "partalign plan --discard 1 -o plan.json " + dev) << applied.err;
  CommandResult planned = test::RunAdvice(advice, dir_.path());
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  // The plan gives up the swap's contents, which only the person can say: apply without
  // --discard 1 writes nothing and names the command that says it.
  const std::vector<std::string> apply_args = ApplyArgs();
  ExpectRefusedWithoutConsent(plan_file, "--discard 1");
  std::vector<std::string> said = apply_args;
  said.insert(said.end(), {"--discard", "1", plan_file});
  CommandResult realigned = RunPartalign(said, "", Env());
  ASSERT_EQ(realigned.exit_code, 0) << realigned.out << realigned.err;
  ExpectCheckersClean();
  ExpectFilesIntact();
}

}  // namespace
}  // namespace partalign
