// SPDX-License-Identifier: GPL-3.0-or-later
// partalign bench end to end: image files (no root), loop devices with direct I/O, the write
// and rewrite guards, rewrites that leave every byte of an ext4 partition as it was, --compare,
// and the simulated SSD (a FUSE file attached as a loop device) with a known misalignment
// penalty.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/ssd_sim.h"
#include "support/temp_dir.h"
#include "support/tmux_session.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr unsigned long long kImageBytes = 64ull << 20;
// Short budgets keep the suite fast; the default run's 10 s is exercised by hand and by
// scripts/bench-vs-fio, not in CI.
const std::string kShortBudget = "1";

nlohmann::json RunJson(const std::vector<std::string>& args) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(args, r);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

void ExpectBenchDocument(const nlohmann::json& j, size_t cells) {
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_TRUE(j["cells"].is_array());
  ASSERT_EQ(j["cells"].size(), cells) << j.dump(1);
  for (const nlohmann::json& c : j["cells"]) {
    for (const char* key :
         {"pattern", "block_size", "offset_align", "queue_depth", "iops", "mib_per_s", "ci95_low",
          "ci95_high", "lat_p50_us", "lat_p99_us", "trials"}) {
      ASSERT_TRUE(c.contains(key)) << key << " in " << c.dump();
    }
    EXPECT_GT(c["iops"].get<double>(), 0) << c.dump();
    EXPECT_GE(c["trials"].get<int>(), 6);
    EXPECT_LE(c["ci95_low"].get<double>(), c["iops"].get<double>());
    EXPECT_GE(c["ci95_high"].get<double>(), c["iops"].get<double>());
    EXPECT_LE(c["lat_p50_us"].get<double>(), c["lat_p99_us"].get<double>());
  }
}

// Every test gets a scratch directory with a sparse 64 MiB image in it.
class BenchCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { test::CreateSparseFile(image, kImageBytes); }

  test::TempDir dir;
  const std::string image = dir.File("disk.img");
};

const nlohmann::json* Comparison(const nlohmann::json& j, uint64_t block, uint64_t align) {
  for (const nlohmann::json& c : j["alignment"]["comparisons"]) {
    if (c["block_size"] == block && c["offset_align"] == align) return &c;
  }
  return nullptr;
}

