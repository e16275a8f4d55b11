// SPDX-License-Identifier: GPL-3.0-or-later
// partalign probe end to end: image files (no root), loop devices against lsblk (root), and
// every error case exits non-zero with a one-line message and writes nothing.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/advice.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr unsigned long long kImageBytes = 64ull << 20;

nlohmann::json ProbeJson(const std::vector<std::string>& args) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(args, r);
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(ProbeCommandTest, ImageFileHasNoKernelTopology) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  nlohmann::json j = ProbeJson({"probe", "--json", image});
  ASSERT_FALSE(j.is_discarded());
  const nlohmann::json& t = j["topology"];
  EXPECT_EQ(t["logical_sector_size"], 512);
  EXPECT_EQ(t["physical_sector_size"], 512);
  EXPECT_EQ(t["optimal_io_size"], 0);
  EXPECT_EQ(t["size_bytes"], kImageBytes);
  EXPECT_EQ(t["transport"], "file");
  EXPECT_EQ(t["source"], "default");
  EXPECT_EQ(t["table_type"], "none");
  EXPECT_TRUE(t["warnings"].empty());
}

TEST(ProbeCommandTest, SectorSizeOptionSetsTheImageLogicalSize) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  nlohmann::json j = ProbeJson({"probe", "--json", "--sector-size", "4096", image});
  EXPECT_EQ(j["topology"]["logical_sector_size"], 4096);
  EXPECT_EQ(j["topology"]["physical_sector_size"], 4096);
  EXPECT_EQ(j["topology"]["size_sectors"], kImageBytes / 4096);
}

TEST(ProbeCommandTest, JMicronProfileShowsTheBridgeWarning) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  CommandResult r = RunPartalign({"probe", "--assume", "usb-jmicron-0xffff", image});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("33553920"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: optimal I/O size 33553920 (0xFFFF x 512)"), std::string::npos)
      << r.out;
  nlohmann::json j = ProbeJson({"probe", "--json", "--assume", "usb-jmicron-0xffff", image});
  EXPECT_EQ(j["topology"]["optimal_io_size"], 33553920);
  EXPECT_EQ(j["topology"]["source"], "assumed");
  EXPECT_EQ(j["topology"]["warning_codes"][0], "opt-io-bridge-0xffff");
}

TEST(ProbeCommandTest, GptTableIsRecognisedWithItsSectorSize) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  CommandResult s = RunCommand({"sfdisk", "--quiet", image}, "label: gpt\n,10M\n");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  nlohmann::json j = ProbeJson({"probe", "--json", image});
  EXPECT_EQ(j["topology"]["table_type"], "gpt");
  EXPECT_EQ(j["topology"]["table_sector_size"], 512);
}

TEST(ProbeCommandTest, GptWrittenFor4kSectorsIsFlaggedWhenReadAt512) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  // parted treats an image file as having $PARTED_SECTOR_SIZE-byte sectors, like the bridge.
  CommandResult s =
      RunCommand({"parted", "-s", image, "mklabel", "gpt", "mkpart", "p", "1MiB", "10MiB"}, "",
                 {{"PARTED_SECTOR_SIZE", "4096"}});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  nlohmann::json j = ProbeJson({"probe", "--json", image});
  EXPECT_EQ(j["topology"]["table_type"], "gpt");
  EXPECT_EQ(j["topology"]["table_sector_size"], 4096);
  bool flagged = false;
  for (const auto& code : j["topology"]["warning_codes"]) {
    flagged |= code == "table-sector-size-mismatch";
  }
  EXPECT_TRUE(flagged) << j.dump(2);
  // Read as the bridge presented it, the same table is consistent.
  j = ProbeJson({"probe", "--json", "--sector-size", "4096", image});
  EXPECT_EQ(j["topology"]["table_sector_size"], 4096);
  EXPECT_TRUE(j["topology"]["warnings"].empty()) << j.dump(2);
}

