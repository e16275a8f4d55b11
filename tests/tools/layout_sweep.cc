// SPDX-License-Identifier: GPL-3.0-or-later
// The randomised layout sweep: seeded random layouts (GPT and DOS, one to seven partitions,
// sizes in MiB, in odd KiB and in plain bytes, with and without a last partition taking the
// rest, some too large for the disk) on seeded random topologies (tests/support/
// random_topology.h), each asked of the real parted (MiB and % positions), sfdisk, sgdisk and
// systemd-repart on a loop device under the LD_PRELOAD topology simulator exactly as
// `partalign explain --layout --json` says it asks them, and compared partition by partition
// (number, kind, start, end), warning by warning and failure by failure.
//
// Usage (as root; scripts/bench-explain-layout-sweep wraps it):
//   partalign_layout_sweep [--cases N] [--seed S] [--verbose]
// Exit status: 0 every case agreed, 1 a disagreement or an error, 77 skipped (not root).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/layout_oracle.h"
#include "support/random_topology.h"
#include "support/run_command.h"
#include "support/sweep_disks.h"
#include "support/tool_oracle.h"

namespace partalign {
namespace {

constexpr int kSkipped = 77;
constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kTiB = 1024ull * 1024 * kMiB;

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct Options {
  int cases = 100;
  uint64_t seed = 1;
  bool verbose = false;
};

struct Case {
  Topology topology;
  LayoutRequest request;
  std::string spec;
  std::string Assume() const {
    const Topology& t = topology;
    return fmt::format("log={},phys={},min-io={},opt-io={},align-offset={},size={}",
                       t.logical_sector_size, t.physical_sector_size, t.minimum_io_size,
                       t.optimal_io_size, t.alignment_offset, t.size_bytes);
  }
};

// A size as people write them: whole MiB mostly, odd KiB sometimes, now and then bytes that
// are whole sectors but no KiB (or, on 4Kn, not even whole sectors).
uint64_t DrawSize(test::Draw& d, uint64_t typical, uint64_t lbs) {
  uint64_t bytes = d.LogUniform(kMiB, std::max<uint64_t>(typical, 2 * kMiB));
  int style = static_cast<int>(d.Below(100));
  if (style < 70) return std::max<uint64_t>(bytes / kMiB, 1) * kMiB;
  if (style < 90) return std::max<uint64_t>(bytes / kKiB, 1) * kKiB;
  if (style < 97) return std::max<uint64_t>(bytes / lbs, 1) * lbs + (lbs == 512 ? 512 : 0);
  return std::max<uint64_t>(bytes / 512, 1) * 512;
}

Case DrawCase(test::Draw& d) {
  Case c;
  // One case in eight is a tiny disk (1 to 8 MiB), where the grains meet the label's structures.
  c.topology =
      d.Chance(12)
          ? test::DrawTopology(
                d, {.min_disk_bytes = 1 * kMiB, .max_disk_bytes = 8 * kMiB, .threshold_percent = 0})
          : test::DrawTopology(
                d,
                {.min_disk_bytes = 8 * kMiB, .max_disk_bytes = 4 * kTiB, .threshold_percent = 10});
  const uint64_t lbs = c.topology.logical_sector_size;
  c.request.label = d.Chance(60) ? LabelType::kGpt : LabelType::kDos;
  const uint64_t count = c.request.label == LabelType::kGpt ? 1 + d.Below(6) : 1 + d.Below(7);
  // Most layouts fit; one in ten asks for more than the disk holds.
  const uint64_t budget = d.Chance(10) ? c.topology.size_bytes * 2 : c.topology.size_bytes * 9 / 10;
  c.spec = c.request.label == LabelType::kGpt ? "label=gpt" : "label=dos";
  for (uint64_t i = 0; i < count; ++i) {
    if (i + 1 == count && d.Chance(70)) {
      c.request.sizes_bytes.push_back(std::nullopt);
      c.spec += ";type=L";
      break;
    }
    uint64_t size = DrawSize(d, budget / count, lbs);
    c.request.sizes_bytes.push_back(size);
    c.spec += fmt::format(";size={}B", size);  // bytes (a bare number counts sectors)
  }
  return c;
}

std::string Show(const std::vector<PlacedPartition>& parts) {
  std::string s;
  for (const PlacedPartition& p : parts) {
    s += fmt::format("{}{}:{}-{} ", p.number,
                     p.kind == PlacedKind::kPrimary    ? ""
                     : p.kind == PlacedKind::kExtended ? "e"
                                                       : "l",
                     p.start_sector, p.end_sector);
  }
  return s.empty() ? "none" : s;
}

std::string Show(std::vector<std::string> warnings) {
  std::sort(warnings.begin(), warnings.end());
  std::string s;
  for (std::string w : warnings) {
    std::replace(w.begin(), w.end(), '\n', ' ');
    s += "[" + w + "] ";
  }
  return s.empty() ? "none" : s;
}

struct Coverage {
  int gpt = 0, dos = 0, logical = 0, rest = 0, four_kn = 0, offset = 0;
  std::map<std::string, int> refused;  // per tool: cases where it fails
  std::map<std::string, int> warned;   // per tool: cases where it warns
};

// Runs one case; returns per tool whether it agreed, and prints the disagreements.
std::map<std::string, bool> RunCase(const Case& c, const std::string& device,
                                    const std::string& scratch, Coverage* cov,
                                    std::vector<std::string>* out) {
  std::map<std::string, bool> ok;
  test::CommandResult e = test::RunPartalign({"explain", "--json", "--no-cross-check", "--assume",
                                              c.Assume(), "--layout", c.spec, device});
  nlohmann::json j = nlohmann::json::parse(e.out, nullptr, /*allow_exceptions=*/false);
  if (e.exit_code != 0 || j.is_discarded() || !j["layout_predictions"].is_array()) {
    out->push_back("explain --layout failed: " + e.err);
    ok["explain"] = false;
    return ok;
  }
  (c.request.label == LabelType::kGpt ? cov->gpt : cov->dos)++;
  if (c.request.label == LabelType::kDos && c.request.sizes_bytes.size() > 4) ++cov->logical;
  if (!c.request.sizes_bytes.back()) ++cov->rest;
  if (c.topology.logical_sector_size == 4096) ++cov->four_kn;
  if (c.topology.alignment_offset != 0) ++cov->offset;
  for (const nlohmann::json& pj : j["layout_predictions"]) {
    LayoutPrediction p = test::LayoutPredictionFromJson(pj);
    if (p.tool == "partalign" || test::IsInstallerTool(p.tool)) continue;
    if (c.request.label != LabelType::kGpt && (p.tool == "sgdisk" || p.tool == "systemd-repart")) {
      continue;  // GPT only: nothing to run
    }
    test::ToolLayout real = test::RunToolLayout(device, c.topology, c.request, p, scratch);
    cov->refused[p.tool] += !p.error.empty();
    cov->warned[p.tool] += !p.warnings.empty();
    std::vector<std::string> model_w = p.warnings, real_w = real.warnings;
    std::sort(model_w.begin(), model_w.end());
    std::sort(real_w.begin(), real_w.end());
    bool agree = real.partitions == p.partitions && real_w == model_w && real.ok == p.error.empty();
    ok[p.tool] = agree;
    if (!agree) {
      out->push_back(fmt::format("  {}: real {}{}, explain {}{}", p.tool, Show(real.partitions),
                                 real.ok ? "" : "(fails: " + real.error + ")", Show(p.partitions),
                                 p.error.empty() ? "" : "(fails: " + p.error + ")"));
      if (real_w != model_w) {
        out->push_back(fmt::format("    warnings: real {}, explain {}", Show(real.warnings),
                                   Show(p.warnings)));
      }
    }
  }
  return ok;
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      o.cases = std::atoi(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      std::fprintf(stderr, "usage: partalign_layout_sweep [--cases N] [--seed S] [--verbose]\n");
      return 1;
    }
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "layout sweep: skipped, needs root for loop devices\n");
    const char* required = std::getenv("PARTALIGN_REQUIRE_DEVICE_TESTS");
    return required != nullptr && std::strcmp(required, "1") == 0 ? 1 : kSkipped;
  }
  std::string missing;
  if (!test::OracleToolsInstalled(&missing)) {
    std::fprintf(stderr, "layout sweep: %s is not installed\n", missing.c_str());
    return 1;
  }
  ::signal(SIGINT, OnSignal);
  ::signal(SIGTERM, OnSignal);