TEST_F(BenchCommandTest, ImageFileGridRunHasTheDocumentedJson) {
  nlohmann::json j = RunJson({"bench", "--json", "--budget", kShortBudget, image});
  ExpectBenchDocument(j, 66);
  EXPECT_EQ(j["target"]["kind"], "image file");
  EXPECT_EQ(j["settings"]["mode"], "grid");
  EXPECT_EQ(j["alignment"]["family_size"], 56);
  EXPECT_FALSE(j["summary"].get<std::string>().empty());
  // --json writes no report files unless asked.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(BenchCommandTest, HumanOutputPrintsTheGridIntervalsAndReportPaths) {
  const std::string reports = dir.File("reports");
  std::vector<std::string> args{"bench", "--budget", kShortBudget, "--report", reports, image};
  CommandResult r = RunPartalign(args);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(args, r);
  EXPECT_NE(r.out.find("PATTERN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("IOPS-95%CI"), std::string::npos);
  EXPECT_NE(r.out.find("VS-ALIGNED"), std::string::npos);
  EXPECT_NE(r.out.find("summary: misaligned random reads"), std::string::npos) << r.out;
  const std::string svg = reports + "/partalign-bench-disk.img.svg";
  const std::string html = reports + "/partalign-bench-disk.img.html";
  EXPECT_NE(r.out.find("heatmap: " + svg), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("report:  " + html), std::string::npos) << r.out;
  EXPECT_EQ(test::ReadFile(svg).rfind("<svg", 0), 0u);
  EXPECT_NE(test::ReadFile(html).find("<svg"), std::string::npos);
}

// Issue 40, item 5: what is measured and for how long, while it runs; and no files in the
// current directory unasked.
TEST_F(BenchCommandTest, SaysWhatItMeasuresAndWritesNoFilesUnasked) {
  CommandResult r = test::RunAdvice("partalign bench --budget 1 disk.img", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("partalign: measuring 'disk.img' (66 cells, reads) for about 1 s\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("summary: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("heatmap: "), std::string::npos) << r.out;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"disk.img"});
}

// On a terminal the line is redrawn after every round with what is left.
TEST_F(BenchCommandTest, OnATerminalTheLineSaysHowLongIsLeft) {
  test::TmuxSession t(fmt::format("cd '{}' && '{}' bench --budget 3 disk.img", dir.path(),
                                  PARTALIGN_BINARY),
                      120, 30);
  EXPECT_TRUE(t.WaitFor("partalign: measuring 'disk.img' (66 cells, reads): round ", 10))
      << t.Screen();
  EXPECT_TRUE(t.WaitFor(" s left", 10)) << t.Screen();
  EXPECT_EQ(t.WaitForExit(30), 0) << t.Screen();
  EXPECT_NE(t.Screen().find("summary: "), std::string::npos) << t.Screen();
}

TEST_F(BenchCommandTest, SingleWorkloadMode) {
  nlohmann::json j = RunJson({"bench", "--json", "--pattern", "seqread", "--block-size", "64K",
                              "--queue-depth", "4", "--duration", "0.3", image});
  ExpectBenchDocument(j, 1);
  const nlohmann::json& c = j["cells"][0];
  EXPECT_EQ(c["pattern"], "seqread");
  EXPECT_EQ(c["block_size"], 65536);
  EXPECT_EQ(c["offset_align"], 65536);
  EXPECT_EQ(c["queue_depth"], 4);
  EXPECT_EQ(j["settings"]["mode"], "single");
  EXPECT_TRUE(j["alignment"]["comparisons"].empty());
}

TEST_F(BenchCommandTest, GridOfTheUsersChoice) {
  nlohmann::json j = RunJson({"bench", "--json", "--budget", "0.5", "--block-sizes", "4K,8K",
                              "--offset-aligns", "512,4096,8K", image});
  ExpectBenchDocument(j, 2 * 3 + 2);
  // Each row is compared with its largest alignment, 8 KiB.
  ASSERT_EQ(j["alignment"]["comparisons"].size(), 4u);
  for (const nlohmann::json& c : j["alignment"]["comparisons"]) {
    EXPECT_EQ(c["reference_offset_align"], 8192);
  }
  CommandResult r = RunPartalign({"bench", "--block-sizes", "4K", "--pattern", "randread", image});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("do not mix"), std::string::npos) << r.err;
}

