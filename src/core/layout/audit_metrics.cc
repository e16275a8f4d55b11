// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/audit_metrics.h"

#include <fmt/format.h>

#include <set>
#include <string_view>

namespace partalign {
namespace {

// The text format's escaping of label values: backslash, double quote and line feed.
std::string Escape(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Family(std::string& out, std::string_view name, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
}

}  // namespace

DiskMetrics MakeDiskMetrics(std::string device, const AuditReport& report, const DeviceInfo& info,
                            const std::vector<TopologyFinding>& findings) {
  DiskMetrics disk{.device = std::move(device),
                   .table = std::string(ToString(report.label)),
                   .transport = std::string(ToString(info.identity.transport)),
                   .model = info.identity.model,
                   .serial = info.identity.serial,
                   .logical_sector_bytes = report.topology.logical_sector_size,
                   .physical_sector_bytes = report.topology.physical_sector_size};
  for (const PartitionAudit& p : report.partitions) {
    disk.partitions.push_back({.number = p.number, .misaligned = !p.aligned});
  }
  for (const TopologyFinding& f : findings) disk.topology_warnings.push_back(f.code);
  return disk;
}

std::string PrometheusMetrics(const std::vector<DiskMetrics>& disks, int64_t run_unix_seconds) {
  std::vector<const DiskMetrics*> unique;
  std::set<std::string> seen;
  for (const DiskMetrics& d : disks) {
    if (seen.insert(d.device).second) unique.push_back(&d);
  }
  std::string out;
  Family(out, "partalign_partition_misaligned",
         "1 when partalign audit found the partition misaligned, else 0.");
  for (const DiskMetrics* d : unique) {
    std::set<uint32_t> numbers;
    for (const DiskMetrics::Partition& p : d->partitions) {
      if (!numbers.insert(p.number).second) continue;
      out += fmt::format("partalign_partition_misaligned{{device=\"{}\",partition=\"{}\"}} {}\n",
                         Escape(d->device), p.number, p.misaligned ? 1 : 0);
    }
  }
  Family(out, "partalign_topology_warning",
         "1 for each warning about the topology the disk reports (code: the warning's id).");
  for (const DiskMetrics* d : unique) {
    std::set<std::string> codes;
    for (const std::string& code : d->topology_warnings) {
      if (!codes.insert(code).second) continue;
      out += fmt::format("partalign_topology_warning{{device=\"{}\",code=\"{}\"}} 1\n",
                         Escape(d->device), Escape(code));
    }
  }
  Family(out, "partalign_disk_info", "The disk partalign audited: table, transport, identity.");
  for (const DiskMetrics* d : unique) {
    out += fmt::format(
        "partalign_disk_info{{device=\"{}\",table=\"{}\",transport=\"{}\",model=\"{}\","
        "serial=\"{}\",logical_sector_bytes=\"{}\",physical_sector_bytes=\"{}\"}} 1\n",
        Escape(d->device), Escape(d->table), Escape(d->transport), Escape(d->model),
        Escape(d->serial), d->logical_sector_bytes, d->physical_sector_bytes);
  }
  Family(out, "partalign_last_run_timestamp_seconds",
         "When partalign audit wrote these metrics, in seconds since the epoch.");
  out += fmt::format("partalign_last_run_timestamp_seconds {}\n", run_unix_seconds);
  return out;
}

}  // namespace partalign
