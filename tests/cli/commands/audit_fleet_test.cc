// SPDX-License-Identifier: GPL-3.0-or-later
// audit on a fleet: several targets and --all, and --format prometheus --output FILE checked
// with the real promtool (unpacked by scripts/install-deps.sh) and for unique series (which
// promtool does not check: node_exporter keeps one of two duplicates without a word).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "io/device/disk_list.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr const char* kPromtool = "/opt/partalign-test-tools/bin/promtool";

// A 64 MiB image with DOS-labelled, one partition at `start` (sectors).
std::string MakeDisk(const test::TempDir& dir, const std::string& name, int start) {
  const std::string image = dir.File(name);
  test::CreateSparseFile(image, 64ull << 20);
  CommandResult r =
      test::WriteWithSfdisk(image, "label: dos\nstart=" + std::to_string(start) + ", size=4096\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return image;
}

// The sample lines' series (name and labels), in order.
std::vector<std::string> Series(const std::string& text) {
  std::vector<std::string> series;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') series.push_back(line.substr(0, line.rfind(' ')));
  }
  return series;
}

void ExpectPromtoolAccepts(const std::string& file) {
  ASSERT_TRUE(std::filesystem::exists(kPromtool))
      << kPromtool << " is missing: run scripts/install-deps.sh";
  CommandResult check =
      RunCommand({"sh", "-c", std::string(kPromtool) + " check metrics < " + file});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out + check.err, "") << "promtool's lint findings";
}

TEST(AuditFleetTest, PrometheusTextfileNamesDisksByKernelNameAndPassesPromtool) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  test::LoopDevice aligned(MakeDisk(dir, "aligned.img", 2048), 512);
  test::LoopDevice misaligned(MakeDisk(dir, "misaligned.img", 63), 512);
  const std::string image = MakeDisk(dir, "image.img", 2048);
  const std::string prom = dir.File("partalign.prom");
  std::vector<std::string> args{"audit", "--format",     "prometheus",      "--output",
                                prom,    aligned.path(), misaligned.path(), image};
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 2) << test::Describe(args, r);
  EXPECT_EQ(r.out, "") << "the metrics go to the file only";
  ASSERT_TRUE(std::filesystem::exists(prom));
  EXPECT_FALSE(std::filesystem::exists(prom + ".tmp"));
  const std::string text = test::ReadFile(prom);
  ExpectPromtoolAccepts(prom);
  const std::string a = aligned.name();
  const std::string m = misaligned.name();
  EXPECT_NE(text.find("partalign_partition_misaligned{device=\"" + a + "\",partition=\"1\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("partalign_partition_misaligned{device=\"" + m + "\",partition=\"1\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("partalign_disk_info{device=\"" + a + "\",table=\"dos\",transport=\"loop\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("partalign_disk_info{device=\"" + image + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("partalign_last_run_timestamp_seconds "), std::string::npos) << text;
  std::vector<std::string> series = Series(text);
  EXPECT_EQ(std::set<std::string>(series.begin(), series.end()).size(), series.size()) << text;
  EXPECT_EQ(series.size(), 3u + 3u + 1u) << text;  // per disk: partition, info; the timestamp
}

TEST(AuditFleetTest, OneDiskNamedTwiceGivesOneSetOfSeries) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  test::LoopDevice loop(MakeDisk(dir, "disk.img", 63), 512);
  struct stat st {};
  ASSERT_EQ(::stat(loop.path().c_str(), &st), 0);
  const std::string by_number =
      "/dev/block/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  std::vector<std::string> args{"audit", "--format", "prometheus", loop.path(), loop.path()};
  if (std::filesystem::exists(by_number)) args.push_back(by_number);
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 2) << test::Describe(args, r);
  EXPECT_NE(r.err.find("already audited"), std::string::npos) << r.err;
  std::vector<std::string> series = Series(r.out);
  EXPECT_EQ(std::set<std::string>(series.begin(), series.end()).size(), series.size()) << r.out;
  EXPECT_EQ(series.size(), 3u) << r.out;
}

TEST(AuditFleetTest, AllAuditsOrSkipsWithANoteEveryDiskOfTheMachine) {
  PARTALIGN_REQUIRE_DEVICES();
  Result<std::vector<std::string>> disks = ListWholeDisks();
  ASSERT_TRUE(disks) << disks.error().message;
  std::vector<std::string> args{"audit", "--all", "--format", "prometheus"};
  CommandResult r = RunPartalign(args);
  EXPECT_NE(r.exit_code, 1) << test::Describe(args, r);
  for (const std::string& disk : *disks) {
    const std::string name = disk.substr(std::string("/dev/").size());
    const bool audited =
        r.out.find("partalign_disk_info{device=\"" + name + "\"") != std::string::npos;
    const bool skipped = r.err.find("skipping '" + disk + "'") != std::string::npos;
    EXPECT_TRUE(audited != skipped) << disk << "\n" << test::Describe(args, r);
  }
  // Targets and --all together, or neither, are usage errors.
  EXPECT_EQ(RunPartalign({"audit", "--all", "/dev/null"}).exit_code, 1);
  EXPECT_EQ(RunPartalign({"audit"}).exit_code, 1);
}

TEST(AuditFleetTest, AnOutputThatCannotBeWrittenIsAOneLineError) {
  test::TempDir dir;
  const std::string image = MakeDisk(dir, "disk.img", 2048);
  std::vector<std::string> args{
      "audit", "--format", "prometheus", "-o", dir.File("missing/dir/partalign.prom"), image};
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 1) << test::Describe(args, r);
  EXPECT_NE(r.err.find("missing/dir/partalign.prom.tmp"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(RunPartalign({"audit", "--json", "--format", "prometheus", image}).exit_code, 1);
}

}  // namespace
}  // namespace partalign