TEST_F(BenchCommandTest, CompareTwoRunsPrintsChangesAndASummary) {
  const std::string before = dir.File("before.json");
  const std::string after = dir.File("after.json");
  for (const std::string& out : {before, after}) {
    CommandResult r = RunPartalign({"bench", "--budget", kShortBudget, "--output", out, image});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // --output writes the JSON, and no pictures unasked.
    EXPECT_TRUE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out.substr(0, out.size() - 5) + ".svg"));
  }
  CommandResult r = RunPartalign({"bench", "--compare", before, after, "--no-report"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CHANGE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: "), std::string::npos) << r.out;
  // The title, the header, 66 rows, the two lines that say what CHANGE is, the summary.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 1 + 66 + 2 + 1) << r.out;
  EXPECT_NE(r.out.find("\nBEFORE, AFTER: median IOPS of each over its windows. CHANGE: "),
            std::string::npos)
      << r.out;

  nlohmann::json j = RunJson({"bench", "--compare", before, after, "--json"});
  EXPECT_EQ(j["family_size"], 66);
  ASSERT_EQ(j["cells"].size(), 66u);
  for (const nlohmann::json& c : j["cells"]) {
    EXPECT_TRUE(c["significant"].is_boolean());
    EXPECT_LE(c["change_low_pct"].get<double>(), c["change_pct"].get<double>());
    EXPECT_GE(c["change_high_pct"].get<double>(), c["change_pct"].get<double>());
  }
  EXPECT_TRUE(j["summary"].is_string());

  const std::string html_dir = dir.File("cmp");
  r = RunPartalign({"bench", "--compare", before, after, "--report", html_dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = test::ReadFile(html_dir + "/partalign-bench-compare.html");
  EXPECT_EQ(std::count(html.begin(), html.end(), '<') > 0, true);
  size_t svgs = 0;
  for (size_t p = html.find("<svg "); p != std::string::npos; p = html.find("<svg ", p + 1)) ++svgs;
  EXPECT_EQ(svgs, 3u);  // before and after side by side, and the change
}

TEST_F(BenchCommandTest, CompareRejectsWhatIsNotABenchDocument) {
  const std::string bad = dir.File("bad.json");
  std::ofstream(bad) << "{\"topology\": {}}";
  const std::string broken = dir.File("broken.json");
  std::ofstream(broken) << "{\"cells\": [";
  CommandResult r = RunPartalign({"bench", "--compare", bad, bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a partalign bench --json document"), std::string::npos) << r.err;
  r = RunPartalign({"bench", "--compare", broken, bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not valid JSON"), std::string::npos) << r.err;
  r = RunPartalign({"bench", "--compare", dir.File("missing.json"), bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("No such file"), std::string::npos) << r.err;
}

TEST_F(BenchCommandTest, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"bench"}, "TARGET is required"},
           {{"bench", "--pattern", "sideways", image}, "--pattern: 'sideways' is not one of"},
           {{"bench", "--pattern", "randwrite", image}, "add --write to allow it"},
           {{"bench", "--engine", "aio", image}, "--engine: 'aio'"},
           {{"bench", "--block-size", "1Q", image}, "--block-size: '1Q' is not a size"},
           {{"bench", "--block-size", "1000", image}, "needs multiples of its 512-byte sectors"},
           {{"bench", "--queue-depth", "129", image}, "--queue-depth"},
           {{"bench", image, "--compare", "a.json", "b.json"}, "--compare takes no TARGET"},
       }) {
    CommandResult r = RunPartalign(c.args);
    EXPECT_EQ(r.exit_code, 1) << test::Describe(c.args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << test::Describe(c.args, r);
  }
}

TEST_F(BenchCommandTest, WriteIsRefusedOnAFilesystemAndNothingIsWritten) {
  CommandResult mkfs = RunCommand({"mkfs.ext4", "-q", "-F", image});
  ASSERT_EQ(mkfs.exit_code, 0) << mkfs.err;
  const std::string before = test::ReadFile(image);
  for (const char* pattern : {"randwrite", "seqwrite"}) {
    std::vector<std::string> args{"bench",      "--write", "--pattern", pattern,
                                  "--duration", "0.2",     image};
    CommandResult r = RunPartalign(args);
    EXPECT_EQ(r.exit_code, 3) << test::Describe(args, r);
    EXPECT_NE(r.err.find("refusing to write to '" + image + "': it holds ext4 filesystem"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // The default run with --write is refused the same way.
  CommandResult r = RunPartalign({"bench", "--write", "--budget", "1", image});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(test::ReadFile(image) == before);
}

TEST_F(BenchCommandTest, WriteOnADiskImageGoesOnlyIntoUnallocatedSpace) {
  // A partition from 1 MiB to 11 MiB holding data; 13 MiB of free space after it.
  test::CreateSparseFile(image, 24ull << 20);
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image}, "label: gpt\n,10M\n").exit_code, 0);
  ASSERT_EQ(RunCommand({"dd", "if=/dev/urandom", "of=" + image, "bs=1M", "seek=1", "count=10",
                        "conv=notrunc", "status=none"})
                .exit_code,
            0);
  const std::string before = test::ReadFile(image);
  nlohmann::json j =
      RunJson({"bench", "--json", "--write", "--pattern", "randwrite", "--duration", "0.3", image});
  ExpectBenchDocument(j, 1);
  const uint64_t start = j["target"]["range_start_bytes"];
  const uint64_t bytes = j["target"]["range_bytes"];
  EXPECT_GE(start, 11u << 20);
  EXPECT_NE(j["notes"][0].get<std::string>().find("largest unallocated region"), std::string::npos);
  const std::string after = test::ReadFile(image);
  ASSERT_EQ(after.size(), before.size());
  EXPECT_TRUE(after.substr(0, start) == before.substr(0, start));  // table, partition intact
  EXPECT_TRUE(after.substr(start + bytes) == before.substr(start + bytes));  // backup GPT
  EXPECT_FALSE(after.substr(start, bytes) == before.substr(start, bytes));
  // A table that leaves no free space is refused.
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image}, "label: gpt\n,\n").exit_code, 0);
  CommandResult r = RunPartalign({"bench", "--write", "--pattern", "randwrite", image});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("gpt partition table"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no unallocated space"), std::string::npos) << r.err;
}

TEST_F(BenchCommandTest, WriteOnABlankImageWritesPseudoRandomData) {
  test::CreateSparseFile(image, 8ull << 20);
  nlohmann::json j = RunJson({"bench", "--json", "--write", "--pattern", "randwrite",
                              "--queue-depth", "8", "--duration", "0.3", image});
  ExpectBenchDocument(j, 1);
  EXPECT_EQ(j["cells"][0]["pattern"], "randwrite");
  const std::string data = test::ReadFile(image);
  EXPECT_NE(data, std::string(8ull << 20, '\0'));
}

// --- as root: loop devices with direct I/O, FUSE ----------------------------------------------

TEST_F(BenchCommandTest, LoopDeviceRunStaysWithinItsBudget) {
  PARTALIGN_REQUIRE_DEVICES();
  test::CreateSparseFile(image, 1ull << 30);
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  const double budget = 2;
  nlohmann::json j = RunJson({"bench", "--json", "--budget", "2", loop.path()});
  ExpectBenchDocument(j, 66);
  EXPECT_EQ(j["target"]["kind"], "disk");
  EXPECT_EQ(j["target"]["size_bytes"], 1ull << 30);
  EXPECT_EQ(j["settings"]["engine"], "io_uring");
  // The runner stops between rounds when the next would overrun; the margin covers start-up.
  EXPECT_LE(j["elapsed_seconds"].get<double>(), budget * 1.1 + 0.3);
}

TEST_F(BenchCommandTest, PsyncEngineOnALoopDevice) {
  PARTALIGN_REQUIRE_DEVICES();
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  nlohmann::json j = RunJson({"bench", "--json", "--engine", "psync", "--queue-depth", "4",
                              "--duration", "0.3", loop.path()});
  ExpectBenchDocument(j, 1);
  EXPECT_EQ(j["settings"]["engine"], "psync");
}

TEST_F(BenchCommandTest, FourKSectorLoopDeviceSkipsSubSectorCells) {
  PARTALIGN_REQUIRE_DEVICES();
  test::LoopDevice loop(image, 4096, /*direct_io=*/true);
  std::vector<std::string> args{"bench", "--json", "--budget", "1", loop.path()};
  CommandResult r = RunPartalign(args);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(args, r);
  nlohmann::json j = nlohmann::json::parse(r.out);
  ExpectBenchDocument(j, 3);
  EXPECT_NE(r.err.find("63 cells skipped: O_DIRECT on 4096-byte sectors"), std::string::npos)
      << r.err;
}

TEST_F(BenchCommandTest, WriteOnADiskGoesOnlyIntoUnallocatedSpace) {
  PARTALIGN_REQUIRE_DEVICES();
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image}, "label: dos\n,10M\n").exit_code, 0);
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", loop.PartitionPath(1)}).exit_code, 0);
  const std::string before = test::ReadFile(image);
  nlohmann::json j = RunJson({"bench", "--json", "--write", "--pattern", "seqwrite", "--block-size",
                              "64K", "--duration", "0.3", loop.path()});
  ExpectBenchDocument(j, 1);
  const uint64_t start = j["target"]["range_start_bytes"];
  EXPECT_EQ(start, (2048u + 20480u) * 512);
  const std::string after = test::ReadFile(image);
  EXPECT_TRUE(after.substr(0, start) == before.substr(0, start));  // MBR, filesystem intact
  EXPECT_FALSE(after.substr(start, 64 << 10) == before.substr(start, 64 << 10));
  // The partition itself holds a filesystem: refused.
  CommandResult r =
      RunPartalign({"bench", "--write", "--pattern", "randwrite", loop.PartitionPath(1)});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ext4 filesystem"), std::string::npos) << r.err;
}

