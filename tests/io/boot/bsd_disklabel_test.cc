// SPDX-License-Identifier: GPL-3.0-or-later
// A BSD disklabel inside a DOS slice keeps absolute offsets (issue #28: refused unless
// rewritten with the slice). The label is written by util-linux fdisk's nested BSD editor,
// which reads and writes them as absolute sectors (libfdisk/src/bsd.c), and read back by it
// after the slice moved from 63 to 2048 and the boot domain's edit was written: every BSD
// partition inside the slice moved with it, the whole-disk one did not.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "partalign/boot/boot_scan.h"
#include "support/boot_disks.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

// fdisk's view of the nested label: slice letter -> (start, end).
std::map<char, std::pair<uint64_t, uint64_t>> FdiskBsdSlices(const std::string& image) {
  test::CommandResult r = test::RunCommand({"fdisk", image}, "b\np\nq\n");
  std::map<char, std::pair<uint64_t, uint64_t>> out;
  std::istringstream in(r.out);
  std::string line;
  const std::regex row(R"(^([a-p])\s+(\d+)\s+(\d+)\s)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row))
      out[m[1].str()[0]] = {std::stoull(m[2]), std::stoull(m[3])};
  }
  return out;
}

TEST(BsdDisklabelTest, FdiskReadsTheLabelAtTheSlicesNewPlace) {
  test::TempDir dir;
  const std::string image = dir.File("bsd.img");
  test::CreateSparseFile(image, 64 << 20);
  ASSERT_EQ(test::WriteWithSfdisk(image,
                                  "label: dos\nlabel-id: 0x0b5d0001\nstart=63, size=40000, "
                                  "type=a5\n")
                .exit_code,
            0);
  // fdisk's nested BSD editor: a new label, partition 'a' of 5 MiB at the slice's start.
  test::CommandResult made = test::RunCommand({"fdisk", image}, "b\ny\nn\na\n\n+5M\nw\n");
  ASSERT_NE(made.out.find("Disklabel written"), std::string::npos) << made.out << made.err;
  const auto before = FdiskBsdSlices(image);
  ASSERT_EQ(before.at('a').first, 63u);
  ASSERT_EQ(before.at('c'), (std::pair<uint64_t, uint64_t>{63, 40062}));

  const std::vector<PartitionMove> moves = {{1, 63, 2048, 40000, 40000}};
  const BootReport report = test::ScanBoot(image, test::BootDiskBySfdisk(image, 512), moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  ASSERT_EQ(report.Edits().size(), 1u) << test::DescribeReport(report);
  EXPECT_NE(test::DescribeReport(report).find(
                "1 bsd-disklabel update: BSD disklabel in DOS slice 1: partition offsets 63 -> "
                "2048, checksum recomputed"),
            std::string::npos)
      << test::DescribeReport(report);

  test::MoveSectors(image, 512, 63, 2048, 40000);
  test::RewritePartition(image, 1, 2048, 40000);
  EXPECT_EQ(FdiskBsdSlices(image).at('a').first, 63u) << "without the edit: still the old place";
  test::ApplyBootEdits(image, 512, report, {{1, 2048}});
  const auto after = FdiskBsdSlices(image);
  EXPECT_EQ(after.at('a'),
            (std::pair<uint64_t, uint64_t>{2048, 2048 + before.at('a').second - 63}));
  EXPECT_EQ(after.at('c'), (std::pair<uint64_t, uint64_t>{2048, 2048 + 40000 - 1}));
  EXPECT_EQ(after.at('d'), before.at('d')) << "the whole-disk partition does not move";
}

}  // namespace
}  // namespace partalign
