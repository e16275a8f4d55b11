// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/probe_report.h"

#include <fmt/format.h>

#include "partalign/util/json_util.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

std::string SizeWithBytes(uint64_t bytes) {
  return fmt::format("{} ({} bytes)", FormatSize(bytes), bytes);
}

}  // namespace

nlohmann::json TopologyJson(const DeviceInfo& device,
                            const std::vector<TopologyFinding>& findings) {
  const Topology& t = device.topology;
  const Identity& id = device.identity;
  nlohmann::json j;
  j["device"] = id.path;
  j["logical_sector_size"] = t.logical_sector_size;
  j["physical_sector_size"] = t.physical_sector_size;
  j["minimum_io_size"] = t.minimum_io_size;
  j["optimal_io_size"] = t.optimal_io_size;
  j["alignment_offset"] = t.alignment_offset;
  j["size_bytes"] = t.size_bytes;
  j["size_sectors"] = t.size_sectors();
  j["source"] = ToString(t.origin);
  j["transport"] = ToString(id.transport);
  j["is_block_device"] = id.is_block_device;
  j["is_partition"] = id.is_partition;
  j["kernel_name"] = StringOrNull(id.kernel_name);
  j["vendor"] = StringOrNull(id.vendor);
  j["model"] = StringOrNull(id.model);
  j["serial"] = StringOrNull(id.serial);
  j["wwn"] = StringOrNull(id.wwn);
  if (id.usb_bridge) {
    const UsbBridge& b = *id.usb_bridge;
    j["usb_bridge"] = {{"vendor_id", b.vendor_id},
                       {"product_id", b.product_id},
                       {"manufacturer", StringOrNull(b.manufacturer)},
                       {"product", StringOrNull(b.product)},
                       {"driver", StringOrNull(b.driver)}};
  } else {
    j["usb_bridge"] = nullptr;
  }
  j["rotational"] = OptionalJson(id.rotational);
  j["discard_granularity"] = OptionalJson(id.discard_granularity);
  j["backing_file"] = StringOrNull(id.backing_file);
  j["partition_start_bytes"] = OptionalJson(id.partition_start_bytes);
  j["table_type"] = ToString(device.table.label);
  j["table_sector_size"] = OptionalJson(device.table.written_for_sector_size);
  j["table_sector_size_reason"] = StringOrNull(device.table.written_for_reason);
  nlohmann::json warnings = nlohmann::json::array();
  nlohmann::json codes = nlohmann::json::array();
  for (const TopologyFinding& f : findings) {
    warnings.push_back(f.message);
    codes.push_back(f.code);
  }
  j["warnings"] = warnings;
  j["warning_codes"] = codes;
  return j;
}

nlohmann::json ProbeJson(const DeviceInfo& device, const std::vector<TopologyFinding>& findings) {
  return {{"schema_version", kJsonSchemaVersion},
          {"partalign_version", kVersion},
          {"topology", TopologyJson(device, findings)}};
}

std::vector<ReportField> ProbeFields(const DeviceInfo& device) {
  const Topology& t = device.topology;
  const Identity& id = device.identity;
  std::vector<ReportField> rows;
  auto add = [&](std::string name, std::string value) {
    if (!value.empty()) rows.push_back({std::move(name), std::move(value)});
  };
  add("DEVICE", id.path);
  add("SIZE", SizeWithBytes(t.size_bytes));
  add("LOG-SEC", std::to_string(t.logical_sector_size));
  add("PHY-SEC", std::to_string(t.physical_sector_size));
  add("MIN-IO", std::to_string(t.minimum_io_size));
  add("OPT-IO", std::to_string(t.optimal_io_size));
  add("ALIGNMENT", std::to_string(t.alignment_offset));
  add("SOURCE", std::string(ToString(t.origin)));
  add("TRANSPORT", std::string(ToString(id.transport)));
  add("VENDOR", id.vendor);
  add("MODEL", id.model);
  add("SERIAL", id.serial);
  add("WWN", id.wwn);
  if (id.usb_bridge) {
    const UsbBridge& b = *id.usb_bridge;
    std::string name = b.manufacturer;
    if (!b.product.empty()) name += (name.empty() ? "" : " ") + b.product;
    std::string bridge = fmt::format("{}:{}", b.vendor_id, b.product_id);
    if (!name.empty()) bridge += " " + name;
    if (!b.driver.empty()) bridge += " (" + b.driver + ")";
    add("USB-BRIDGE", bridge);
  }
  if (id.rotational) add("ROTA", *id.rotational ? "yes" : "no");
  if (id.discard_granularity) add("DISC-GRAN", std::to_string(*id.discard_granularity));
  add("BACKING-FILE", id.backing_file);
  if (id.is_partition) add("PARTITION-OF", "/dev/" + id.disk_name);
  if (id.partition_start_bytes) add("PART-START", SizeWithBytes(*id.partition_start_bytes));
  std::string table(ToString(device.table.label));
  if (device.table.written_for_sector_size) {
    table += fmt::format(" (written for {}-byte sectors)", *device.table.written_for_sector_size);
  }
  add("TABLE", table);
  return rows;
}

}  // namespace partalign
