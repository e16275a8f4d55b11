// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/probe_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "partalign/topology/partition_node.h"

namespace partalign {
namespace {

DeviceInfo UsbDisk() {
  DeviceInfo d;
  d.topology.logical_sector_size = 512;
  d.topology.physical_sector_size = 4096;
  d.topology.minimum_io_size = 4096;
  d.topology.optimal_io_size = 33553920;
  d.topology.size_bytes = 2000398934016;
  d.topology.origin = TopologyOrigin::kKernel;
  d.identity.path = "/dev/sdb";
  d.identity.is_block_device = true;
  d.identity.kernel_name = "sdb";
  d.identity.transport = Transport::kUsb;
  d.identity.vendor = "WDC";
  d.identity.usb_bridge = UsbBridge{"152d", "0578", "JMicron", "USB to ATA/ATAPI Bridge", "uas"};
  d.identity.rotational = true;
  d.table.label = LabelType::kGpt;
  d.table.written_for_sector_size = 512;
  return d;
}

TEST(ProbeReportTest, JsonHasTheDocumentedKeysWithNumbersAsNumbers) {
  DeviceInfo d = UsbDisk();
  nlohmann::json j = ProbeJson(d, CheckDevice(d));
  EXPECT_EQ(j["schema_version"], kJsonSchemaVersion);
  const nlohmann::json& t = j["topology"];
  EXPECT_EQ(t["logical_sector_size"], 512);
  EXPECT_EQ(t["physical_sector_size"], 4096);
  EXPECT_EQ(t["minimum_io_size"], 4096);
  EXPECT_EQ(t["optimal_io_size"], 33553920);
  EXPECT_EQ(t["alignment_offset"], 0);
  EXPECT_EQ(t["size_bytes"], 2000398934016ull);
  EXPECT_EQ(t["transport"], "usb");
  EXPECT_EQ(t["source"], "kernel");
  EXPECT_EQ(t["usb_bridge"]["vendor_id"], "152d");
  EXPECT_EQ(t["table_type"], "gpt");
  EXPECT_EQ(t["table_sector_size"], 512);
  EXPECT_TRUE(t["serial"].is_null());
  ASSERT_TRUE(t["warnings"].is_array());
  ASSERT_EQ(t["warnings"].size(), t["warning_codes"].size());
  EXPECT_EQ(t["warning_codes"][0], "opt-io-bridge-0xffff");
  EXPECT_NE(t["warnings"][0].get<std::string>().find("33553920"), std::string::npos);
}

TEST(ProbeReportTest, FieldsAndJsonAgree) {
  DeviceInfo d = UsbDisk();
  nlohmann::json t = TopologyJson(d, {});
  std::map<std::string, std::string> fields;
  for (const ReportField& f : ProbeFields(d)) fields[f.name] = f.value;
  EXPECT_EQ(fields["LOG-SEC"], std::to_string(t["logical_sector_size"].get<uint64_t>()));
  EXPECT_EQ(fields["PHY-SEC"], std::to_string(t["physical_sector_size"].get<uint64_t>()));
  EXPECT_EQ(fields["MIN-IO"], std::to_string(t["minimum_io_size"].get<uint64_t>()));
  EXPECT_EQ(fields["OPT-IO"], std::to_string(t["optimal_io_size"].get<uint64_t>()));
  EXPECT_EQ(fields["ALIGNMENT"], std::to_string(t["alignment_offset"].get<uint64_t>()));
  EXPECT_EQ(fields["TRANSPORT"], t["transport"].get<std::string>());
  EXPECT_NE(fields["SIZE"].find(std::to_string(t["size_bytes"].get<uint64_t>())),
            std::string::npos);
  EXPECT_EQ(fields["USB-BRIDGE"], "152d:0578 JMicron USB to ATA/ATAPI Bridge (uas)");
  EXPECT_EQ(fields["TABLE"], "gpt (written for 512-byte sectors)");
  EXPECT_EQ(fields.count("SERIAL"), 0u);  // unknown fields are left out, not printed empty
}

TEST(ProbeReportTest, APartitionNodeNamesItsDisk) {
  DeviceInfo d = UsbDisk();
  d.identity.path = "/dev/sdb5";
  d.identity.kernel_name = "sdb5";
  d.identity.disk_name = "sdb";
  d.identity.is_partition = true;
  d.identity.partition_start_bytes = 2048 * 512;
  std::map<std::string, std::string> fields;
  for (const ReportField& f : ProbeFields(d)) fields[f.name] = f.value;
  EXPECT_EQ(fields["PARTITION-OF"], "/dev/sdb");
  // A whole disk has no such row.
  fields.clear();
  for (const ReportField& f : ProbeFields(UsbDisk())) fields[f.name] = f.value;
  EXPECT_EQ(fields.count("PARTITION-OF"), 0u);
}

// What a command that reads a table says of a partition node: the disk to give instead, and
// that audit checks the one partition.
TEST(ProbeReportTest, APartitionNodeIsRefusedNamingItsDisk) {
  PartitionNode node{"/dev/sdb5", "/dev/sdb", 5, 2048 * 512};
  EXPECT_EQ(PartitionNodeRefusal(node),
            "'/dev/sdb5' is partition 5 of the disk '/dev/sdb', not a disk: partition tables are "
            "read and written on the whole disk, give '/dev/sdb' ('partalign audit /dev/sdb5' "
            "checks this one partition)");
  node.number.reset();
  EXPECT_EQ(PartitionNodeRefusal(node).rfind("'/dev/sdb5' is partition of the disk", 0), 0u);
}

}  // namespace
}  // namespace partalign
