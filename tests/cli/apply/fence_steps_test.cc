// SPDX-License-Identifier: GPL-3.0-or-later
// The fence (fence_steps.h) against the real sfdisk (image files, no root): the fenced bytes
// are byte for byte what `sfdisk --delete` writes, every other partition reads back as it was,
// the step's table write takes the fence as its old bytes, and a logical partition keeps its
// entry, pointed at a placeholder.
#include "cli/apply/fence_steps.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "support/apply_layouts.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;

// A 64 MiB image with `layout`'s table.
std::string LayoutImage(const test::TempDir& dir, const std::string& layout) {
  const std::string image = dir.File(layout + ".img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, test::ApplyLayoutNamed(layout).script, 512);
  return image;
}

// `image` with the fence's new bytes written over it, as a copy.
std::string Fenced(const test::TempDir& dir, const std::string& image, const PreparedFence& f) {
  const std::string copy = dir.File("fenced.img");
  EXPECT_EQ(RunCommand({"cp", "--sparse=always", image, copy}).exit_code, 0);
  const int fd = ::open(copy.c_str(), O_WRONLY);
  EXPECT_GE(fd, 0);
  for (const TableRange& r : f.transition.ranges) {
    EXPECT_EQ(
        ::pwrite(fd, r.new_bytes.data(), r.new_bytes.size(), static_cast<off_t>(r.offset_bytes)),
        static_cast<ssize_t>(r.new_bytes.size()));
  }
  ::close(fd);
  return copy;
}

// What `sfdisk --delete IMAGE N` leaves, as a copy.
std::string SfdiskDeleted(const test::TempDir& dir, const std::string& image, uint32_t number) {
  const std::string copy = dir.File("oracle.img");
  EXPECT_EQ(RunCommand({"cp", "--sparse=always", image, copy}).exit_code, 0);
  const CommandResult s = RunCommand({"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel",
                                      "--delete", copy, std::to_string(number)});
  EXPECT_EQ(s.exit_code, 0) << s.out << s.err;
  return copy;
}

void ExpectSfdiskDeleteAgrees(const std::string& layout, const std::vector<ScriptEdit>& step,
                              uint32_t number) {
  test::TempDir dir;
  const std::string image = LayoutImage(dir, layout);
  Result<ComputedTransition> c = ComputeTableTransition(image, 512, step);
  ASSERT_TRUE(c) << c.error().message;
  Result<PreparedFence> f = PrepareFence(*c, number);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->partition, number);
  EXPECT_NE(f->fenced_fingerprint, c->old_table.fingerprint);
  // Byte for byte what sfdisk writes when it deletes the partition, nothing else changed.
  const std::string fenced = Fenced(dir, image, *f);
  EXPECT_EQ(test::CmpFiles(fenced, SfdiskDeleted(dir, image, number)), "") << layout;
  // sfdisk reads every other partition as it was, and the table is sound.
  const nlohmann::json before = test::SfdiskJson(image);
  const nlohmann::json after = test::SfdiskJson(fenced);
  ASSERT_EQ(after["partitions"].size() + 1, before["partitions"].size()) << after;
  size_t j = 0;
  for (const nlohmann::json& p : before["partitions"]) {
    if (p["node"].get<std::string>().ends_with(std::to_string(number)) &&
        p["start"] == c->old_table.Find(number)->start_sector) {
      continue;
    }
    nlohmann::json q = after["partitions"][j++];
    q["node"] = p["node"];  // the image's name differs
    EXPECT_EQ(q, p);
  }
  const CommandResult verify = RunCommand({"sfdisk", "--verify", fenced});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // The step's own table write starts from the fence: its old bytes are the fenced ones where
  // the fence wrote, and nothing else changes.
  std::vector<TableUpdate> updates;
  for (const TableRange& r : ChangedRanges(c->transition)) {
    updates.push_back({r.offset_bytes, r.old_bytes, r.new_bytes});
  }
  const std::vector<TableUpdate> after_fence = UpdatesAfterFence(updates, *f);
  ASSERT_EQ(after_fence.size(), updates.size());
  const std::string fenced_bytes = test::ReadFile(fenced);
  for (size_t i = 0; i < updates.size(); ++i) {
    const TableUpdate& u = after_fence[i];
    EXPECT_EQ(u.offset_bytes, updates[i].offset_bytes);
    EXPECT_EQ(u.new_bytes, updates[i].new_bytes);
    EXPECT_EQ(std::string(u.old_bytes.begin(), u.old_bytes.end()),
              fenced_bytes.substr(u.offset_bytes, u.old_bytes.size()));
  }
}

