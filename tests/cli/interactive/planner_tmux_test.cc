// SPDX-License-Identifier: GPL-3.0-or-later
// plan --interactive end to end, under tmux (send-keys, capture-pane): the issue's "Done when"
// sequence, a 3-partition layout exported as .json and .sfdisk and applied, the same on an
// image whose table is misaligned and holds data (the plan moves it), `w` inside the planner,
// and the refusal without a terminal. Image files only: no root needed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "io/table/fdisk_table.h"
#include "partalign/layout/plan.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"
#include "support/tmux_session.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::TmuxSession;

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kImageBytes = 2ull << 30;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string PlannerCommand(const std::string& image, const std::string& extra = "") {
  return fmt::format("{} plan --interactive {} {}", Quote(PARTALIGN_BINARY), extra, Quote(image));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The partition lines of an sfdisk script or dump: "start=..., size=..., type=...", in order.
std::vector<std::string> PartitionLines(const std::string& script) {
  static const std::regex kLine(R"(start= *(\d+), size= *(\d+), type=([0-9A-Fa-f-]+))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(script.begin(), script.end(), kLine), end; it != end; ++it) {
    std::string type = (*it)[3];
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out.push_back(fmt::format("{}+{} {}", (*it)[1].str(), (*it)[2].str(), type));
  }
  return out;
}

std::string Dump(const std::string& image) {
  CommandResult r = test::RunCommand({"sfdisk", "--dump", image});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

void ApplyPlanFile(const std::string& plan, const test::TempDir& dir) {
  std::vector<std::string> args{"apply", "--yes", "--backup-dir", dir.File("backups"), plan};
  CommandResult r = test::RunPartalign(args);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(args, r);
  EXPECT_NE(r.out.find("Verified: the table on"), std::string::npos) << r.out;
}

// The issue's "Done when": n, 256M, Enter, Enter, n, Enter, Enter, e, a path ending in .json,
// Enter, q on an empty 2 GiB image gives a plan file with 2 partitions, 1 MiB-aligned, that
// apply accepts.
TEST(PlannerTmuxTest, DoneWhenSequence) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  const std::string plan = dir.File("path.json");
  TmuxSession t(PlannerCommand(image));
  ASSERT_TRUE(t.WaitFor("free")) << t.Screen();
  t.Keys({"n"});
  t.Type("256M");
  t.Keys({"Enter", "Enter", "n", "Enter", "Enter", "e"});
  ASSERT_TRUE(t.WaitFor("Export to")) << t.Screen();
  t.Type(plan);
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("wrote '" + plan + "'")) << t.Screen();
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();

  Result<Plan> parsed = PlanFromJson(ReadFile(plan));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_TRUE(parsed->layout);
  ASSERT_EQ(parsed->layout->partitions.size(), 2u);
  for (const LayoutPartition& p : parsed->layout->partitions) {
    EXPECT_EQ(p.start_sector * 512 % kMiB, 0u) << p.partition;
    EXPECT_EQ((p.end_sector + 1) * 512 % kMiB, 0u) << p.partition;
  }
  EXPECT_EQ(
      (parsed->layout->partitions[0].end_sector + 1 - parsed->layout->partitions[0].start_sector) *
          512,
      256 * kMiB);
  ApplyPlanFile(plan, dir);
  Result<TableRead> table = ReadPartitionTable(image, {.probe_contents = false});
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->table.partitions.size(), 2u);
  EXPECT_EQ(table->table.partitions[0].start_sector, 2048u);
  EXPECT_EQ(table->table.partitions[1].start_sector, 2048u + 256 * 2048);
}

// A 3-partition layout on an empty image, exported as .json and .sfdisk; the plan file applied;
// the table on the image is the exported script's.
TEST(PlannerTmuxTest, ThreePartitionsExportedAndApplied) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  TmuxSession t(PlannerCommand(image));
  ASSERT_TRUE(t.WaitFor("free")) << t.Screen();
  t.Keys({"n"});
  t.Type("512M");
  t.Keys({"Enter"});
  t.Type("uefi");
  t.Keys({"Enter", "n"});
  t.Type("1G");
  t.Keys({"Enter"});
  t.Type("swap");
  t.Keys({"Enter", "n", "Enter", "Enter"});
  ASSERT_TRUE(t.WaitFor("changes: 3 new; w writes a new GPT table")) << t.Screen();
  for (const char* ext : {"json", "sfdisk"}) {
    t.Keys({"e"});
    t.Type(dir.File(fmt::format("layout.{}", ext)));
    t.Keys({"Enter"});
    ASSERT_TRUE(t.WaitFor(fmt::format("layout.{}'", ext))) << t.Screen();
  }
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();

  const std::string script = ReadFile(dir.File("layout.sfdisk"));
  const std::vector<std::string> exported = PartitionLines(script);
  ASSERT_EQ(exported.size(), 3u) << script;
  EXPECT_EQ(exported[0], "2048+1048576 C12A7328-F81F-11D2-BA4B-00A0C93EC93B");
  EXPECT_EQ(exported[1], "1050624+2097152 0657FD6D-A4AB-43C4-84E5-0933C84B4F4F");
  ApplyPlanFile(dir.File("layout.json"), dir);
  EXPECT_EQ(PartitionLines(Dump(image)), exported) << Dump(image);
}

