// SPDX-License-Identifier: GPL-3.0-or-later
// The plan-mutation sweep (issue 37: a plan file is a claim, never an instruction): seeded
// random disks - GPT and DOS with logical partitions (support/random_layout.h), 512- and
// 4096-byte sectors, as image files - whose partitions hold an ext4 with files (filling its
// partition, or smaller with zeros or data past its end), raw data, bytes only in the last
// sector, or nothing (holes); `partalign plan` makes a plan (now and then with --discard of a
// partition that holds data); then every mutation of that plan file (support/plan_mutations.h)
// goes through `partalign apply --yes` (support/plan_mutation_run.h). The last line counts
// plans, mutations, those refused with nothing written, those equal to plan's own plan for
// their layout and applied, those accepted although they differ, and the invariant violations.
//
// Usage (as root; scripts/plan-mutation-sweep wraps it):
//   partalign_plan_mutation_sweep [--plans N] [--seed S] [--stride K] [--verbose]
// --stride K runs every K-th mutation of each plan (1, the default: every one).
// Exit status: 0 nothing accepted that differs and no violation, 1 otherwise, 77 not root.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "partalign/layout/plan_render.h"
#include "partalign/layout/planner.h"
#include "partalign/topology/topology.h"
#include "support/ext4_image.h"
#include "support/moved_disk.h"
#include "support/partitioned_loop.h"
#include "support/plan_mutation_run.h"
#include "support/random_layout.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

constexpr int kSkipped = 77;
constexpr uint64_t kMiB = 1 << 20;
// Plans with more partitions have more mutations than a sweep needs to cover every kind.
constexpr size_t kMaxPartitions = 6;

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct Options {
  int plans = 50;
  uint64_t seed = 1;
  size_t stride = 1;
  bool verbose = false;
};

std::optional<Options> Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--plans") {
      o.plans = std::stoi(value());
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--stride") {
      o.stride = std::max<size_t>(1, std::stoul(value()));
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      std::fprintf(stderr,
                   "usage: partalign_plan_mutation_sweep [--plans N] [--seed S] [--stride K] "
                   "[--verbose]\n");
      return std::nullopt;
    }
  }
  return o;
}

void WriteRandomAt(const std::string& image, uint64_t offset, uint64_t bytes) {
  test::RunOrThrow({"dd", "if=/dev/urandom", "of=" + image, "bs=512",
                    fmt::format("count={}", bytes), "iflag=count_bytes",
                    fmt::format("seek={}", offset), "oflag=seek_bytes", "conv=notrunc",
                    "status=none"});
}

// One random disk as an image file, and the plan `partalign plan` makes for it. nullopt when
// the layout has too many partitions for a sweep (the next seed is drawn).
struct Case {
  std::string image;
  unsigned sector_size = 512;
  std::string description;
};

std::optional<Case> MakeCase(uint64_t seed, const test::TempDir& dir, int index) {
  test::RandomLayout r(seed);
  test::RandomLayoutOptions o;
  o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
  o.sector_size = r.Chance(0.75) ? 512 : 4096;
  o.dos_first_lba = kMiB / o.sector_size;
  o.disk_sectors = r.Uniform(64, 160) * (kMiB / o.sector_size);
  o.random_contents = false;
  const PartitionTable layout = r.Make(o);
  if (layout.partitions.empty() || layout.partitions.size() > kMaxPartitions) return std::nullopt;
  const uint64_t ss = o.sector_size;
  Case c;
  c.sector_size = static_cast<unsigned>(ss);
  c.image = dir.File(fmt::format("case{}.img", index));
  fs::remove(c.image);
  test::CreateSparseFile(c.image, layout.disk_size_sectors * ss);
  DeviceInfo device;
  device.identity.path = c.image;
  device.topology = DefaultTopology(ss, layout.disk_size_sectors * ss);
  Result<std::string> script = RenderSfdiskScript(EmptyPlan(layout, device, {kMiB, 0}), layout);
  if (!script) throw std::runtime_error(script.error().message);
  test::SfdiskImage(c.image, *script, c.sector_size);
  c.description = fmt::format("{} {}-byte sectors, {} MiB:", ToString(layout.label), ss,
                              layout.disk_size_sectors * ss / kMiB);
  for (const Partition& p : layout.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    const uint64_t start = p.start_sector * ss;
    const uint64_t size = p.size_sectors * ss;
    std::string what = "holes";
    const uint64_t pick = r.Uniform(0, 9);
    if (pick < 4 && size >= 4 * kMiB) {
      // ext4 (512-byte sectors for MakeExt4At), the whole partition or less, then maybe
      // data past its end.
      uint64_t fs_bytes = size / 4096 * 4096;
      if (r.Chance(0.5))
        fs_bytes = std::max<uint64_t>(4 * kMiB, fs_bytes - r.Uniform(1, 64) * 4096);
      fs_bytes = std::min(fs_bytes, size / 4096 * 4096);
      test::MakeExt4At(c.image, start / 512, fs_bytes / 512,
                       test::MakeFiles(fmt::format("{}-{}", seed, p.number)), dir,
                       fmt::format("files{}-{}", index, p.number));
      what = fmt::format("ext4 of {} KiB", fs_bytes / 1024);
      if (fs_bytes + 512 < size && r.Chance(0.5)) {
        const uint64_t at = r.Uniform(fs_bytes, size - 512) / 512 * 512;
        WriteRandomAt(c.image, start + at, 512);
        what += fmt::format(", data at byte {}", at);
      }
    } else if (pick < 6) {
      const uint64_t at = r.Uniform(0, size - 1) / 512 * 512;
      const uint64_t bytes = std::min<uint64_t>(size - at, 64 * 1024);
      WriteRandomAt(c.image, start + at, bytes);
      what = fmt::format("raw data at byte {}", at);
    } else if (pick < 7) {
      WriteRandomAt(c.image, start + size - 512, 512);
      what = "its last sector";
    }
    c.description += fmt::format(" {}:{}-{} {};", p.number, p.start_sector, p.end_sector(), what);
  }
  return c;
}

