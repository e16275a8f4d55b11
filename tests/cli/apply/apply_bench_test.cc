// SPDX-License-Identifier: GPL-3.0-or-later
// apply --bench: which partitions are measured (BenchedPlaces), and end to end on an image file
// and on a loop device held by apply (O_EXCL + flock) that each changed partition is measured
// at its old place and at its new one, with its own origin and the same cells and seed, reads
// and rewrites that change no byte, and that the comparison printed is the paired one the JSON
// reports give.
#include "cli/apply/apply_bench.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "io/table/fdisk_table.h"
#include "partalign/bench/bench_random.h"
#include "partalign/table/plan_check.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/plan_maker.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunPartalign;

PlanAction Action(uint32_t partition, ActionKind kind, uint64_t old_start, uint64_t old_end,
                  uint64_t new_start, uint64_t new_end) {
  return {partition, old_start, old_end, new_start, new_end, kind, 0, ""};
}

TEST(BenchedPlacesTest, OnlyPartitionsWhosePlaceChangesInBytes) {
  Plan plan;
  plan.actions = {
      Action(1, ActionKind::kNone, 2048, 4095, 2048, 4095),
      Action(2, ActionKind::kMoveData, 4097, 8191, 6144, 10238),
      Action(3, ActionKind::kTableOnly, 20000, 29999, 20480, 29999),
      Action(4, ActionKind::kTableOnly, 30720, 40000, 30720, 40959),  // only the end moves
      Action(5, ActionKind::kImpossible, 50001, 60000, 50001, 60000),
      Action(6, ActionKind::kTableOnly, 61440, 70000, 61440, 70000),  // says table-only, same place
  };
  for (uint64_t ss : {512u, 4096u}) {
    std::vector<BenchedPlace> places = BenchedPlaces(plan, ss);
    std::vector<BenchedPlace> expected = {
        {2, 4097 * ss, 4095 * ss, 6144 * ss, 4095 * ss},
        {3, 20000 * ss, 10000 * ss, 20480 * ss, 9520 * ss},
        {4, 30720 * ss, 9281 * ss, 30720 * ss, 10240 * ss},
    };
    EXPECT_EQ(places, expected) << "sector size " << ss;
  }
  // Both runs read the shorter extent, from each place's own start.
  EXPECT_EQ(BenchWindowBytes({3, 0, 10000, 512, 9520}), 9520u);
  EXPECT_EQ(BenchWindowBytes({4, 0, 9281, 0, 10240}), 9281u);
}

TEST(BenchedPlacesTest, ExtendedPartitionIsAContainerNotBenchmarked) {
  Plan plan;
  plan.label = LabelType::kDos;
  plan.actions = {
      Action(1, ActionKind::kTableOnly, 63, 20062, 2048, 20062),
      Action(2, ActionKind::kTableOnly, 30000, 129999, 30720, 129999),
      Action(5, ActionKind::kTableOnly, 32000, 41999, 32768, 41999),
  };
  PartitionTable table;
  table.label = LabelType::kDos;
  table.sector_size = 512;
  Partition one, extended, logical;
  one.number = 1;
  extended.number = 2;
  extended.kind = PartitionKind::kExtended;
  logical.number = 5;
  logical.kind = PartitionKind::kLogical;
  table.partitions = {one, extended, logical};
  std::vector<uint32_t> numbers;
  for (const BenchedPlace& p : BenchedPlaces(plan, 512, &table)) numbers.push_back(p.partition);
  EXPECT_EQ(numbers, (std::vector<uint32_t>{1, 5}));
  EXPECT_EQ(BenchedPlaces(plan, 512).size(), 3u);  // without the table nothing says which
}

TEST(ApplyBenchCellsTest, AlignedReadsAndRewrites) {
  std::vector<BenchCell> cells = ApplyBenchCells();
  ASSERT_EQ(cells.size(), 5u);
  int rewrites = 0;
  for (const BenchCell& c : cells) {
    EXPECT_FALSE(IsWrite(c.pattern)) << Describe(c);  // never new data
    rewrites += IsRewrite(c.pattern);
    EXPECT_EQ(c.offset_align, c.block_size) << Describe(c);
    EXPECT_EQ(c.block_size % 4096, 0u) << Describe(c);  // whole sectors of any logical size
  }
  // Random 4 KiB rewrites at QD1 and QD32.
  EXPECT_EQ(rewrites, 2);
  EXPECT_NE(std::find(cells.begin(), cells.end(),
                      BenchCell{IoPattern::kRandRewrite, 4096, 4096, 32, false}),
            cells.end());
}