TEST(FenceStepsTest, GptFenceIsWhatSfdiskDeleteWrites) {
  ExpectSfdiskDeleteAgrees("gpt_512", {{2, 40960, 19520}}, 2);
  ExpectSfdiskDeleteAgrees("gpt_512", {{1, 2048, 18015}}, 1);
}

TEST(FenceStepsTest, DosPrimaryFenceIsWhatSfdiskDeleteWrites) {
  ExpectSfdiskDeleteAgrees("dos_512", {{1, 2048, 18015}}, 1);
}

// A logical partition keeps its entry, pointed at the sector after its EBR: sfdisk reads every
// partition as before but that one, which is one sector there, and the step that moves it
// starts its own table write from the fence.
TEST(FenceStepsTest, ALogicalPartitionPointsAtAPlaceholderAfterItsEbr) {
  test::TempDir dir;
  const std::string image = LayoutImage(dir, "dos_512");
  // sfdisk put the EBR of partition 6 in the sector right before it: its placeholder is the
  // first free sector after the EBR, past the partition's old and new places.
  for (auto [number, edit] :
       {std::pair{5u, ScriptEdit{5, 32768, 9232}}, std::pair{6u, ScriptEdit{6, 45056, 9944}}}) {
    SCOPED_TRACE(number);
    Result<ComputedTransition> c = ComputeTableTransition(image, 512, {edit});
    ASSERT_TRUE(c) << c.error().message;
    Result<PreparedFence> f = PrepareFence(*c, number);
    ASSERT_TRUE(f) << f.error().message;
    const std::string fenced = Fenced(dir, image, *f);
    const nlohmann::json before = test::SfdiskJson(image);
    const nlohmann::json after = test::SfdiskJson(fenced);
    ASSERT_EQ(after["partitions"].size(), before["partitions"].size()) << after;
    uint64_t ebr = 0;
    for (const TableRange& r : f->transition.ranges) {
      if (r.changed()) ebr = r.offset_bytes / 512;
    }
    // Partition 5's placeholder is right after its EBR (at 30000); 6's after its old and new
    // place (45000-54999, 45056-54999).
    const uint64_t placeholder = number == 5 ? ebr + 1 : 55000;
    for (size_t i = 0; i < before["partitions"].size(); ++i) {
      nlohmann::json p = before["partitions"][i];
      nlohmann::json q = after["partitions"][i];
      q["node"] = p["node"];
      if (p["node"].get<std::string>().ends_with(std::to_string(number))) {
        p["start"] = placeholder;
        p["size"] = 1;
      }
      EXPECT_EQ(q, p);
    }
    std::vector<TableUpdate> updates;
    for (const TableRange& r : ChangedRanges(c->transition)) {
      updates.push_back({r.offset_bytes, r.old_bytes, r.new_bytes});
    }
    // Partition 5's EBR stays where it is: the step writes it, from the fence. Partition 6's
    // moves with it: its old place gets its bytes back after the step's table.
    const std::vector<TableUpdate> after_fence = UpdatesAfterFence(updates, *f);
    const std::string fenced_bytes = test::ReadFile(fenced);
    const std::string original = test::ReadFile(image);
    ASSERT_EQ(after_fence.size(), updates.size() + (number == 5 ? 0 : 1));
    for (size_t i = 0; i < after_fence.size(); ++i) {
      const TableUpdate& u = after_fence[i];
      EXPECT_EQ(std::string(u.old_bytes.begin(), u.old_bytes.end()),
                fenced_bytes.substr(u.offset_bytes, u.old_bytes.size()));
      if (i >= updates.size()) {
        EXPECT_EQ(u.offset_bytes, ebr * 512);
        EXPECT_EQ(std::string(u.new_bytes.begin(), u.new_bytes.end()),
                  original.substr(u.offset_bytes, u.new_bytes.size()));
      }
    }
  }
}

TEST(FenceStepsTest, TheExtendedPartitionIsNotFenced) {
  test::TempDir dir;
  const std::string image = LayoutImage(dir, "dos_512");
  Result<ComputedTransition> c = ComputeTableTransition(image, 512, {{5, 32768, 9232}});
  ASSERT_TRUE(c) << c.error().message;
  for (const Partition& p : c->old_table.partitions) {
    if (p.kind != PartitionKind::kExtended) continue;
    Result<PreparedFence> extended = PrepareFence(*c, p.number);
    ASSERT_FALSE(extended);
    EXPECT_NE(extended.error().message.find("is the extended partition"), std::string::npos)
        << extended.error().message;
  }
  Result<PreparedFence> none = PrepareFence(*c, 4);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("has no partition 4"), std::string::npos)
      << none.error().message;
}

}  // namespace
}  // namespace partalign
