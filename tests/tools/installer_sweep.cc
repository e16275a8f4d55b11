// SPDX-License-Identifier: GPL-3.0-or-later
// The randomised installer sweep: seeded random layouts (GPT and DOS, one to seven partitions,
// sizes in MiB, odd KiB and bytes, a last partition taking the rest or not, some too large) on
// seeded random topologies, each asked of the installers' own partitioning code where it runs
// here, and compared partition by partition (number, start, end) and failure by failure with
// what `partalign explain --layout --json` predicts:
//   calamares  Calamares' PartitionLayout::createPartitions() on KPMcore's DiskDevice and
//              PartitionTable (partalign_calamares_layout, Debian's calamares 3.2.61 module and
//              libkpmcore 22.12), then the sfdisk commands KPMcore's sfdisk backend runs for
//              them (`sfdisk --wipe=always` with the label, `sfdisk --force --append` with
//              start= size= for each partition), on the loop device, read back with sfdisk -J;
//   anaconda   blivet's do_partitioning() (blivet_layout.py, blivet from PyPI on Debian's
//              libblockdev and pyparted) on the loop device under the LD_PRELOAD topology
//              simulator, so that libparted sees the case's topology.
// YaST's libstorage-ng and Ubuntu's curtin/subiquity are not packaged for Debian 12; their
// models are checked by their upstream test cases (tests/data/installer-cases). A partition the
// model says it does not model takes the case out of that installer's rate (counted apart).
//
// Usage (as root; scripts/bench-installer-sweep wraps it and makes the blivet venv):
//   partalign_installer_sweep --python VENV_PYTHON --blivet SCRIPT --calamares PROGRAM
//                             [--cases N] [--seed S] [--verbose]
// Exit status: 0 every modelled case agreed, 1 a disagreement or an error, 77 skipped.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
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
  int cases = 200;
  uint64_t seed = 1;
  bool verbose = false;
  std::string python, blivet, calamares;
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

uint64_t DrawSize(test::Draw& d, uint64_t typical, uint64_t lbs) {
  uint64_t bytes = d.LogUniform(kMiB, std::max<uint64_t>(typical, 2 * kMiB));
  int style = static_cast<int>(d.Below(100));
  if (style < 70) return std::max<uint64_t>(bytes / kMiB, 1) * kMiB;
  if (style < 90) return std::max<uint64_t>(bytes / kKiB, 1) * kKiB;
  return std::max<uint64_t>(bytes / lbs, 1) * lbs;
}

Case DrawCase(test::Draw& d) {
  Case c;
  // One case in eight is a tiny disk (1 to 8 MiB).
  c.topology =
      d.Chance(12)
          ? test::DrawTopology(
                d, {.min_disk_bytes = 1 * kMiB, .max_disk_bytes = 8 * kMiB, .threshold_percent = 0})
          : test::DrawTopology(
                d,
                {.min_disk_bytes = 8 * kMiB, .max_disk_bytes = 4 * kTiB, .threshold_percent = 10});
  const uint64_t lbs = c.topology.logical_sector_size;
  c.request.label = d.Chance(60) ? LabelType::kGpt : LabelType::kDos;
  const uint64_t count = 1 + d.Below(c.request.label == LabelType::kGpt ? 6 : 4);
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
  for (const PlacedPartition& p : parts)
    s += fmt::format("{}:{}-{} ", p.number, p.start_sector, p.end_sector);
  return s.empty() ? "none" : s;
}

// What an oracle did: the partitions it made, and whether it failed.
struct Real {
  std::vector<PlacedPartition> partitions;
  bool ok = true;
  std::string error;
};

// A Calamares size for `bytes`: whole MiB, else KiB rounded up (Calamares has no byte unit;
// bytesToSectors() rounds up to whole MiB anyway, so the result is the same).
std::string CalamaresSize(const std::optional<uint64_t>& bytes) {
  if (!bytes) return "100%";
  if (*bytes % kMiB == 0) return fmt::format("{}MiB", *bytes / kMiB);
  return fmt::format("{}KiB", (*bytes + kKiB - 1) / kKiB);
}

Real RunCalamares(const Options& o, const Case& c, const std::string& device) {
  std::string sizes;
  for (const std::optional<uint64_t>& s : c.request.sizes_bytes) {
    sizes += (sizes.empty() ? "" : ",") + CalamaresSize(s);
  }
  test::CommandResult r =
      test::RunCommand({o.calamares, "--target", device, "--label",
                        c.request.label == LabelType::kGpt ? "gpt" : "msdos", "--sizes", sizes});
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  Real real;
  if (r.exit_code != 0 || j.is_discarded()) {
    real.ok = false;
    real.error = "oracle failed: " + r.err;
    return real;
  }
  // What KPMcore's sfdisk backend runs for Calamares' jobs (SfdiskDevice::createPartitionTable,
  // SfdiskPartitionTable::createPartition); on an installer it goes through KPMcore's D-Bus
  // helper, here it is run directly, under the topology simulator.
  // sfdisk sees the case's topology, as on the disk Calamares would partition.
  std::map<std::string, std::string> c_locale = test::ShimEnvironment(device, c.topology);
  c_locale["LC_ALL"] = "C";
  test::RunCommand(
      {"sfdisk", "--wipe=always", device},
      c.request.label == LabelType::kGpt ? "label: gpt\nwrite\n" : "label: dos\nwrite\n", c_locale);
  for (const nlohmann::json& p : j["partitions"]) {
    const int64_t first = p["first"].get<int64_t>(), last = p["last"].get<int64_t>();
    test::CommandResult a = test::RunCommand(
        {"sfdisk", "--force", "--append", device},
        fmt::format("start={} size={}\nwrite\n", first, last - first + 1), c_locale);
    if (a.out.find("Created a new partition") == std::string::npos) {
      real.ok = false;
      real.error = fmt::format("sfdisk --append start={} size={} fails", first, last - first + 1);
      break;
    }
  }
  real.partitions = test::ReadPlacedPartitions(device);
  return real;
}