// The partitions of the end-to-end tests start off the 1 MiB grain. The first MiB of each is
// written zeros, the rest pseudo-random bytes: every block the benchmark reads exists, none is
// a sparse hole. The plan gives their contents up (as plan --discard does), so that it only
// edits the table.
constexpr uint64_t kDiskBytes = 96ull << 20;
const char* const kScript =
    "label: gpt\n"
    "first-lba: 34\n"
    "start=63, size=40000, name=\"one\"\n"
    "start=65535, size=100000, name=\"two\"\n";
constexpr std::pair<uint64_t, uint64_t> kExtents[] = {{63, 40000}, {65535, 100000}};
constexpr uint64_t kZeroHead = 1ull << 20;

// Fills the partitions of `path` (an image or a block device) as above.
void FillPartitions(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  Xoshiro256 random(7);
  for (auto [start, size] : kExtents) {
    std::vector<uint64_t> words((size * 512 - kZeroHead) / 8);
    for (uint64_t& w : words) w = random.Next();
    std::string zeros(kZeroHead, '\0');
    ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(start * 512)),
              static_cast<ssize_t>(zeros.size()));
    const size_t bytes = words.size() * 8;
    ASSERT_EQ(::pwrite(fd, words.data(), bytes, static_cast<off_t>(start * 512 + kZeroHead)),
              static_cast<ssize_t>(bytes));
  }
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

// The bytes of every partition's old extent: reads and rewrites leave them as they are.
std::string PartitionBytes(const std::string& image) {
  std::string all = test::ReadFile(image);
  std::string parts;
  for (auto [start, size] : kExtents) parts += all.substr(start * 512, size * 512);
  return parts;
}

nlohmann::json ReadJson(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(test::ReadFile(path), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path;
  return j;
}

// A row of the comparison table as printed: BEFORE, AFTER (FormatIops), CHANGE with its
// interval (FormatChange), SIGNIFICANT.
struct PrintedRow {
  double before = 0, after = 0, change = 0, low = 0, high = 0;
  bool significant = false;
};

double ParseIops(const std::string& text) {
  const double scale = text.back() == 'M' ? 1e6 : text.back() == 'k' ? 1e3 : 1;
  return std::stod(text) * scale;
}

// The row of `cell` in the first table after `title` in `out`.
std::optional<PrintedRow> FindRow(const std::string& out, const std::string& title,
                                  const BenchCell& cell) {
  const size_t at = out.find(title);
  if (at == std::string::npos) return std::nullopt;
  static const std::regex kRow(
      R"(^(\S+) +(\d+) +(\d+) +(\d+) +(\S+) +(\S+) +([-+][\d.]+)% \(([-+][\d.]+)\.\.([-+][\d.]+)%\)( \*)? +(yes|no|no, too noisy) *$)");
  std::istringstream lines(out.substr(at));
  std::string line;
  std::getline(lines, line);  // the title itself
  while (std::getline(lines, line) && line.rfind("summary:", 0) != 0) {
    std::smatch m;
    if (!std::regex_match(line, m, kRow)) continue;
    if (m.str(1) != ToString(cell.pattern) || std::stoull(m[2]) != cell.block_size ||
        std::stoull(m[3]) != cell.offset_align || std::stoul(m[4]) != cell.queue_depth) {
      continue;
    }
    return PrintedRow{ParseIops(m[5]),       ParseIops(m[6]),       std::stod(m[7]) / 100,
                      std::stod(m[8]) / 100, std::stod(m[9]) / 100, m[11] == "yes"};
  }
  return std::nullopt;
}

// The printed row shows `c` (computed from the JSON reports, whose trial IOPS are rounded to
// 0.01): IOPS to their three printed digits, percentages to their printed 0.1 plus what the
// 0.01 rounding of a trial's IOPS moves a ratio (1 + change) of: 0.05% of it for trials of 10
// IOPS or more. On a loaded machine the slowest trials, which make the interval's ends, are that
// slow and the ratios large (+19000%), so the printed digit alone is not enough.
void ExpectPrinted(const PrintedRow& row, const CellComparison& c) {
  EXPECT_NEAR(row.before, c.reference_iops, 0.006 * c.reference_iops + 0.5);
  EXPECT_NEAR(row.after, c.subject_iops, 0.006 * c.subject_iops + 0.5);
  auto tolerance = [](double change) { return 0.0006 + 0.0005 * (1 + std::abs(change)); };
  EXPECT_NEAR(row.change, c.change.change, tolerance(c.change.change));
  EXPECT_NEAR(row.low, c.change.low, tolerance(c.change.low));
  EXPECT_NEAR(row.high, c.change.high, tolerance(c.change.high));
  if (std::abs(c.change.low) > 0.001 && std::abs(c.change.high) > 0.001) {
    EXPECT_EQ(row.significant, c.change.significant);
  }
}

// The partitioned image of the end-to-end tests, in `dir` (partitions not filled yet).
std::string MakeImage(const test::TempDir& dir) {
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kDiskBytes);
  test::SfdiskImage(image, kScript, 512);
  return image;
}