// sha256 of everything `path` holds (sha256sum as the oracle).
std::string Digest(const std::string& path) {
  CommandResult r = RunCommand({"sha256sum", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out.substr(0, r.out.find(' '));
}

// --rewrite on a disk with an ext4 partition full of files, then on the partition itself:
// every byte of the target is what it was (and e2fsck finds the filesystem clean); while the
// partition is mounted, both are refused.
TEST_F(BenchCommandTest, RewriteLeavesEveryByteOfAnExt4PartitionWithFiles) {
  PARTALIGN_REQUIRE_DEVICES();
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image}, "label: dos\n2048,40960,L\n").exit_code, 0);
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
  const std::string part = loop.PartitionPath(1);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", part}).exit_code, 0);
  const std::string mnt = dir.File("mnt");
  std::filesystem::create_directories(mnt);
  ASSERT_EQ(RunCommand({"mount", part, mnt}).exit_code, 0);
  {
    struct Unmount {
      std::string path;
      ~Unmount() { RunCommand({"umount", path}); }
    } unmount{mnt};
    for (int i = 0; i < 12; ++i) {
      ASSERT_EQ(RunCommand({"dd", "if=/dev/urandom", "of=" + mnt + "/file" + std::to_string(i),
                            "bs=64K", "count=" + std::to_string(1 + 3 * i), "status=none"})
                    .exit_code,
                0);
    }
    // Mounted: refused, with what uses it, for the disk and for the partition.
    for (const std::string& target : {loop.path(), part}) {
      CommandResult r = RunPartalign({"bench", "--rewrite", "--budget", "0.5", target});
      EXPECT_EQ(r.exit_code, 3) << r.err;
      EXPECT_NE(r.err.find("refusing to rewrite '" + target + "' while it is in use: "),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("is mounted on '" + mnt + "'"), std::string::npos) << r.err;
    }
  }
  for (const std::string& target : {loop.path(), part}) {
    SCOPED_TRACE(target);
    const std::string disk_before = Digest(loop.path());
    const std::string before = Digest(target);
    nlohmann::json j = RunJson({"bench", "--json", "--rewrite", "--budget", "2", target});
    ExpectBenchDocument(j, 66);
    for (const nlohmann::json& c : j["cells"]) {
      const std::string pattern = c["pattern"];
      EXPECT_TRUE(pattern == "randrewrite" || pattern == "seqrewrite") << pattern;
      EXPECT_GT(c["io_count"].get<uint64_t>(), 0u);
    }
    EXPECT_NE(j["summary"].get<std::string>().find("misaligned random rewrites"), std::string::npos)
        << j["summary"];
    EXPECT_EQ(Digest(target), before);
    EXPECT_EQ(Digest(loop.path()), disk_before);
    CommandResult fsck = RunCommand({"e2fsck", "-fn", part});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  }
  // The single-workload rewrites, deep queues with 512-byte offsets that overlap in flight.
  const std::string before = Digest(loop.path());
  nlohmann::json j =
      RunJson({"bench", "--json", "--rewrite", "--pattern", "randrewrite", "--block-size", "64K",
               "--offset-align", "512", "--queue-depth", "32", "--duration", "0.5", loop.path()});
  ExpectBenchDocument(j, 1);
  EXPECT_EQ(Digest(loop.path()), before);
}