TEST(ProbeCommandTest, ListProfilesPrintsTheProfileTable) {
  CommandResult r = RunPartalign({"probe", "--list-profiles"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* name :
       {"sata-512e", "4kn", "usb-jmicron-0xffff", "usb-4k-bridge", "raid5-3x64k", "xp-jumper"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
}

// Each error: exit 1, one line on stderr naming the problem, nothing on stdout.
void ExpectOneLineError(const std::vector<std::string>& args, const std::string& message_part) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 1) << test::Describe(args, r);
  EXPECT_TRUE(r.out.empty()) << test::Describe(args, r);
  EXPECT_EQ(r.err.rfind("partalign: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(message_part), std::string::npos) << test::Describe(args, r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(ProbeCommandTest, MissingPathIsAnError) {
  ExpectOneLineError({"probe", "/nonexistent/disk.img"},
                     "cannot open '/nonexistent/disk.img': No such file or directory");
}

TEST(ProbeCommandTest, DirectoryIsAnError) {
  test::TempDir dir;
  ExpectOneLineError({"probe", dir.path()}, "'" + dir.path() + "' is a directory");
}

TEST(ProbeCommandTest, CharacterDeviceIsAnError) {
  ExpectOneLineError({"probe", "/dev/null"}, "'/dev/null' is not a block device or image file");
}

TEST(ProbeCommandTest, EmptyImageIsAnError) {
  test::TempDir dir;
  const std::string image = dir.File("empty.img");
  test::CreateSparseFile(image, 0);
  ExpectOneLineError({"probe", image}, "is empty");
}

TEST(ProbeCommandTest, UnparsableAssumeIsAnErrorAndTheImageIsUntouched) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 1 << 20);
  struct stat before {};
  ASSERT_EQ(::stat(image.c_str(), &before), 0);
  ExpectOneLineError({"probe", "--assume", "log=4097", image}, "--assume: invalid topology spec");
  ExpectOneLineError({"probe", "--assume", "bogus-profile", image}, "unknown profile");
  ExpectOneLineError({"probe", "--sector-size", "1000", image}, "--sector-size");
  struct stat after {};
  ASSERT_EQ(::stat(image.c_str(), &after), 0);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(test::ReadFile(image), std::string(1 << 20, '\0'));
}

TEST(ProbeCommandTest, UsageErrorsPointAtHelp) {
  CommandResult r = RunPartalign({"probe", "--no-such-option", "x"});
  EXPECT_EQ(r.exit_code, 1);
  // The help of the command the option was given to (src/cli/suggest/unknown_names.h).
  EXPECT_NE(r.err.find("Try 'partalign probe --help' for more information."), std::string::npos)
      << r.err;
  // The advice, as printed: probe's help lists its options.
  test::TempDir dir;
  CommandResult help =
      test::RunAdvice(test::AdviceIn(r.err, "Try '(partalign probe --help)'"), dir.path());
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* option : {"--sector-size", "--assume", "--json"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
  }
}

TEST(ProbeCommandTest, DeviceThatCannotBeOpenedIsAnError) {
  PARTALIGN_REQUIRE_DEVICES();
  // A block device node for a driver that does not exist (major 240 is reserved for local
  // use): stat succeeds, open fails with ENXIO.
  test::TempDir dir;
  const std::string node = dir.File("nodev");
  ASSERT_EQ(::mknod(node.c_str(), S_IFBLK | 0600, makedev(240, 77)), 0);
  ExpectOneLineError({"probe", node}, "cannot open '" + node + "': No such device");
}

// probe --json on a loop device equals lsblk -b -t -J for the same device.
void ExpectProbeMatchesLsblk(unsigned sector_size) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  test::LoopDevice loop(image, sector_size);
  nlohmann::json j = ProbeJson({"probe", "--json", loop.path()});
  ASSERT_FALSE(j.is_discarded());
  const nlohmann::json& t = j["topology"];

  std::vector<std::string> lsblk{
      "lsblk",    "-b", "-t",
      "-J",       "-o", "NAME,ALIGNMENT,MIN-IO,OPT-IO,PHY-SEC,LOG-SEC,ROTA,SIZE,DISC-GRAN",
      loop.path()};
  CommandResult r = RunCommand(lsblk);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(lsblk, r);
  nlohmann::json l = nlohmann::json::parse(r.out)["blockdevices"][0];
  auto num = [&](const char* key) {
    const nlohmann::json& v = l[key];
    return v.is_string() ? std::stoull(v.get<std::string>()) : v.get<unsigned long long>();
  };
  EXPECT_EQ(t["logical_sector_size"], num("log-sec"));
  EXPECT_EQ(t["logical_sector_size"], sector_size);
  EXPECT_EQ(t["physical_sector_size"], num("phy-sec"));
  EXPECT_EQ(t["minimum_io_size"], num("min-io"));
  EXPECT_EQ(t["optimal_io_size"], num("opt-io"));
  EXPECT_EQ(t["alignment_offset"], num("alignment"));
  EXPECT_EQ(t["size_bytes"], num("size"));
  EXPECT_EQ(t["discard_granularity"], num("disc-gran"));
  EXPECT_EQ(t["rotational"], l["rota"].get<bool>());
  EXPECT_EQ(t["transport"], "loop");
  EXPECT_EQ(t["source"], "kernel");
  EXPECT_EQ(t["kernel_name"], loop.name());
  EXPECT_EQ(t["backing_file"], image);
}

TEST(ProbeCommandTest, LoopDeviceWith512ByteSectorsMatchesLsblk) {
  PARTALIGN_REQUIRE_DEVICES();
  ExpectProbeMatchesLsblk(512);
}

TEST(ProbeCommandTest, LoopDeviceWith4096ByteSectorsMatchesLsblk) {
  PARTALIGN_REQUIRE_DEVICES();
  ExpectProbeMatchesLsblk(4096);
}

TEST(ProbeCommandTest, AssumeOverridesALoopDeviceTopology) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  test::LoopDevice loop(image, 512);
  nlohmann::json j = ProbeJson({"probe", "--json", "--assume", "xp-jumper", loop.path()});
  EXPECT_EQ(j["topology"]["alignment_offset"], 3584);
  EXPECT_EQ(j["topology"]["source"], "assumed");
  EXPECT_EQ(j["topology"]["transport"], "loop");
}

}  // namespace
}  // namespace partalign