// Runs apply --bench with `plan` on `disk` (the image or device the plan names) and checks
// the output and the reports of every partition whose place changes.
void ApplyWithBenchAndCheck(const std::string& disk, const Plan& plan, const test::TempDir& dir) {
  const std::string plan_file = dir.File("plan.json");
  test::WritePlanFile(plan_file, plan);
  const std::vector<BenchedPlace> places = BenchedPlaces(plan, 512);
  ASSERT_EQ(places.size(), 2u) << "the plan should move both partitions";
  const std::string reports = dir.File("reports");
  std::vector<std::string> args = {"apply",       "--yes",          "--backup-dir",
                                   dir.File("b"), "--bench",        "--bench-seconds",
                                   "1",           "--bench-report", reports};
  // What the plan gives up, given up again (a plan file's word is not consent).
  for (uint32_t n : PlanDiscards(plan)) args.insert(args.end(), {"--discard", std::to_string(n)});
  args.push_back(plan_file);
  CommandResult r = RunPartalign(args);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(args, r);
  // The table was written as planned (apply did its job around the benchmark).
  Result<TableRead> table = ReadPartitionTable(disk, {.probe_contents = false});
  ASSERT_TRUE(table) << table.error().message;
  // Before runs print before the write, comparisons after the verification.
  const size_t wrote = r.out.find("Wrote ");
  ASSERT_NE(wrote, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("Benchmark before the change"), wrote) << r.out;
  EXPECT_GT(r.out.find("Benchmark after the change"), r.out.find("Verified:")) << r.out;

  const std::string name = std::filesystem::path(disk).filename().string();
  for (const BenchedPlace& place : places) {
    SCOPED_TRACE("partition " + std::to_string(place.partition));
    const Partition* now = table->table.Find(place.partition);
    ASSERT_NE(now, nullptr);
    EXPECT_EQ(now->start_sector * 512, place.new_start_bytes);
    const std::string stem =
        fmt::format("{}/partalign-bench-{}-p{}", reports, name, place.partition);
    nlohmann::json before = ReadJson(stem + "-before.json");
    nlohmann::json old_place = ReadJson(stem + "-old.json");
    nlohmann::json new_place = ReadJson(stem + "-new.json");
    EXPECT_TRUE(std::filesystem::exists(stem + "-compare.html"));
    nlohmann::json compare = ReadJson(stem + "-compare.json");
    ASSERT_TRUE(before.contains("target") && old_place.contains("target") &&
                new_place.contains("target"));
    // Each run measures its own place of the partition, no byte outside it, with offsets
    // aligned from the partition's start. The old and new places are measured after the change
    // in one run, each cell in the same windows at both places.
    for (const auto& [doc, start, bytes] :
         {std::tuple{&before, place.old_start_bytes, place.old_bytes},
          std::tuple{&old_place, place.old_start_bytes, place.old_bytes},
          std::tuple{&new_place, place.new_start_bytes, place.new_bytes}}) {
      const nlohmann::json& t = (*doc)["target"];
      EXPECT_EQ(t["range_start_bytes"].get<uint64_t>(), start) << t;
      EXPECT_EQ(t["offset_origin_bytes"].get<uint64_t>(), start) << t;
      EXPECT_EQ(t["range_bytes"].get<uint64_t>(), BenchWindowBytes(place)) << t;
      EXPECT_LE(t["range_bytes"].get<uint64_t>(), bytes) << t;
      EXPECT_EQ((*doc)["settings"]["seed"], 1);
      ASSERT_EQ((*doc)["cells"].size(), ApplyBenchCells().size()) << doc->dump(1);
      for (size_t i = 0; i < ApplyBenchCells().size(); ++i) {
        const BenchCell cell = ApplyBenchCells()[i];
        const nlohmann::json& c = (*doc)["cells"][i];
        EXPECT_EQ(c["pattern"], std::string(ToString(cell.pattern))) << c;
        EXPECT_EQ(c["block_size"].get<uint64_t>(), cell.block_size) << c;
        EXPECT_EQ(c["offset_align"].get<uint64_t>(), cell.offset_align) << c;
        EXPECT_EQ(c["queue_depth"].get<uint32_t>(), cell.queue_depth) << c;
        EXPECT_GT(c["io_count"].get<uint64_t>(), 0u) << c;
        EXPECT_GE(c["trials"].get<int>(), static_cast<int>(kMinRounds)) << c;
      }
    }
    // Old and new cells were measured in the same windows: the same group, the same trials.
    for (size_t i = 0; i < ApplyBenchCells().size(); ++i) {
      EXPECT_EQ(old_place["cells"][i]["group"], new_place["cells"][i]["group"]);
      EXPECT_EQ(old_place["cells"][i]["trials"], new_place["cells"][i]["trials"]);
    }
    // The comparison printed is the paired one the two reports give, cell for cell.
    Result<BenchReport> b = ParseBenchJson(old_place, "old");
    Result<BenchReport> a = ParseBenchJson(new_place, "new");
    ASSERT_TRUE(b && a);
    // Simultaneous over every cell of every benchmarked partition.
    Result<BenchComparison> cmp = CompareReports(
        *b, *a, "old", "new", ApplyBenchCells().size() * places.size(), /*same_run=*/true);
    ASSERT_TRUE(cmp) << cmp.error().message;
    ASSERT_EQ(cmp->cells.size(), ApplyBenchCells().size());
    const std::string title = fmt::format("partition {}: byte {} -> {}", place.partition,
                                          place.old_start_bytes, place.new_start_bytes);
    EXPECT_NE(r.out.find(title), std::string::npos) << r.out;
    ASSERT_EQ(compare["cells"].size(), cmp->cells.size());
    for (const CellComparison& c : cmp->cells) {
      EXPECT_GT(c.change.pairs, 0u) << Describe(c.subject);
      const nlohmann::json& written = compare["cells"][&c - cmp->cells.data()];
      EXPECT_EQ(written["paired"], true) << written;
      EXPECT_NEAR(written["change_low_pct"].get<double>(), c.change.low * 100, 0.2) << written;
      std::optional<PrintedRow> row = FindRow(r.out, title, c.subject);
      ASSERT_TRUE(row) << Describe(c.subject) << " not in the table after '" << title << "':\n"
                       << r.out;
      ExpectPrinted(*row, c);
    }
  }
}