  test::Draw draw(o.seed);
  test::SweepDisks disks;
  std::map<std::string, test::SweepTally> tally;
  Coverage cov;
  auto [run, failures] =
      test::RunSweepCases(o.cases, o.verbose, g_stop, &tally, [&](int, test::SweepCase* sc) {
        Case c = DrawCase(draw);
        sc->header = fmt::format("--assume {} --layout '{}'", c.Assume(), c.spec);
        const std::string dev =
            disks.Prepare(c.topology.logical_sector_size, c.topology.size_bytes);
        sc->agreed = RunCase(c, dev, disks.scratch(), &cov, &sc->lines);
      });
  test::PrintSweepTally("layout", o.seed, run, g_stop, tally);
  std::printf(
      "covered: %d GPT and %d DOS layouts, %d with logical partitions, %d ending with the rest "
      "of the disk; %d 4Kn, %d with an alignment offset\n",
      cov.gpt, cov.dos, cov.logical, cov.rest, cov.four_kn, cov.offset);
  std::printf("%-16s %8s %8s\n", "TOOL", "REFUSES", "WARNS");
  for (const auto& [tool, t] : tally) {
    std::printf("%-16s %8d %8d\n", tool.c_str(), cov.refused[tool], cov.warned[tool]);
  }
  return failures == 0 && !g_stop ? 0 : 1;
}

}  // namespace
}  // namespace partalign

int main(int argc, char** argv) { return partalign::Main(argc, argv); }
