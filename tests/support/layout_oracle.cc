// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/layout_oracle.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/run_command.h"
#include "support/tool_oracle.h"

namespace partalign::test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::map<std::string, std::string> Env(const std::string& device, const Topology& t) {
  std::map<std::string, std::string> env = ShimEnvironment(device, t);
  env.emplace("LC_ALL", "C");
  return env;
}

std::string LastErrorLine(const CommandResult& r) {
  std::string last;
  for (const std::string& line : Lines(r.err + r.out)) {
    if (!line.empty() && line.find("udevadm") == std::string::npos) last = line;
  }
  return last;
}

// The prediction's command line with DEV replaced by the device.
std::vector<std::string> Argv(const LayoutPrediction& p, const std::string& device) {
  std::vector<std::string> argv = Words(p.command.front());
  for (std::string& w : argv) {
    if (w == "DEV") w = device;
  }
  return argv;
}

bool IsDosExtendedType(const std::string& type) {
  return type == "5" || type == "f" || type == "85";
}

}  // namespace

LayoutPrediction LayoutPredictionFromJson(const nlohmann::json& j) {
  LayoutPrediction p;
  p.tool = j["tool"].get<std::string>();
  p.command = j["command"].get<std::vector<std::string>>();
  for (const nlohmann::json& q : j["partitions"]) {
    std::string kind = q["kind"].get<std::string>();
    p.partitions.push_back({q["number"].get<uint32_t>(),
                            kind == "extended"  ? PlacedKind::kExtended
                            : kind == "logical" ? PlacedKind::kLogical
                                                : PlacedKind::kPrimary,
                            q["start_sector"].get<uint64_t>(), q["end_sector"].get<uint64_t>()});
  }
  std::sort(p.partitions.begin(), p.partitions.end(),
            [](const PlacedPartition& a, const PlacedPartition& b) {
              return a.start_sector < b.start_sector;
            });
  p.warnings = j["warnings"].get<std::vector<std::string>>();
  if (!j["error"].is_null()) p.error = j["error"].get<std::string>();
  if (j.contains("omitted")) {
    for (const nlohmann::json& o : j["omitted"]) {
      p.omitted.push_back(
          {o["number"].get<uint32_t>(), o["modelled"].get<bool>(), o["reason"].get<std::string>()});
    }
  }
  return p;
}

bool IsInstallerTool(const std::string& tool) {
  for (const ToolView& v : ToolViews()) {
    if (v.installer && v.id == tool) return true;
  }
  return false;
}

std::vector<PlacedPartition> ReadPlacedPartitions(const std::string& device) {
  CommandResult r = RunCommand({"sfdisk", "-J", device}, "", {{"LC_ALL", "C"}});
  std::vector<PlacedPartition> out;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("partitiontable")) return out;
  const nlohmann::json& t = j["partitiontable"];
  const bool dos = t.value("label", "") == "dos";
  if (!t.contains("partitions")) return out;
  for (const nlohmann::json& p : t["partitions"]) {
    std::string node = p["node"].get<std::string>();
    size_t digits = node.find_last_not_of("0123456789") + 1;
    PlacedPartition q;
    q.number = static_cast<uint32_t>(std::stoul(node.substr(digits)));
    q.start_sector = p["start"].get<uint64_t>();
    q.end_sector = q.start_sector + p["size"].get<uint64_t>() - 1;
    if (dos && q.number > 4) {
      q.kind = PlacedKind::kLogical;
    } else if (dos && IsDosExtendedType(p.value("type", ""))) {
      q.kind = PlacedKind::kExtended;
    }
    out.push_back(q);
  }
  std::sort(out.begin(), out.end(), [](const PlacedPartition& a, const PlacedPartition& b) {
    return a.start_sector < b.start_sector;
  });
  return out;
}

ToolLayout RunToolLayout(const std::string& device, const Topology& t, const LayoutRequest& r,
                         const LayoutPrediction& p, const std::string& scratch) {
  WipeDevice(device);
  ToolLayout out;
  const std::map<std::string, std::string> env = Env(device, t);
  CommandResult run;
  if (p.tool.rfind("parted", 0) == 0) {
    run = RunCommand(Argv(p, device), "", env);
    const std::string marker = "Warning: ";
    for (const std::string& line : Lines(run.err + run.out)) {
      if (line.find("not properly aligned") != std::string::npos) {
        out.warnings.push_back(line.rfind(marker, 0) == 0 ? line.substr(marker.size()) : line);
      }
    }
  } else if (p.tool == "sfdisk") {
    std::string script;
    for (size_t i = 1; i < p.command.size(); ++i) script += p.command[i] + "\n";
    run = RunCommand({"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", device}, script, env);
    if (run.exit_code == 0) {
      CommandResult l = RunCommand({"fdisk", "-l", device}, "", env);
      for (const std::string& line : Lines(l.out + l.err)) {
        if (line.find("does not start on physical sector boundary") != std::string::npos) {
          out.warnings.push_back(line);
        }
      }
    }
  } else if (p.tool == "sgdisk") {
    if (r.label != LabelType::kGpt) return out;
    run = RunCommand(Argv(p, device), "", env);
    if (run.exit_code == 0) {
      CommandResult v = RunCommand({"sgdisk", "-v", device}, "", env);
      std::vector<std::string> lines = Lines(v.out);
      for (size_t i = 0; i + 1 < lines.size(); ++i) {
        if (lines[i].rfind("Caution: Partition", 0) == 0) {
          std::string caution = lines[i];
          caution.append(1, '\n').append(lines[i + 1]);
          out.warnings.push_back(std::move(caution));
        }
      }
    }
  } else if (p.tool == "systemd-repart") {
    if (r.label != LabelType::kGpt) return out;
    namespace fs = std::filesystem;
    const std::string dir = scratch + "/repart.d";
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (size_t i = 0; i < r.sizes_bytes.size(); ++i) {
      std::ofstream f(fmt::format("{}/{:02}-p{}.conf", dir, (i + 1) * 10, i + 1));
      f << "[Partition]\nType=linux-generic\n";
      if (r.sizes_bytes[i]) {
        f << "SizeMinBytes=" << *r.sizes_bytes[i] << "\nSizeMaxBytes=" << *r.sizes_bytes[i] << "\n";
      }
    }
    run = RunCommand({"systemd-repart", "--empty=force", "--dry-run=no", "--no-pager",
                      "--seed=random", "--definitions=" + dir, device},
                     "", env);
  } else {
    out.error = "no oracle for " + p.tool;
    return out;
  }
  out.ok = run.exit_code == 0;
  if (!out.ok) out.error = LastErrorLine(run);
  out.partitions = ReadPlacedPartitions(device);
  return out;
}

}  // namespace partalign::test
