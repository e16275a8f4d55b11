// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/table_readers.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign::test {
namespace {

constexpr uint64_t kUnit = 512;  // the kernel counts partitions in 512-byte units

// msdos.c is_extended_partition(): DOS_EXTENDED, WIN98_EXTENDED, LINUX_EXTENDED.
bool IsExtendedType(uint8_t type) { return type == 0x05 || type == 0x0f || type == 0x85; }

struct Entry {
  uint8_t boot = 0;
  uint8_t type = 0;
  uint64_t start = 0;  // as stored (LBA, relative where the format says so)
  uint64_t size = 0;
};

uint32_t Le32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

// One 512-byte sector (read_part_sector() reads 512-byte units); empty past the end.
std::string ReadUnit(std::ifstream& f, uint64_t unit) {
  std::string b(kUnit, '\0');
  f.clear();
  f.seekg(static_cast<std::streamoff>(unit * kUnit));
  f.read(b.data(), static_cast<std::streamsize>(kUnit));
  if (f.gcount() != static_cast<std::streamsize>(kUnit)) return {};
  return b;
}

bool Magic(const std::string& b) {
  return b.size() == kUnit && static_cast<uint8_t>(b[510]) == 0x55 &&
         static_cast<uint8_t>(b[511]) == 0xAA;
}

Entry EntryAt(const std::string& b, int slot) {
  const size_t at = 0x1be + 16 * static_cast<size_t>(slot);
  return {static_cast<uint8_t>(b[at]), static_cast<uint8_t>(b[at + 4]), Le32(b, at + 8),
          Le32(b, at + 12)};
}

// parse_extended(): the chain from the extended partition's start; each EBR's data entries
// relative to the EBR, its link relative to the extended partition.
void ParseExtended(std::ifstream& f, uint64_t first_sector, uint64_t first_size, uint64_t ss,
                   std::vector<KernelPartition>* out) {
  uint64_t this_sector = first_sector;
  uint64_t this_size = first_size;
  int next = 5;
  for (int loopct = 0; loopct <= 100 && next < 256;) {
    ++loopct;
    const std::string data = ReadUnit(f, this_sector);
    if (!Magic(data)) return;
    for (int i = 0; i < 4; ++i) {
      const Entry e = EntryAt(data, i);
      if (e.size == 0 || IsExtendedType(e.type)) continue;
      const uint64_t offs = e.start * ss;
      const uint64_t size = e.size * ss;
      const uint64_t at = this_sector + offs;
      if (i >= 2 &&
          (offs + size > this_size || at < first_sector || at + size > first_sector + first_size)) {
        continue;  // "the 3rd and 4th entries sometimes contain random garbage"
      }
      out->push_back({next++, at, size});
      loopct = 0;
    }
    int link = -1;
    for (int i = 0; i < 4; ++i) {
      const Entry e = EntryAt(data, i);
      if (e.size != 0 && IsExtendedType(e.type)) {
        link = i;
        break;
      }
    }
    if (link < 0) return;
    const Entry e = EntryAt(data, link);
    this_sector = first_sector + e.start * ss;
    this_size = e.size * ss;
  }
}

bool Overlap(const KernelPartition& a, const KernelPartition& b) {
  return a.start < b.start + b.size && b.start < a.start + a.size;
}

// Lines of `text` that are not this machine's own noise (no udevadm: environment.md).
std::string Noise(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find("udevadm") != std::string::npos) continue;
    if (line.find("Re-reading the partition table failed") != std::string::npos) continue;
    if (line.empty()) continue;
    out += line + "\n";
  }
  return out;
}

struct Expected {
  KernelPartition p;
  bool extended = false;
};

// sfdisk's table, in 512-byte units, the extended partition as its node.
std::vector<Expected> SfdiskPartitions(const std::string& device, unsigned sector_size) {
  std::vector<Expected> out;
  const nlohmann::json t = SfdiskJson(device);
  const uint64_t u = sector_size / kUnit;
  for (const nlohmann::json& p : t["partitions"]) {
    const std::string node = p["node"];
    const int number = std::stoi(node.substr(node.find_last_not_of("0123456789") + 1));
    const std::string type = p.value("type", "");
    const bool extended =
        t.value("label", "") == "dos" && (type == "5" || type == "f" || type == "85");
    const uint64_t start = p["start"].get<uint64_t>() * u;
    uint64_t size = p["size"].get<uint64_t>() * u;
    if (extended) size = std::min(size, std::max<uint64_t>(u, 2));
    out.push_back({{number, start, size}, extended});
  }
  return out;
}

// The kernel's partitions of `loop` against sfdisk's table, after `who` added them.
void CompareKernel(const LoopDevice& loop, const std::vector<Expected>& want,
                   const std::string& who, unsigned sector_size,
                   std::vector<std::string>* problems) {
  for (const Expected& e : want) {
    const auto [start, size] = KernelStartSize(loop, e.p.number);
    if (e.extended) {
      // Registered as a node of a sector or two at its start (partx: 1 KiB; libparted: what
      // fits before the first logical partition).
      if (start == 0 && size == 0 && sector_size > kUnit) continue;  // see the header
      if (start != e.p.start || size == 0 || size > e.p.size) {
        problems->push_back(
            fmt::format("{}: the kernel has the extended partition {} at {}+{}, "
                        "sfdisk at {}+{}",
                        who, e.p.number, start, size, e.p.start, e.p.size));
      }
      continue;
    }
    if (start != e.p.start || size != e.p.size) {
      problems->push_back(fmt::format("{}: the kernel has partition {} at {}+{}, sfdisk at {}+{}",
                                      who, e.p.number, start, size, e.p.start, e.p.size));
    }
  }
}

}  // namespace

