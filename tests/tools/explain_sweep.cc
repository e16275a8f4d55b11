// SPDX-License-Identifier: GPL-3.0-or-later
// The randomised explain sweep: draws seeded random topologies from values that occur in
// practice, runs the real parted, sfdisk, sgdisk (and systemd-repart) on a loop device under
// the LD_PRELOAD topology simulator, compares what they did with `partalign explain --json`,
// and reports the agreement per tool and every disagreement with its topology.
//
// Usage (as root; scripts/bench-explain-sweep wraps it):
//   partalign_explain_sweep [--cases N] [--seed S] [--no-repart] [--verbose]
// Exit status: 0 every case agreed, 1 a disagreement or an error, 77 skipped (not root).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/tools/parted_model.h"
#include "support/random_topology.h"
#include "support/run_command.h"
#include "support/sweep_disks.h"
#include "support/tool_oracle.h"

namespace partalign {
namespace {

constexpr int kSkipped = 77;
constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB, kTiB = 1024 * kGiB;
// Sizes are drawn log-uniformly between these (the 16 MiB .. 4 TiB).
constexpr uint64_t kMinDisk = 16 * kMiB;
constexpr uint64_t kMaxDisk = 4 * kTiB;
// One case in eight is a tiny disk (1 to 16 MiB), where `1MiB 100%` and the grains meet the
// label's own structures.
constexpr uint64_t kTinyMin = 1 * kMiB, kTinyMax = 16 * kMiB;

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct Options {
  int cases = 200;
  uint64_t seed = 1;
  bool repart = true;
  bool verbose = false;
  /// Negative control: run the tools without the simulator, so that they see the plain loop
  /// device while explain is told the drawn topology; most cases must then disagree.
  bool no_shim = false;
};

// What made a case interesting, counted to show what the sweep covered.
struct Coverage {
  int tools_disagree = 0;   // parted -a optimal and sfdisk start the first GPT partition apart
  int parted_warns = 0;     // parted warns at 1 MiB
  int parted_fallback = 0;  // parted's `0%` found no aligned sector (it warns there too)
  int refused = 0;          // some tool refuses the fresh layout
  int offset = 0;
  int four_kn = 0;
  int over_2tib = 0;
  int tiny = 0;  // disks of 16 MiB or less
};

struct Case {
  Topology topology;
  std::string Spec() const {
    const Topology& t = topology;
    return fmt::format("log={},phys={},min-io={},opt-io={},align-offset={},size={}",
                       t.logical_sector_size, t.physical_sector_size, t.minimum_io_size,
                       t.optimal_io_size, t.alignment_offset, t.size_bytes);
  }
};

using test::Draw;

Case DrawCase(Draw& d) {
  if (d.Chance(12)) {
    return Case{test::DrawTopology(
        d, {.min_disk_bytes = kTinyMin, .max_disk_bytes = kTinyMax, .threshold_percent = 0})};
  }
  return Case{test::DrawTopology(d, {.min_disk_bytes = kMinDisk, .max_disk_bytes = kMaxDisk})};
}

struct Disagreement {
  std::string tool;
  std::string what;
  std::string real;
  std::string model;
};

std::string Show(const nlohmann::json& j) { return j.is_null() ? "none" : j.dump(); }

const nlohmann::json& Prediction(const nlohmann::json& j, const std::string& tool) {
  for (const nlohmann::json& p : j["predictions"]) {
    if (p["tool"] == tool) return p;
  }
  static const nlohmann::json kNull;
  return kNull;
}

nlohmann::json FirstOrNull(bool ran, const std::vector<uint64_t>& starts) {
  return ran && !starts.empty() ? nlohmann::json(starts[0]) : nlohmann::json(nullptr);
}

// Runs one case on `device` (a loop device already sized for it) and collects disagreements
// per tool. Returns the tools that agreed.
void Count(const Case& c, const nlohmann::json& j, Coverage* cov) {
  const nlohmann::json& parted = Prediction(j, "parted-optimal");
  const nlohmann::json& sfdisk = Prediction(j, "sfdisk");
  if (parted["first_start_gpt"] != sfdisk["first_start_gpt"]) ++cov->tools_disagree;
  if (parted["warns_at_1mib"] == true) ++cov->parted_warns;
  if (!parted["warnings"].empty()) ++cov->parted_fallback;
  for (const nlohmann::json& p : j["predictions"]) {
    if (p["first_start_gpt"].is_null() ||
        (p["first_start_dos"].is_null() && p["dos_error"].is_string() &&
         p["dos_error"].get<std::string>().find("GPT only") == std::string::npos)) {
      ++cov->refused;
      break;
    }
  }
  if (c.topology.alignment_offset != 0) ++cov->offset;
  if (c.topology.logical_sector_size == 4096) ++cov->four_kn;
  if (c.topology.size_bytes > 2 * kTiB) ++cov->over_2tib;
  if (c.topology.size_bytes <= kTinyMax) ++cov->tiny;
}

std::map<std::string, bool> RunCase(const Case& c, const std::string& device,
                                    const std::string& scratch, const Options& o,
                                    Coverage* coverage, std::vector<Disagreement>* out) {
  const bool repart = o.repart;
  std::map<std::string, bool> ok;
  auto check = [&](const std::string& tool, const std::string& what, const nlohmann::json& real,
                   const nlohmann::json& model) {
    ok.try_emplace(tool, true);
    if (real != model) {
      ok[tool] = false;
      out->push_back({tool, what, Show(real), Show(model)});
    }
  };
  test::CommandResult e =
      test::RunPartalign({"explain", "--json", "--no-cross-check", "--assume", c.Spec(), device});
  nlohmann::json j = nlohmann::json::parse(e.out, nullptr, /*allow_exceptions=*/false);
  if (e.exit_code != 0 || j.is_discarded()) {
    out->push_back({"explain", "run", e.err, ""});
    return {{"parted", false}, {"sfdisk", false}, {"sgdisk", false}};
  }
  Count(c, j, coverage);
  // Under --no-shim the tools are told (through the shim's environment) about nothing.
  Topology t = c.topology;
  if (o.no_shim) t = DefaultTopology(t.logical_sector_size, t.size_bytes);
  for (PartedMode mode : {PartedMode::kOptimal, PartedMode::kMinimal}) {
    const std::string name = fmt::format("parted-{}", ToString(mode));
    const nlohmann::json& p = Prediction(j, name);
    for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
      test::PartedResult r = test::RunParted(device, t, mode, label, "0%", "100%", false);
      const bool gpt = label == LabelType::kGpt;
      check("parted", fmt::format("{} {} 0% start", ToString(mode), PartedLabelName(label)),
            r.ran ? nlohmann::json(r.start) : nlohmann::json(nullptr),
            p[gpt ? "first_start_gpt" : "first_start_dos"]);
    }
    test::PartedResult r = test::RunParted(device, t, mode, LabelType::kGpt, "1MiB", "100%", false);
    check("parted", fmt::format("{} gpt 1MiB warning", ToString(mode)),
          r.warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.warning),
          p["warning_at_1mib"]);
    check("parted", fmt::format("{} gpt 1MiB refusal", ToString(mode)), nlohmann::json(!r.ran),
          nlohmann::json(!p["error_at_1mib"].is_null()));
  }
  const nlohmann::json& sf = Prediction(j, "sfdisk");
  for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
    const bool gpt = label == LabelType::kGpt;
    test::SfdiskResult r = test::RunSfdisk(device, t, label, {","}, false);
    check("sfdisk", fmt::format("{} default start", gpt ? "gpt" : "dos"),
          FirstOrNull(r.ran, r.starts), sf[gpt ? "first_start_gpt" : "first_start_dos"]);
  }
  test::SgdiskResult g = test::RunSgdisk(device, t, {"-n", "1:0:0"}, false);
  check("sgdisk", "-n 1:0:0 start", FirstOrNull(g.ran, g.starts),
        Prediction(j, "sgdisk")["first_start_gpt"]);
  if (repart) {
    test::RepartResult r = test::RunRepart(device, t, scratch + "/repart.d", std::nullopt);
    check("systemd-repart", "first start", FirstOrNull(r.ran, r.starts),
          Prediction(j, "systemd-repart")["first_start_gpt"]);
  }
  return ok;
}

