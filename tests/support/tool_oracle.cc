// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/tool_oracle.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "support/loop_device.h"

namespace partalign::test {
namespace {

constexpr size_t kWipeBytes = 1 << 20;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::map<std::string, std::string> WithLocale(std::map<std::string, std::string> env) {
  env["LC_ALL"] = "C";
  return env;
}

CommandResult Run(const std::vector<std::string>& argv, const std::string& device,
                  const Topology& topology, const std::string& input = "") {
  return RunCommand(argv, input, WithLocale(ShimEnvironment(device, topology)));
}

// Partition starts from `sfdisk -J` (no shim needed: it reads the table).
std::vector<uint64_t> ReadStarts(const std::string& device, std::optional<uint64_t>* first_lba) {
  CommandResult r = RunCommand({"sfdisk", "-J", device}, "", WithLocale({}));
  std::vector<uint64_t> starts;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("partitiontable")) return starts;
  const nlohmann::json& t = j["partitiontable"];
  if (first_lba && t.contains("firstlba")) *first_lba = t["firstlba"].get<uint64_t>();
  if (t.contains("partitions")) {
    for (const nlohmann::json& p : t["partitions"]) starts.push_back(p["start"].get<uint64_t>());
  }
  return starts;
}

std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = Lines(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!it->empty() && it->find("udevadm") == std::string::npos) return *it;
  }
  return {};
}

}  // namespace

std::string TopologyShimPath() { return PARTALIGN_TOPOLOGY_SHIM; }

std::map<std::string, std::string> ShimEnvironment(const std::string& device, const Topology& t) {
  return {{"LD_PRELOAD", TopologyShimPath()},
          {"PARTALIGN_SHIM_DEVICE", device},
          {"PARTALIGN_SHIM_PHYS", std::to_string(t.physical_sector_size)},
          {"PARTALIGN_SHIM_MIN_IO", std::to_string(t.minimum_io_size)},
          {"PARTALIGN_SHIM_OPT_IO", std::to_string(t.optimal_io_size)},
          {"PARTALIGN_SHIM_ALIGN_OFF", std::to_string(t.alignment_offset)}};
}

void WipeDevice(const std::string& device) {
  DeletePartitionNodes(device);
  int fd = ::open(device.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + device + " to wipe it");
  uint64_t size = 0;
  ::ioctl(fd, BLKGETSIZE64, &size);
  std::vector<char> zeros(kWipeBytes, 0);
  bool ok = ::pwrite(fd, zeros.data(), zeros.size(), 0) == static_cast<ssize_t>(zeros.size()) &&
            ::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(size - kWipeBytes)) ==
                static_cast<ssize_t>(zeros.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot wipe " + device);
}

PartedResult RunParted(const std::string& device, const Topology& topology, PartedMode mode,
                       LabelType label, const std::string& start, const std::string& end,
                       bool align_check) {
  WipeDevice(device);
  const std::string type = mode == PartedMode::kOptimal ? "opt" : "min";
  std::vector<std::string> argv{"parted",
                                "-m",
                                "-s",
                                "-a",
                                std::string(ToString(mode)),
                                device,
                                "mklabel",
                                std::string(PartedLabelName(label)),
                                "mkpart",
                                "primary",
                                start,
                                end,
                                "unit",
                                "s",
                                "print"};
  if (align_check) {
    argv.insert(argv.end(), {"align-check", type, "1"});
  }
  PartedResult r;
  r.raw = Run(argv, device, topology);
  for (const std::string& line : Lines(r.raw.out)) {
    if (line.rfind(device + ":", 0) == 0) {
      // DEVICE:SIZE:TRANSPORT:LOGICAL:PHYSICAL:LABEL:MODEL:FLAGS;
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, ':');) f.push_back(x);
      if (f.size() > 4) {
        r.logical = std::stoll(f[3]);
        r.physical = std::stoll(f[4]);
      }
    } else if (line.rfind("1:", 0) == 0) {
      r.ran = true;
      r.start = std::stoll(line.substr(2, line.find('s', 2) - 2));
    }
  }
  const std::string marker = "Warning: ";
  for (const std::string& line : Lines(r.raw.err + r.raw.out)) {
    if (line.find("not properly aligned") != std::string::npos) {
      r.warning = line.rfind(marker, 0) == 0 ? line.substr(marker.size()) : line;
    }
  }
  if (align_check && r.ran) {
    r.align_check_exit = r.raw.exit_code;
    CommandResult interactive = Run({"parted", device, "align-check", type, "1"}, device, topology);
    r.align_check_output = LastLine(interactive.out);
  }
  return r;
}