// An image whose GPT partitions start at 63-era sectors, partition 2 holding data: r on each
// realigns it (partition 2's data moves: the planner says how many bytes), the plan file is
// applied through the journaled mover, the table is the exported script's and the data moved
// with its partition.
TEST(PlannerTmuxTest, MisalignedTableRealignedWithADataMove) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  ASSERT_EQ(test::WriteWithSfdisk(
                image,
                "label: gpt\nfirst-lba: 34\nstart=63, size=204800\nstart=204863, size=409600\n"
                "start=614463, size=409600\n")
                .exit_code,
            0);
  // 1 MiB of a recognisable pattern at the start of partition 2.
  std::string pattern(kMiB, '\0');
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<char>('A' + i % 23);
  {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(204863ll * 512);
    f.write(pattern.data(), static_cast<std::streamsize>(pattern.size()));
  }
  TmuxSession t(PlannerCommand(image), 120, 30);
  ASSERT_TRUE(t.WaitFor("GPT table on disk")) << t.Screen();
  EXPECT_NE(t.Screen().find("unchanged"), std::string::npos) << t.Screen();
  t.Keys({"r", "Enter", "Down", "r", "Enter", "Down", "r", "Enter"});
  ASSERT_TRUE(t.WaitFor("moving 200 MiB of data")) << t.Screen();
  EXPECT_NE(t.Screen().find("move 200 MiB"), std::string::npos) << t.Screen();
  for (const char* ext : {"json", "sfdisk"}) {
    t.Keys({"e"});
    t.Type(dir.File(fmt::format("aligned.{}", ext)));
    t.Keys({"Enter"});
    ASSERT_TRUE(t.WaitFor(fmt::format("aligned.{}'", ext))) << t.Screen();
  }
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();

  ApplyPlanFile(dir.File("aligned.json"), dir);
  const std::vector<std::string> exported = PartitionLines(ReadFile(dir.File("aligned.sfdisk")));
  ASSERT_EQ(exported.size(), 3u);
  EXPECT_EQ(PartitionLines(Dump(image)), exported) << Dump(image);
  Result<TableRead> table = ReadPartitionTable(image, {.probe_contents = false});
  ASSERT_TRUE(table) << table.error().message;
  for (const Partition& p : table->table.partitions) {
    EXPECT_EQ(p.start_sector % 2048, 0u) << "partition " << p.number;
  }
  const Partition* p2 = table->table.Find(2);
  ASSERT_NE(p2, nullptr);
  std::string moved(kMiB, '\0');
  std::ifstream f(image, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(p2->start_sector * 512));
  f.read(moved.data(), static_cast<std::streamsize>(moved.size()));
  EXPECT_TRUE(moved == pattern) << "partition 2's data did not move with it";
}

// `w` applies from inside the planner, through apply's own contract, and shows the disk after.
TEST(PlannerTmuxTest, WriteInsideThePlanner) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 256 * kMiB);
  TmuxSession t(PlannerCommand(image, "--backup-dir " + Quote(dir.File("backups"))));
  ASSERT_TRUE(t.WaitFor("free")) << t.Screen();
  t.Keys({"n", "Enter", "Enter", "w"});
  ASSERT_TRUE(t.WaitFor("Type yes to write")) << t.Screen();
  t.Type("yes");
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("Press Enter to return to the planner", 30)) << t.Screen();
  EXPECT_NE(t.Screen().find("Verified: the table on"), std::string::npos) << t.Screen();
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("GPT table on disk")) << t.Screen();
  EXPECT_NE(t.Screen().find("applied '"), std::string::npos) << t.Screen();
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();
  Result<TableRead> table = ReadPartitionTable(image, {.probe_contents = false});
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->table.partitions.size(), 1u);
  EXPECT_EQ(table->table.partitions[0].start_sector, 2048u);
}

TEST(PlannerTmuxTest, WithoutATerminalItPointsToPlanLayout) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64 * kMiB);
  CommandResult r = test::RunPartalign({"plan", "--interactive", image});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, fmt::format("partalign: plan --interactive needs a terminal; without one use "
                               "'partalign plan --layout SPEC {}'\n",
                               image));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// A swap partition holding a hibernation image (docs/used-map.md, "Hibernation is a refusal"):
// the planner says so on its message line from the start, as w (apply) will refuse.
TEST(PlannerTmuxTest, AHibernatedSystemIsSaidOnTheMessageLine) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64 * kMiB);
  test::RunOrThrow({"sfdisk", "-q", image},
                   "label: gpt\nfirst-lba: 34\nstart=63, size=20000\nstart=40000, size=20480\n");
  {
    // The signature a hibernating kernel writes over the swap header's.
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40000 * 512 + 4086);
    f.write("S1SUSPEND", 9);
  }
  TmuxSession t(PlannerCommand(image));
  EXPECT_TRUE(t.WaitFor("partition 2 holds a hibernated system")) << t.Screen();
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();
}

}  // namespace
}  // namespace partalign