std::vector<KernelPartition> KernelMsdosPartitions(const std::string& image, unsigned sector_size) {
  std::vector<KernelPartition> out;
  std::ifstream f(image, std::ios::binary);
  if (!f) return out;
  const std::string data = ReadUnit(f, 0);
  if (!Magic(data)) return out;
  for (int slot = 0; slot < 4; ++slot) {
    const uint8_t boot = static_cast<uint8_t>(data[0x1be + 16 * slot]);
    if (boot != 0 && boot != 0x80) return out;  // a FAT boot sector, not a table
  }
  for (int slot = 0; slot < 4; ++slot) {
    if (EntryAt(data, slot).type == 0xEE) return out;  // a GPT's protective MBR
  }
  const uint64_t ss = std::max<uint64_t>(sector_size / kUnit, 1);
  std::vector<KernelPartition> logical;
  for (int slot = 0; slot < 4; ++slot) {
    const Entry e = EntryAt(data, slot);
    const uint64_t start = e.start * ss;
    const uint64_t size = e.size * ss;
    if (size == 0) continue;
    if (IsExtendedType(e.type)) {
      // "leave room for LILO": the node is max(sector_size, 2) units at most.
      out.push_back({slot + 1, start, std::min(size, std::max<uint64_t>(ss, 2))});
      ParseExtended(f, start, size, ss, &logical);
      continue;
    }
    out.push_back({slot + 1, start, size});
  }
  out.insert(out.end(), logical.begin(), logical.end());
  return out;
}

std::vector<std::string> TableReaderProblems(const LoopDevice& loop, unsigned sector_size) {
  std::vector<std::string> problems;
  const std::string dev = loop.path();
  auto run = [&](const std::vector<std::string>& argv) {
    CommandResult r = RunCommand(argv);
    if (r.exit_code != 0 || !Noise(r.err).empty()) {
      problems.push_back(fmt::format("{}: {}", argv.front(), Describe(argv, r)));
    }
    return r;
  };
  run({"sfdisk", "-d", dev});
  const std::vector<Expected> want = SfdiskPartitions(dev, sector_size);
  const bool dos = SfdiskJson(dev).value("label", "") == "dos";

  CommandResult fdisk = run({"fdisk", "-l", dev});
  for (const char* bad :
       {"does not start", "does not end", "not in disk order", "overlap", "arning"}) {
    if (fdisk.out.find(bad) != std::string::npos) {
      problems.push_back("fdisk -l says: " + fdisk.out);
      break;
    }
  }
  CommandResult parted = run({"parted", "-s", "-m", dev, "unit", "s", "print"});
  for (const Expected& e : want) {
    if (e.extended) continue;
    const std::string line = fmt::format("\n{}:{}s:", e.p.number, e.p.start * kUnit / sector_size);
    if (parted.out.find(line) == std::string::npos) {
      problems.push_back(fmt::format("parted does not list partition {} at sector {}: {}",
                                     e.p.number, e.p.start * kUnit / sector_size, parted.out));
    }
  }
  if (!dos) {
    CommandResult sgdisk = run({"sgdisk", "-v", dev});
    if (sgdisk.out.find("No problems found") == std::string::npos) {
      problems.push_back("sgdisk -v: " + sgdisk.out);
    }
  } else {
    // The kernel's own parser, from the disk's bytes.
    std::vector<KernelPartition> kernel = KernelMsdosPartitions(dev, sector_size);
    std::vector<KernelPartition> expected;
    for (const Expected& e : want) expected.push_back(e.p);
    auto by_number = [](const KernelPartition& a, const KernelPartition& b) {
      return a.number < b.number;
    };
    std::sort(kernel.begin(), kernel.end(), by_number);
    std::sort(expected.begin(), expected.end(), by_number);
    if (kernel != expected) {
      std::string k, s;
      for (const KernelPartition& p : kernel)
        k += fmt::format(" {}:{}+{}", p.number, p.start, p.size);
      for (const KernelPartition& p : expected)
        s += fmt::format(" {}:{}+{}", p.number, p.start, p.size);
      problems.push_back("the kernel's DOS parser reads" + k + "; sfdisk" + s);
    }
    for (size_t i = 0; i < kernel.size(); ++i) {
      for (size_t j = i + 1; j < kernel.size(); ++j) {
        if (Overlap(kernel[i], kernel[j])) {
          problems.push_back(fmt::format(
              "the kernel's partitions {} ({}+{}) and {} ({}+{}) overlap: BLKPG refuses the "
              "second (partx -a: Device or resource busy)",
              kernel[i].number, kernel[i].start, kernel[i].size, kernel[j].number, kernel[j].start,
              kernel[j].size));
        }
      }
    }
  }
  // partprobe, then partx, each on a device without partition nodes.
  (void)loop.DeletePartitions();
  run({"partprobe", dev});
  CompareKernel(loop, want, "partprobe", sector_size, &problems);
  (void)loop.DeletePartitions();
  CommandResult partx = RunCommand({"partx", "-a", dev});
  std::string partx_err;
  {
    std::istringstream in(Noise(partx.err));
    for (std::string line; std::getline(in, line);) {
      bool known = false;
      for (const Expected& e : want) {
        // The one failure of partx 2.38 on such a device (the header says why).
        known |=
            sector_size > kUnit && e.extended &&
            line.find(fmt::format("error adding partition {}", e.p.number)) != std::string::npos;
      }
      if (!known) partx_err += line + "\n";
    }
  }
  if (partx_err.empty() && sector_size > kUnit) partx.exit_code = 0;
  if (partx.exit_code != 0 || !partx_err.empty()) {
    problems.push_back("partx -a: " + Describe({"partx", "-a", dev}, partx));
  }
  CompareKernel(loop, want, "partx -a", sector_size, &problems);
  return problems;
}

}  // namespace partalign::test
