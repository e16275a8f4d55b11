// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/boot_disks.h"

#include <fcntl.h>
#include <unistd.h>

#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/boot/boot_records.h"
#include "io/util/unique_fd.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/sfdisk.h"

namespace partalign::test {
namespace {

UniqueFd OpenOrThrow(const std::string& target, int flags) {
  UniqueFd fd(::open(target.c_str(), flags | O_CLOEXEC));
  if (!fd.valid()) throw std::runtime_error("cannot open '" + target + "'");
  return fd;
}

void PreadAll(int fd, uint8_t* buf, size_t n, uint64_t at) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, buf + done, n - done, static_cast<off_t>(at + done));
    if (got <= 0) throw std::runtime_error(fmt::format("pread at byte {} failed", at + done));
    done += static_cast<size_t>(got);
  }
}

void PwriteAll(int fd, const uint8_t* buf, size_t n, uint64_t at) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pwrite(fd, buf + done, n - done, static_cast<off_t>(at + done));
    if (got <= 0) throw std::runtime_error(fmt::format("pwrite at byte {} failed", at + done));
    done += static_cast<size_t>(got);
  }
}

uint64_t TargetSize(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) throw std::runtime_error("cannot size a boot test's disk");
  return static_cast<uint64_t>(end);
}

}  // namespace

void MoveSectors(const std::string& target, unsigned sector_size, uint64_t old_start,
                 uint64_t new_start, uint64_t count, bool wipe_old) {
  UniqueFd fd = OpenOrThrow(target, O_RDWR);
  const uint64_t chunk_sectors = 2048;
  std::vector<uint8_t> buf(chunk_sectors * sector_size);
  auto copy = [&](uint64_t from_sector, uint64_t n) {
    PreadAll(fd.get(), buf.data(), n * sector_size, (old_start + from_sector) * sector_size);
    PwriteAll(fd.get(), buf.data(), n * sector_size, (new_start + from_sector) * sector_size);
  };
  if (new_start > old_start) {
    for (uint64_t done = 0; done < count;) {
      const uint64_t n = std::min(chunk_sectors, count - done);
      copy(count - done - n, n);
      done += n;
    }
  } else {
    for (uint64_t done = 0; done < count;) {
      const uint64_t n = std::min(chunk_sectors, count - done);
      copy(done, n);
      done += n;
    }
  }
  if (wipe_old) {
    std::fill(buf.begin(), buf.end(), 0);
    for (uint64_t s = old_start; s < old_start + count;) {
      const bool covered = s >= new_start && s < new_start + count;
      if (covered) {
        s = new_start + count;
        continue;
      }
      const uint64_t limit =
          s < new_start ? std::min(old_start + count, new_start) : old_start + count;
      const uint64_t n = std::min(chunk_sectors, limit - s);
      PwriteAll(fd.get(), buf.data(), n * sector_size, s * sector_size);
      s += n;
    }
  }
  if (::fsync(fd.get()) != 0) throw std::runtime_error("fsync '" + target + "'");
}

void RewritePartition(const std::string& target, uint32_t number, uint64_t new_start,
                      uint64_t new_size) {
  CommandResult dump = RunCommand({"sfdisk", "-d", target});
  if (dump.exit_code != 0) throw std::runtime_error(Describe({"sfdisk", "-d", target}, dump));
  std::istringstream in(dump.out);
  std::string line, script;
  const std::regex entry(R"(^(\S+?)(\d+) : start=\s*\d+, size=\s*\d+,(.*)$)");
  bool found = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, entry) && std::stoul(m[2]) == number) {
      line = fmt::format("{}{} : start={}, size={},{}", m[1].str(), m[2].str(), new_start, new_size,
                         m[3].str());
      found = true;
    }
    script += line + "\n";
  }
  if (!found) throw std::runtime_error(fmt::format("'{}' has no partition {}", target, number));
  CommandResult r = WriteWithSfdisk(target, script);
  if (r.exit_code != 0) throw std::runtime_error(Describe({"sfdisk", target}, r) + "\n" + script);
}

BootDisk BootDiskBySfdisk(const std::string& target, unsigned sector_size) {
  const nlohmann::json t = SfdiskJson(target);
  BootDisk disk;
  disk.sector_size = sector_size;
  disk.label = t["label"] == "gpt" ? LabelType::kGpt : LabelType::kDos;
  // sfdisk prints the DOS identifier as "0x1234abcd", the GPT GUID in upper case.
  disk.disk_id = t.value("id", "");
  for (const nlohmann::json& p : t["partitions"]) {
    const std::string node = p["node"];
    size_t digits = node.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(node[digits - 1]))) --digits;
    BootPartition b;
    b.number = static_cast<uint32_t>(std::stoul(node.substr(digits)));
    b.start_sector = p["start"];
    b.size_sectors = p["size"];
    const std::string type = p["type"];
    // As partalign reads tables: GPT GUIDs in upper case, DOS types as "0x07".
    b.type_code =
        disk.label == LabelType::kGpt ? UpperTypeCode(type) : fmt::format("0x{:0>2}", type);
    b.uuid = UpperTypeCode(p.value("uuid", ""));
    b.bootable = p.value("bootable", false) ||
                 p.value("attrs", "").find("LegacyBIOSBootable") != std::string::npos;
    b.extended = disk.label == LabelType::kDos && (type == "5" || type == "f" || type == "85");
    disk.partitions.push_back(b);
  }
  return disk;
}

BootReport ScanBoot(const std::string& target, const BootDisk& table,
                    const std::vector<PartitionMove>& moves, bool allow_reinstall) {
  UniqueFd fd = OpenOrThrow(target, O_RDONLY);
  Result<BootReport> r =
      ScanBootRecords(fd.get(), target, TargetSize(fd.get()), table, moves, {allow_reinstall});
  if (!r) throw std::runtime_error(r.error().message);
  return *r;
}

void ApplyBootEdits(const std::string& target, unsigned sector_size, const BootReport& report,
                    const std::map<uint32_t, uint64_t>& starts) {
  std::map<uint32_t, uint64_t> bytes;
  for (const auto& [number, start] : starts) bytes[number] = start * sector_size;
  UniqueFd fd = OpenOrThrow(target, O_RDWR);
  const std::vector<ByteEdit> edits = report.Edits();
  if (Status s = WriteByteEdits(fd.get(), target, edits, bytes); !s) {
    throw std::runtime_error(s.error().message);
  }
}

std::string DescribeReport(const BootReport& report) {
  std::string out;
  for (const BootFinding& f : report.findings) {
    out += fmt::format("{} {} {}: {}{}\n", f.partition, ToString(f.kind), ToString(f.verdict),
                       f.description, f.reason.empty() ? "" : " [" + f.reason + "]");
  }
  return out;
}

FuseMount::FuseMount(const std::string& helper, const std::string& device,
                     const std::string& directory)
    : directory_(directory) {
  RunOrThrow({"mkdir", "-p", directory});
  RunOrThrow({helper, device, directory});
}

FuseMount::~FuseMount() { RunCommand({"umount", directory_}); }

std::vector<uint8_t> ReadBytes(const std::string& target, uint64_t offset, uint64_t count) {
  UniqueFd fd = OpenOrThrow(target, O_RDONLY);
  std::vector<uint8_t> out(count);
  PreadAll(fd.get(), out.data(), count, offset);
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> DifferingRuns(const std::vector<uint8_t>& a,
                                                         const std::vector<uint8_t>& b) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (!out.empty() && out.back().second + 1 == i) {
      out.back().second = i;
    } else {
      out.emplace_back(i, i);
    }
  }
  return out;
}

}  // namespace partalign::test
