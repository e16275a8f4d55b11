// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/audit_metrics.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace partalign {
namespace {

DiskMetrics Disk(std::string device) {
  return {.device = std::move(device),
          .table = "gpt",
          .transport = "sata",
          .model = "Disk",
          .serial = "S1",
          .logical_sector_bytes = 512,
          .physical_sector_bytes = 4096,
          .partitions = {{1, false}, {2, true}},
          .topology_warnings = {"opt-io-bridge-0xffff"}};
}

// Every sample line (not # comments), split into its series (name and labels) and value.
std::vector<std::pair<std::string, std::string>> Samples(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    samples.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return samples;
}

TEST(AuditMetricsTest, OneSeriesPerPartitionWarningAndDisk) {
  std::string text = PrometheusMetrics({Disk("sda"), Disk("nvme0n1")}, 1795000000);
  auto samples = Samples(text);
  std::set<std::string> series;
  for (const auto& [name, value] : samples) series.insert(name);
  EXPECT_EQ(series.size(), samples.size()) << text;
  EXPECT_NE(text.find("partalign_partition_misaligned{device=\"sda\",partition=\"2\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("partalign_partition_misaligned{device=\"nvme0n1\",partition=\"1\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("partalign_topology_warning{device=\"sda\",code=\"opt-io-bridge-0xffff\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("physical_sector_bytes=\"4096\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("partalign_last_run_timestamp_seconds 1795000000\n"), std::string::npos);
  // 2 partitions + 1 warning + 1 info per disk, and the timestamp.
  EXPECT_EQ(samples.size(), 2u * 4u + 1u) << text;
}

TEST(AuditMetricsTest, ARepeatedDeviceOrWarningGivesNoDuplicateSeries) {
  DiskMetrics twice = Disk("sda");
  twice.topology_warnings.push_back("opt-io-bridge-0xffff");
  DiskMetrics other_view = Disk("sda");
  other_view.partitions = {{1, true}};
  std::string text = PrometheusMetrics({twice, other_view}, 1);
  auto samples = Samples(text);
  std::set<std::string> series;
  for (const auto& [name, value] : samples) series.insert(name);
  EXPECT_EQ(series.size(), samples.size()) << text;
  EXPECT_EQ(samples.size(), 5u) << text;
  // The first view of the disk is kept.
  EXPECT_NE(text.find("{device=\"sda\",partition=\"1\"} 0\n"), std::string::npos) << text;
}

TEST(AuditMetricsTest, FamiliesAreContiguousWithHelpAndType) {
  std::string text = PrometheusMetrics({Disk("sda"), Disk("sdb")}, 1);
  for (const char* name : {"partalign_partition_misaligned", "partalign_topology_warning",
                           "partalign_disk_info", "partalign_last_run_timestamp_seconds"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name + " gauge\n"), std::string::npos) << name;
  }
  // Samples of one family never come after another family began.
  std::vector<std::string> order;
  for (const auto& [series, value] : Samples(text)) {
    std::string name = series.substr(0, series.find('{'));
    if (order.empty() || order.back() != name) order.push_back(name);
  }
  EXPECT_EQ(order.size(), 4u) << text;
}

TEST(AuditMetricsTest, LabelValuesAreEscaped) {
  DiskMetrics d = Disk("sda");
  d.model = "A \"quoted\"\\model\nnext";
  std::string text = PrometheusMetrics({d}, 1);
  EXPECT_NE(text.find("model=\"A \\\"quoted\\\"\\\\model\\nnext\""), std::string::npos) << text;
}

}  // namespace
}  // namespace partalign