TEST(ApplyBenchTest, ImageFileMeasuresEachMovedPartitionAtBothPlaces) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = MakeImage(dir);
  FillPartitions(image);
  const std::string data = PartitionBytes(image);
  // Their contents given up (plan --discard): a table-only plan, whose benchmark must still
  // leave every byte as it was.
  Plan plan = test::MakeTableOnlyPlan(image, 512, 1024 * 1024, /*discard_data=*/true);
  ApplyWithBenchAndCheck(image, plan, dir);
  // A table-only plan and a benchmark of reads and rewrites change no byte inside the
  // partitions.
  EXPECT_TRUE(PartitionBytes(image) == data) << "the partitions' bytes changed";
}

// On a block device apply holds the disk (O_EXCL + flock) while the "after" run measures: its
// rewrites open the disk read-write without O_EXCL and without the lock, which apply holds.
TEST(ApplyBenchTest, LoopDeviceHeldByApplyIsMeasuredAfterTheWrite) {
  PARTALIGN_REQUIRE_DEVICES();
  test::PartitionedLoop disk(kScript, 512, kDiskBytes);
  FillPartitions(disk.device());
  const std::string data = PartitionBytes(disk.device());
  Plan plan = test::MakeTableOnlyPlan(disk.device(), 0, 1024 * 1024, /*discard_data=*/true);
  test::TempDir dir;
  ApplyWithBenchAndCheck(disk.device(), plan, dir);
  EXPECT_TRUE(PartitionBytes(disk.device()) == data) << "the partitions' bytes changed";
}

TEST(ApplyBenchTest, WithoutBenchNothingIsMeasured) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = MakeImage(dir);
  const std::string plan_file = dir.File("plan.json");
  test::WritePlanFile(plan_file, test::MakeTableOnlyPlan(image, 512));
  CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", dir.File("b"), "--bench-report",
                                  dir.File("r"), plan_file});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("Benchmark"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.File("r")));
}

}  // namespace
}  // namespace partalign