SfdiskResult RunSfdisk(const std::string& device, const Topology& topology, LabelType label,
                       const std::vector<std::string>& lines, bool list_with_fdisk) {
  WipeDevice(device);
  std::string script = std::string("label: ") + (label == LabelType::kGpt ? "gpt" : "dos") + "\n";
  for (const std::string& l : lines) script += l + "\n";
  CommandResult w = Run({"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", device}, device,
                        topology, script);
  SfdiskResult r;
  if (w.exit_code != 0) {
    r.error = LastLine(w.err);
    return r;
  }
  r.ran = true;
  r.starts = ReadStarts(device, &r.first_lba);
  if (list_with_fdisk) {
    CommandResult l = Run({"fdisk", "-l", device}, device, topology);
    // The physical-boundary warning goes to stderr (fdisk_warnx), the listing to stdout.
    for (const std::string& line : Lines(l.out + l.err)) {
      unsigned long long a = 0, b = 0;
      int n = 0;
      if (std::sscanf(line.c_str(), "I/O size (minimum/optimal): %llu bytes / %llu bytes", &a,
                      &b) == 2) {
        r.fdisk_min_io = a;
        r.fdisk_opt_io = b;
      } else if (std::sscanf(line.c_str(), "Alignment offset: %llu bytes", &a) == 1) {
        r.fdisk_alignment_offset = a;
      } else if (std::sscanf(line.c_str(),
                             "Partition %d does not start on physical sector boundary.", &n) == 1) {
        r.not_phys_aligned.push_back(n);
      }
    }
  }
  return r;
}

SgdiskResult RunSgdisk(const std::string& device, const Topology& topology,
                       const std::vector<std::string>& args, bool verify) {
  WipeDevice(device);
  std::vector<std::string> argv{"sgdisk", "-o"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(device);
  CommandResult w = Run(argv, device, topology);
  SgdiskResult r;
  if (w.exit_code != 0) {
    r.error = LastLine(w.err + w.out);
    return r;
  }
  r.ran = true;
  CommandResult p = Run({"sgdisk", "-p", device}, device, topology);
  bool table = false;
  for (const std::string& line : Lines(p.out)) {
    unsigned long long lbs = 0, pbs = 0;
    if (std::sscanf(line.c_str(), "Sector size (logical/physical): %llu/%llu bytes", &lbs, &pbs) ==
        2) {
      r.logical = lbs;
      r.physical = pbs;
    }
    if (line.rfind("Number", 0) == 0) {
      table = true;
      continue;
    }
    unsigned long long number = 0, start = 0;
    if (table && std::sscanf(line.c_str(), " %llu %llu", &number, &start) == 2) {
      r.starts.push_back(start);
    }
  }
  if (verify) {
    CommandResult v = Run({"sgdisk", "-v", device}, device, topology);
    for (const std::string& line : Lines(v.out)) {
      int n = 0;
      unsigned long long t = 0;
      if (std::sscanf(line.c_str(), "Caution: Partition %d doesn't begin on a %llu-sector", &n,
                      &t) == 2) {
        r.verify_begin_warnings.push_back(std::to_string(n) + "@" + std::to_string(t));
      }
    }
  }
  return r;
}

RepartResult RunRepart(const std::string& device, const Topology& topology,
                       const std::string& definitions_dir, std::optional<uint64_t> first_size) {
  WipeDevice(device);
  namespace fs = std::filesystem;
  fs::remove_all(definitions_dir);
  fs::create_directories(definitions_dir);
  if (first_size) {
    std::ofstream(definitions_dir + "/10-first.conf")
        << "[Partition]\nType=linux-generic\nSizeMinBytes=" << *first_size
        << "\nSizeMaxBytes=" << *first_size << "\n";
  }
  std::ofstream(definitions_dir + "/20-rest.conf") << "[Partition]\nType=linux-generic\n";
  CommandResult w = Run({"systemd-repart", "--empty=force", "--dry-run=no", "--no-pager",
                         "--seed=random", "--definitions=" + definitions_dir, device},
                        device, topology);
  RepartResult r;
  if (w.exit_code != 0) {
    r.error = LastLine(w.err);
    return r;
  }
  r.ran = true;
  r.starts = ReadStarts(device, nullptr);
  return r;
}

bool OracleToolsInstalled(std::string* missing) {
  for (const char* tool : {"parted", "sfdisk", "fdisk", "sgdisk", "systemd-repart"}) {
    CommandResult r = RunCommand({tool, "--version"});
    if (r.exit_code != 0) {
      *missing = tool;
      return false;
    }
  }
  return true;
}

}  // namespace partalign::test