int Usage() {
  std::fprintf(stderr,
               "usage: partalign_explain_sweep [--cases N] [--seed S] [--no-repart] "
               "[--verbose] [--no-shim]\n");
  return 1;
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      o.cases = std::atoi(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--no-repart") {
      o.repart = false;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--no-shim") {
      o.no_shim = true;
    } else {
      return Usage();
    }
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "explain sweep: skipped, needs root for loop devices\n");
    const char* required = std::getenv("PARTALIGN_REQUIRE_DEVICE_TESTS");
    return required != nullptr && std::strcmp(required, "1") == 0 ? 1 : kSkipped;
  }
  std::string missing;
  if (!test::OracleToolsInstalled(&missing)) {
    std::fprintf(stderr, "explain sweep: %s is not installed\n", missing.c_str());
    return 1;
  }
  if (!o.repart) std::printf("explain sweep: systemd-repart not run (--no-repart)\n");
  if (o.no_shim)
    std::printf("explain sweep: NEGATIVE CONTROL, the tools run without the simulator\n");
  ::signal(SIGINT, OnSignal);
  ::signal(SIGTERM, OnSignal);

  Draw draw(o.seed);
  test::SweepDisks disks;
  std::map<std::string, test::SweepTally> tally;
  Coverage coverage;
  int failures = 0, run = 0;
  for (int n = 1; n <= o.cases && !g_stop; ++n) {
    Case c = DrawCase(draw);
    try {
      const std::string dev = disks.Prepare(c.topology.logical_sector_size, c.topology.size_bytes);
      std::vector<Disagreement> disagreements;
      std::map<std::string, bool> ok =
          RunCase(c, dev, disks.scratch(), o, &coverage, &disagreements);
      ++run;
      for (const auto& [tool, agreed] : ok) {
        ++tally[tool].cases;
        if (agreed) ++tally[tool].agree;
      }
      if (!disagreements.empty()) ++failures;
      if (o.verbose || !disagreements.empty()) {
        std::printf("case %d: %s -> %s\n", n, c.Spec().c_str(),
                    disagreements.empty() ? "agree" : "DISAGREE");
      }
      for (const Disagreement& d : disagreements) {
        std::printf("  %s %s: real %s, explain %s\n", d.tool.c_str(), d.what.c_str(),
                    d.real.c_str(), d.model.c_str());
      }
      std::fflush(stdout);
    } catch (const std::exception& ex) {
      std::printf("case %d: %s -> ERROR %s\n", n, c.Spec().c_str(), ex.what());
      ++failures;
    }
  }
  test::PrintSweepTally("explain", o.seed, run, g_stop, tally);
  std::printf(
      "covered: %d cases where parted and sfdisk start apart, %d where parted warns at 1 MiB, %d "
      "where parted's 0%% falls back unaligned, %d where a tool refuses a fresh layout; %d with "
      "an alignment offset, %d 4Kn, %d over 2 TiB, %d of 16 MiB or less\n",
      coverage.tools_disagree, coverage.parted_warns, coverage.parted_fallback, coverage.refused,
      coverage.offset, coverage.four_kn, coverage.over_2tib, coverage.tiny);
  return failures == 0 && !g_stop ? 0 : 1;
}

}  // namespace
}  // namespace partalign

int main(int argc, char** argv) { return partalign::Main(argc, argv); }