Real RunBlivet(const Options& o, const Case& c, const std::string& device) {
  std::string sizes;
  for (const std::optional<uint64_t>& s : c.request.sizes_bytes) {
    sizes += (sizes.empty() ? "" : ",") + (s ? std::to_string(*s) : std::string("rest"));
  }
  // A fresh disk, as the Calamares oracle of the case before may have left a table; and a bound
  // on blivet's time (a run that does not end is an error of the case, not an agreement).
  test::WipeDevice(device);
  test::CommandResult r =
      test::RunCommand({"timeout", "300", o.python, o.blivet, device,
                        c.request.label == LabelType::kGpt ? "gpt" : "msdos", sizes},
                       "", test::ShimEnvironment(device, c.topology));
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  Real real;
  if (r.exit_code != 0 || j.is_discarded()) {
    real.ok = false;
    real.error = "oracle failed: " + r.err.substr(r.err.size() > 400 ? r.err.size() - 400 : 0);
    return real;
  }
  if (!j["error"].is_null()) {
    real.ok = false;
    real.error = j["error"].get<std::string>();
  }
  for (const nlohmann::json& p : j["partitions"]) {
    real.partitions.push_back({p["number"].get<uint32_t>(), PlacedKind::kPrimary,
                               p["start"].get<uint64_t>(), p["end"].get<uint64_t>()});
  }
  return real;
}

struct Coverage {
  int gpt = 0, dos = 0, rest = 0, four_kn = 0, offset = 0, tiny = 0;
  std::map<std::string, int> not_modelled, refused, skipped;
};

std::map<std::string, bool> RunCase(const Options& o, const Case& c, const std::string& device,
                                    Coverage* cov, std::vector<std::string>* out) {
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
  if (!c.request.sizes_bytes.back()) ++cov->rest;
  if (c.topology.logical_sector_size == 4096) ++cov->four_kn;
  if (c.topology.alignment_offset != 0) ++cov->offset;
  if (c.topology.size_bytes <= 64 * kMiB) ++cov->tiny;
  for (const nlohmann::json& pj : j["layout_predictions"]) {
    LayoutPrediction p = test::LayoutPredictionFromJson(pj);
    if (p.tool != "calamares" && p.tool != "anaconda") continue;
    if (std::any_of(p.omitted.begin(), p.omitted.end(),
                    [](const OmittedPartition& x) { return !x.modelled; })) {
      ++cov->not_modelled[p.tool];
      continue;
    }
    Real real = p.tool == "calamares" ? RunCalamares(o, c, device) : RunBlivet(o, c, device);
    cov->refused[p.tool] += !p.error.empty();
    cov->skipped[p.tool] += !p.omitted.empty();
    const bool agree = real.ok == p.error.empty() && real.partitions == p.partitions;
    ok[p.tool] = agree;
    if (!agree) {
      out->push_back(fmt::format("  {}: real {}{}, explain {}{}", p.tool, Show(real.partitions),
                                 real.ok ? "" : "(fails: " + real.error + ")", Show(p.partitions),
                                 p.error.empty() ? "" : "(fails: " + p.error + ")"));
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
    } else if (a == "--python" && i + 1 < argc) {
      o.python = argv[++i];
    } else if (a == "--blivet" && i + 1 < argc) {
      o.blivet = argv[++i];
    } else if (a == "--calamares" && i + 1 < argc) {
      o.calamares = argv[++i];
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      std::fprintf(stderr,
                   "usage: partalign_installer_sweep --python PY --blivet SCRIPT --calamares "
                   "PROGRAM [--cases N] [--seed S] [--verbose]\n");
      return 1;
    }
  }
  if (o.python.empty() || o.blivet.empty() || o.calamares.empty()) {
    std::fprintf(stderr, "installer sweep: --python, --blivet and --calamares are required\n");
    return 1;
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "installer sweep: skipped, needs root for loop devices\n");
    const char* required = std::getenv("PARTALIGN_REQUIRE_DEVICE_TESTS");
    return required != nullptr && std::strcmp(required, "1") == 0 ? 1 : kSkipped;
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
        sc->agreed = RunCase(o, c, dev, &cov, &sc->lines);
      });
  test::PrintSweepTally("installer", o.seed, run, g_stop, tally);
  std::printf(
      "covered: %d GPT and %d DOS layouts, %d ending with the rest of the disk; %d 4Kn, %d with "
      "an alignment offset, %d disks of 64 MiB or less\n",
      cov.gpt, cov.dos, cov.rest, cov.four_kn, cov.offset, cov.tiny);
  std::printf("%-12s %12s %8s %8s\n", "INSTALLER", "NOT-MODELLED", "REFUSES", "SKIPS");
  for (const char* tool : {"anaconda", "calamares"}) {
    std::printf("%-12s %12d %8d %8d\n", tool, cov.not_modelled[tool], cov.refused[tool],
                cov.skipped[tool]);
  }
  return failures == 0 && !g_stop ? 0 : 1;
}

}  // namespace
}  // namespace partalign

int main(int argc, char** argv) { return partalign::Main(argc, argv); }