int Main(int argc, char** argv) {
  std::optional<Options> options = Parse(argc, argv);
  if (!options) return 1;
  if (::geteuid() != 0) {
    std::fprintf(stderr, "plan-mutation sweep: needs root (mkfs, images); skipped\n");
    const char* require = std::getenv("PARTALIGN_REQUIRE_DEVICE_TESTS");
    return require && std::strcmp(require, "1") == 0 ? 1 : kSkipped;
  }
  ::signal(SIGINT, OnSignal);
  ::signal(SIGTERM, OnSignal);
  test::MutationTally total;
  const auto began = std::chrono::steady_clock::now();
  uint64_t draw = 0;
  for (int k = 0; k < options->plans && !g_stop;) {
    const uint64_t seed = options->seed * 1000003 + draw++;
    test::TempDir case_dir;
    std::optional<Case> c = MakeCase(seed, case_dir, k);
    if (!c) continue;
    test::RandomLayout r(seed ^ 0x5eed);
    std::vector<std::string> plan = {"plan", "-o", case_dir.File("plan.json"), c->image};
    if (c->sector_size != 512) plan.insert(plan.end(), {"--sector-size", "4096"});
    test::CommandResult made = test::RunPartalign(plan);
    if (made.exit_code != 0) {
      std::printf("case %d (seed %llu): plan failed: %s\n", k,
                  static_cast<unsigned long long>(seed), made.err.c_str());
      ++total.violations;
      ++k;
      continue;
    }
    test::MutationRun run;
    run.image = c->image;
    run.sector_size = c->sector_size;
    run.plan_file = case_dir.File("plan.json");
    run.scratch = case_dir.File("mutations");
    run.stride = options->stride;
    run.offset = static_cast<size_t>(r.Uniform(0, options->stride - 1));
    test::MutationTally tally = test::RunPlanMutations(run);
    if (options->verbose || !tally.failures.empty()) {
      std::printf(
          "case %d (seed %llu): %s\n  mutations %d, refused %d, applied %d, differ %d, "
          "violations %d\n",
          k, static_cast<unsigned long long>(seed), c->description.c_str(), tally.mutations,
          tally.refused, tally.applied, tally.differ, tally.violations);
      for (const std::string& f : tally.failures) std::printf("  %s\n", f.c_str());
      std::fflush(stdout);
    }
    total.Add(tally);
    ++k;
  }
  const double minutes =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() / 60;
  std::printf("plan-mutation sweep: seed %llu, %.1f minutes%s\n",
              static_cast<unsigned long long>(options->seed), minutes,
              g_stop ? " (interrupted)" : "");
  std::printf(
      "plans %d, mutations %d, refused %d, equivalent+applied %d, accepted but different "
      "%d, invariant violations %d\n",
      total.plans, total.mutations, total.refused, total.applied, total.differ, total.violations);
  return total.differ == 0 && total.violations == 0 && !g_stop ? 0 : 1;
}

}  // namespace
}  // namespace partalign

int main(int argc, char** argv) {
  try {
    return partalign::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan-mutation sweep: %s\n", e.what());
    return 1;
  }
}
