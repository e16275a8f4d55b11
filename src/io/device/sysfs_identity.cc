// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/sysfs_identity.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "io/device/target.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadAttribute(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string value = buffer.str();
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ' || value.back() == '\0')) {
    value.pop_back();
  }
  size_t start = value.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : value.substr(start);
}

std::string ReadString(const fs::path& path) { return ReadAttribute(path).value_or(""); }

std::optional<uint64_t> ReadNumber(const fs::path& path) {
  std::optional<std::string> text = ReadAttribute(path);
  if (!text) return std::nullopt;
  Result<uint64_t> value = ParseUint(*text);
  return value ? std::optional<uint64_t>(*value) : std::nullopt;
}

// SCSI VPD page 0x80 (unit serial number): 4-byte header, then the ASCII serial.
std::string ReadVpdSerial(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() <= 4) return "";
  std::string serial = bytes.substr(4);
  while (!serial.empty() && (serial.back() == ' ' || serial.back() == '\0')) serial.pop_back();
  size_t start = serial.find_first_not_of(' ');
  return start == std::string::npos ? "" : serial.substr(start);
}

Transport TransportFromPath(const std::string& device_path, const std::string& disk_name) {
  if (disk_name.rfind("loop", 0) == 0) return Transport::kLoop;
  if (device_path.find("/usb") != std::string::npos) return Transport::kUsb;
  if (device_path.find("/nvme") != std::string::npos) return Transport::kNvme;
  if (device_path.find("/virtio") != std::string::npos) return Transport::kVirtio;
  if (device_path.find("/mmc_host") != std::string::npos) return Transport::kMmc;
  if (device_path.find("/ata") != std::string::npos) return Transport::kSata;
  if (device_path.find("/host") != std::string::npos) return Transport::kScsi;
  return Transport::kUnknown;
}

// The nearest ancestor that is a USB device (has idVendor and idProduct), and the driver of
// the interface below it (uas or usb-storage).
std::optional<UsbBridge> FindUsbBridge(const fs::path& disk_dir, const fs::path& devices_root) {
  std::string driver;
  for (fs::path dir = disk_dir; !dir.empty() && dir != devices_root && dir != dir.parent_path();
       dir = dir.parent_path()) {
    std::error_code ec;
    fs::path driver_link = dir / "driver";
    if (driver.empty() && fs::is_symlink(driver_link, ec)) {
      std::string name = fs::read_symlink(driver_link, ec).filename().string();
      if (name == "uas" || name == "usb-storage") driver = name;
    }
    if (fs::exists(dir / "idVendor", ec) && fs::exists(dir / "idProduct", ec)) {
      UsbBridge bridge;
      bridge.vendor_id = ReadString(dir / "idVendor");
      bridge.product_id = ReadString(dir / "idProduct");
      bridge.manufacturer = ReadString(dir / "manufacturer");
      bridge.product = ReadString(dir / "product");
      bridge.driver = driver;
      return bridge;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<Identity> ReadSysfsIdentity(const std::string& sysfs_root, uint32_t major, uint32_t minor) {
  const fs::path root(sysfs_root);
  const fs::path link = root / "dev" / "block" / fmt::format("{}:{}", major, minor);
  std::error_code ec;
  fs::path dev_dir = fs::canonical(link, ec);
  if (ec) {
    return ErrnoError(ec.value(), fmt::format("cannot find block device {}:{} in '{}'", major,
                                              minor, (root / "dev" / "block").string()));
  }
  Identity id;
  id.is_block_device = true;
  id.major = major;
  id.minor = minor;
  id.kernel_name = dev_dir.filename().string();
  id.is_partition = fs::exists(dev_dir / "partition", ec);
  const fs::path disk_dir = id.is_partition ? dev_dir.parent_path() : dev_dir;
  id.disk_name = disk_dir.filename().string();
  if (id.is_partition) {
    // sysfs "start" is in 512-byte units whatever the logical sector size.
    if (std::optional<uint64_t> start = ReadNumber(dev_dir / "start")) {
      id.partition_start_bytes = *start * 512;
    }
  }
  if (std::optional<std::string> off = ReadAttribute(dev_dir / "alignment_offset")) {
    try {
      id.sysfs_alignment_offset = std::stoll(*off);
    } catch (...) {
      // Unparsable attribute: leave it unknown.
    }
  }
  if (std::optional<uint64_t> rota = ReadNumber(disk_dir / "queue" / "rotational")) {
    id.rotational = *rota != 0;
  }
  id.discard_granularity = ReadNumber(disk_dir / "queue" / "discard_granularity");
  id.backing_file = ReadString(disk_dir / "loop" / "backing_file");

  const fs::path device = disk_dir / "device";
  id.vendor = ReadString(device / "vendor");
  id.model = ReadString(device / "model");
  id.serial = ReadString(device / "serial");  // NVMe, virtio-blk's device dir has none
  if (id.serial.empty()) id.serial = ReadString(disk_dir / "serial");     // virtio-blk
  if (id.serial.empty()) id.serial = ReadVpdSerial(device / "vpd_pg80");  // SCSI, SATA via libata
  id.wwn = ReadString(disk_dir / "wwid");
  if (id.wwn.empty()) id.wwn = ReadString(device / "wwid");

  const std::string disk_path = disk_dir.string();
  id.transport = TransportFromPath(disk_path, id.disk_name);
  if (id.transport == Transport::kUsb) id.usb_bridge = FindUsbBridge(disk_dir, root / "devices");
  return id;
}

Result<std::optional<PartitionNode>> PartitionNodeOfDevice(uint32_t major, uint32_t minor,
                                                           const std::string& sysfs_root) {
  Result<Identity> id = ReadSysfsIdentity(sysfs_root, major, minor);
  if (!id) return id.error();
  if (!id->is_partition) return std::optional<PartitionNode>();
  PartitionNode node;
  node.disk = "/dev/" + id->disk_name;
  node.start_bytes = id->partition_start_bytes.value_or(0);
  const fs::path dir = fs::path(sysfs_root) / "dev" / "block" / fmt::format("{}:{}", major, minor);
  if (std::optional<uint64_t> number = ReadNumber(dir / "partition")) {
    node.number = static_cast<uint32_t>(*number);
  }
  return std::optional<PartitionNode>(std::move(node));
}

Result<std::optional<PartitionNode>> PartitionNodeOf(const std::string& path,
                                                     const std::string& sysfs_root) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  if (target->kind != TargetKind::kBlockDevice) return std::optional<PartitionNode>();
  Result<std::optional<PartitionNode>> node =
      PartitionNodeOfDevice(target->major, target->minor, sysfs_root);
  if (node && *node) (*node)->path = path;
  return node;
}

}  // namespace partalign