TEST_F(BenchCommandTest, RewriteUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"bench", "--pattern", "randrewrite", image}, "add --rewrite to allow it"},
           {{"bench", "--write", "--rewrite", image}, "--write and --rewrite do not mix"},
           {{"bench", "--rewrite", "--pattern", "randwrite", image}, "add --write to allow it"},
       }) {
    CommandResult r = RunPartalign(c.args);
    EXPECT_EQ(r.exit_code, 1) << test::Describe(c.args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << test::Describe(c.args, r);
  }
}

TEST_F(BenchCommandTest, RewriteOfALockedImageIsRefused) {
  // An image attached to a loop device is in use.
  test::CreateSparseFile(image, 8ull << 20);
  if (::geteuid() == 0) {
    test::LoopDevice loop(image, 512);
    CommandResult r = RunPartalign({"bench", "--rewrite", "--budget", "0.5", image});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("is attached to loop device '" + loop.path() + "'"), std::string::npos)
        << r.err;
  }
  // flock held by another program (sfdisk --lock): refused, one line.
  CommandResult r = RunCommand({"flock", "--exclusive", "--nonblock", image, PARTALIGN_BINARY,
                                "bench", "--rewrite", "--budget", "0.5", image});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("is locked by another program"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// --- the simulated SSD ------------------------------------------------------------------------

constexpr unsigned long long kSimBytes = 256ull << 20;

TEST_F(BenchCommandTest, SimulatedSsdPenaltyIsDetectedWhereReadsCrossAPage) {
  PARTALIGN_REQUIRE_DEVICES();
  // Reads only, 100 us a page: a 4 KiB read across a page boundary reads two pages of one die.
  test::SsdSim sim(dir.File("sim"), {.size_bytes = kSimBytes, .read_us = 100, .program_us = 0});
  test::LoopDevice loop(sim.image(), 512, /*direct_io=*/true);
  ASSERT_EQ(test::ReadFile("/sys/block/" + loop.name() + "/loop/dio"), "1\n")
      << "the loop device does not pass direct I/O to the simulator";
  // A focused grid: 3 block sizes x 3 alignments (+ sequential and QD32) gets many windows
  // per cell in a short budget, which a busy CI machine needs.
  nlohmann::json j = RunJson({"bench", "--json", "--budget", "3", "--block-sizes", "512,2048,4096",
                              "--offset-aligns", "512,2048,4096", loop.path()});
  ExpectBenchDocument(j, 3 * 3 + 2);
  EXPECT_GE(j["cells"][0]["trials"].get<int>(), 16);
  EXPECT_GT(sim.Stat("reads"), 0u);
  // 4 KiB reads at 512-byte offsets: 7 of 8 read two pages.
  const nlohmann::json* crossing = Comparison(j, 4096, 512);
  ASSERT_NE(crossing, nullptr);
  EXPECT_TRUE((*crossing)["significant"].get<bool>()) << crossing->dump();
  EXPECT_TRUE((*crossing)["paired"].get<bool>()) << crossing->dump();
  EXPECT_LT((*crossing)["change_pct"].get<double>(), -20) << crossing->dump();
  // 512-byte reads at 512-byte offsets and 2 KiB reads at 2 KiB offsets never cross a page:
  // no page penalty (one extra page read would be +100%; 15% leaves room for a loaded machine).
  // Whether a difference of a few tenths
  // of a percent from the host below is significant is not the question here (a run once
  // found 512-byte reads 0.5% faster, 0.1..1.8%, significant), nor how wide the interval is
  // on a loaded machine.
  for (auto [block, align] : {std::pair{512, 512}, std::pair{2048, 2048}}) {
    const nlohmann::json* never = Comparison(j, block, align);
    ASSERT_NE(never, nullptr);
    EXPECT_LT(std::abs((*never)["change_pct"].get<double>()), 15) << never->dump();
  }
  EXPECT_NE(j["summary"].get<std::string>().find("significantly slower"), std::string::npos)
      << j["summary"];
}

TEST_F(BenchCommandTest, SimulatedSsdRewritesAreSlowerWhenMisalignedAndChangeNothing) {
  PARTALIGN_REQUIRE_DEVICES();
  // The default flash (25 us read, 200 us program): a misaligned 4 KiB rewrite reads two pages
  // and read-modify-writes two, against one read and one program.
  test::SsdSim sim(dir.File("sim"), {.size_bytes = 64ull << 20});
  test::LoopDevice loop(sim.image(), 512, /*direct_io=*/true);
  ASSERT_EQ(RunCommand({"dd", "if=/dev/urandom", "of=" + loop.path(), "bs=1M", "count=64",
                        "oflag=direct", "status=none"})
                .exit_code,
            0);
  const std::string before = Digest(loop.path());
  nlohmann::json j = RunJson({"bench", "--json", "--rewrite", "--budget", "3", "--block-sizes",
                              "4K", "--offset-aligns", "512,4K", loop.path()});
  const nlohmann::json* misaligned = Comparison(j, 4096, 512);
  ASSERT_NE(misaligned, nullptr);
  EXPECT_TRUE((*misaligned)["significant"].get<bool>()) << misaligned->dump();
  EXPECT_LT((*misaligned)["change_pct"].get<double>(), -30) << misaligned->dump();
  EXPECT_GT(sim.Stat("partial_pages"), 0u);
  EXPECT_EQ(Digest(loop.path()), before);
}

TEST_F(BenchCommandTest, UniformSimulatedSsdShowsNoSignificantDifference) {
  PARTALIGN_REQUIRE_DEVICES();
  test::SsdSim sim(dir.File("sim"), {.size_bytes = kSimBytes, .read_us = 0, .program_us = 0});
  test::LoopDevice loop(sim.image(), 512, /*direct_io=*/true);
  // The comparisons hold a family-wise error rate of 5%: a correct tool reports a false
  // difference in 1 run of 20 by design. Two runs with different seeds must not both do so
  // (a correct tool fails this test in fewer than 1 of 400 runs).
  std::string failures;
  for (const char* seed : {"1", "2"}) {
    nlohmann::json j = RunJson({"bench", "--json", "--budget", "3", "--seed", seed, loop.path()});
    ExpectBenchDocument(j, 66);
    std::string significant;
    for (const nlohmann::json& c : j["alignment"]["comparisons"]) {
      if (c["significant"].get<bool>()) significant += c.dump() + "\n";
    }
    if (significant.empty()) return;
    failures += "seed " + std::string(seed) + ":\n" + significant;
  }
  ADD_FAILURE() << "both runs report differences on a uniform target:\n" << failures;
}

}  // namespace
}  // namespace partalign
