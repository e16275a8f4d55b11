// SPDX-License-Identifier: GPL-3.0-or-later
// ComputeTableTransition against the real sfdisk (image files, no root): the new bytes are
// exactly what sfdisk writes when given the disk's own dump with the planned starts, every
// byte sfdisk changes lies in a range, boot code survives, and the disk is never written.
#include "io/table/fdisk_transition.h"

#include <gtest/gtest.h>

#include <regex>

#include "support/apply_layouts.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;

// sfdisk's own dump of `image` with `start=FROM, size=N` of one line replaced.
std::string EditedDump(const std::string& image,
                       const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>& moves) {
  CommandResult d = RunCommand({"sfdisk", "--dump", image});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  std::string text = d.out;
  for (const auto& [from, to, size] : moves) {
    std::regex line("start= *" + std::to_string(from) + ", size= *[0-9]+");
    text = std::regex_replace(text, line,
                              "start=" + std::to_string(to) + ", size=" + std::to_string(size));
  }
  return text;
}

void ExpectSfdiskAgrees(const std::string& image, const ComputedTransition& c,
                        const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>& moves,
                        const test::TempDir& dir) {
  const std::string copy = dir.File("oracle.img");
  ASSERT_EQ(RunCommand({"cp", "--sparse=always", image, copy}).exit_code, 0);
  CommandResult s = RunCommand({"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", copy},
                               EditedDump(image, moves));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string old_bytes = test::ReadFile(image);
  const std::string new_bytes = test::ReadFile(copy);
  std::vector<bool> covered(old_bytes.size(), false);
  int changed = 0;
  for (const TableRange& r : c.transition.ranges) {
    for (uint64_t i = r.offset_bytes; i < r.offset_bytes + r.length_bytes; ++i) covered[i] = true;
    EXPECT_EQ(std::string(r.old_bytes.begin(), r.old_bytes.end()),
              old_bytes.substr(r.offset_bytes, r.length_bytes));
    EXPECT_EQ(std::string(r.new_bytes.begin(), r.new_bytes.end()),
              new_bytes.substr(r.offset_bytes, r.length_bytes))
        << AreaName(c.transition.label, r);
    changed += r.changed();
  }
  EXPECT_GE(changed, 2);
  for (size_t i = 0; i < old_bytes.size(); ++i) {
    if (old_bytes[i] != new_bytes[i] && !covered[i]) {
      ADD_FAILURE() << "sfdisk changed byte " << i << ", which no range covers";
      break;
    }
  }
}

// A 64 MiB image with `layout`'s table and a copy of it, "before.img".
std::string LayoutImage(const test::TempDir& dir, const std::string& layout) {
  const std::string image = dir.File(layout + ".img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, test::ApplyLayoutNamed(layout).script, 512);
  EXPECT_EQ(RunCommand({"cp", "--sparse=always", image, dir.File("before.img")}).exit_code, 0);
  return image;
}

TEST(FdiskTransitionTest, GptNewBytesAreWhatSfdiskWrites) {
  test::TempDir dir;
  const std::string image = LayoutImage(dir, "gpt_512");
  const std::string before = dir.File("before.img");
  Result<ComputedTransition> c =
      ComputeTableTransition(image, 512, {{1, 2048, 18015}, {2, 40960, 19520}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(test::CmpFiles(image, before), "");  // computing writes nothing
  EXPECT_EQ(c->new_table.partitions[0].start_sector, 2048u);
  EXPECT_EQ(c->new_table.partitions[1].end_sector(), 60479u);
  EXPECT_EQ(c->new_table.partitions[2].start_sector, 65536u);
  EXPECT_EQ(c->new_table.disk_id, c->old_table.disk_id);
  EXPECT_NE(c->new_table.fingerprint, c->old_table.fingerprint);
  ExpectSfdiskAgrees(image, *c, {{63, 2048, 18015}, {40000, 40960, 19520}}, dir);
}

TEST(FdiskTransitionTest, DosWithLogicalPartitionsAndBootCode) {
  test::TempDir dir;
  const std::string image = LayoutImage(dir, "dos_512");
  // Boot code in the MBR: a table change must not lose it (sfdisk keeps it too).
  CommandResult boot = RunCommand(
      {"dd", "if=/dev/urandom", "of=" + image, "bs=440", "count=1", "conv=notrunc", "status=none"});
  ASSERT_EQ(boot.exit_code, 0) << boot.err;
  const std::string code = test::ReadFile(image).substr(0, 440);
  Result<ComputedTransition> c =
      ComputeTableTransition(image, 512, {{1, 2048, 18015}, {5, 32768, 9232}, {6, 45056, 9944}});
  ASSERT_TRUE(c) << c.error().message;
  bool mbr_seen = false;
  for (const TableRange& r : c->transition.ranges) {
    if (r.role != TableAreaRole::kMbr) continue;
    mbr_seen = true;
    EXPECT_TRUE(r.changed());
    EXPECT_EQ(std::string(r.new_bytes.begin(), r.new_bytes.begin() + 440), code);
  }
  EXPECT_TRUE(mbr_seen);
  ExpectSfdiskAgrees(image, *c, {{63, 2048, 18015}, {32000, 32768, 9232}, {45000, 45056, 9944}},
                     dir);
}

TEST(FdiskTransitionTest, ImpossibleEditsAreErrorsAndWriteNothing) {
  test::TempDir dir;
  const std::string image = LayoutImage(dir, "gpt_512");
  const std::string before = dir.File("before.img");
  Result<ComputedTransition> c = ComputeTableTransition(image, 512, {{9, 2048, 100}});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("has no partition 9"), std::string::npos) << c.error().message;
  c = ComputeTableTransition(image, 512, {{1, 39000, 20000}});  // runs into partition 2
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("libfdisk cannot make the planned table"), std::string::npos)
      << c.error().message;
  const std::string empty = dir.File("empty.img");
  test::CreateSparseFile(empty, 64ull << 20);
  c = ComputeTableTransition(empty, 512, {});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("has no GPT or DOS partition table"), std::string::npos);
  EXPECT_EQ(test::CmpFiles(image, before), "");
}

}  // namespace
}  // namespace partalign
