// SPDX-License-Identifier: GPL-3.0-or-later
// ReadSysfsIdentity against fake sysfs trees shaped like real ones (no root needed).
#include "io/device/sysfs_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

class FakeSysfs {
 public:
  void Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(dir_.path()) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void Link(const std::string& rel, const std::string& target) {
    fs::path p = fs::path(dir_.path()) / rel;
    fs::create_directories(p.parent_path());
    fs::create_symlink(target, p);
  }
  std::string root() const { return dir_.path(); }

 private:
  test::TempDir dir_;
};

TEST(SysfsIdentityTest, UsbDiskBehindAJMicronBridge) {
  FakeSysfs sys;
  const std::string usb = "devices/pci0000:00/0000:00:14.0/usb2/2-1";
  const std::string disk = usb + "/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb";
  sys.Write(usb + "/idVendor", "152d\n");
  sys.Write(usb + "/idProduct", "0578\n");
  sys.Write(usb + "/manufacturer", "JMicron\n");
  sys.Write(usb + "/product", "USB to ATA/ATAPI Bridge\n");
  sys.Link(usb + "/2-1:1.0/driver", "../../../../../../bus/usb/drivers/uas");
  sys.Write(disk + "/queue/rotational", "1\n");
  sys.Write(disk + "/queue/discard_granularity", "0\n");
  sys.Write(disk + "/alignment_offset", "0\n");
  sys.Write(usb + "/2-1:1.0/host6/target6:0:0/6:0:0:0/vendor", "WDC     \n");
  sys.Write(usb + "/2-1:1.0/host6/target6:0:0/6:0:0:0/model", "WD20EARS-00MVWB0\n");
  sys.Link(disk + "/device", "../../../6:0:0:0");
  sys.Link("dev/block/8:16", "../../" + disk);

  Result<Identity> id = ReadSysfsIdentity(sys.root(), 8, 16);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->kernel_name, "sdb");
  EXPECT_FALSE(id->is_partition);
  EXPECT_EQ(id->transport, Transport::kUsb);
  EXPECT_EQ(id->vendor, "WDC");
  EXPECT_EQ(id->model, "WD20EARS-00MVWB0");
  ASSERT_TRUE(id->usb_bridge);
  EXPECT_EQ(id->usb_bridge->vendor_id, "152d");
  EXPECT_EQ(id->usb_bridge->product_id, "0578");
  EXPECT_EQ(id->usb_bridge->manufacturer, "JMicron");
  EXPECT_EQ(id->usb_bridge->driver, "uas");
  EXPECT_EQ(id->rotational, true);
  EXPECT_EQ(id->discard_granularity, 0u);
}

TEST(SysfsIdentityTest, PartitionOfANvmeDiskTakesQueueValuesFromItsDisk) {
  FakeSysfs sys;
  const std::string disk = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1";
  sys.Write(disk + "/queue/rotational", "0\n");
  sys.Write(disk + "/queue/discard_granularity", "512\n");
  sys.Write(disk + "/wwid", "eui.0025388b91b3a2f1\n");
  sys.Write(disk + "/nvme0n1p2/partition", "2\n");
  sys.Write(disk + "/nvme0n1p2/start", "1050624\n");
  sys.Write(disk + "/nvme0n1p2/alignment_offset", "0\n");
  sys.Write("devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/model", "Samsung SSD 970\n");
  sys.Write("devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/serial", "S4EWNX0N123\n");
  sys.Link(disk + "/device", "../../nvme0");
  sys.Link("dev/block/259:2", "../../" + disk + "/nvme0n1p2");

  Result<Identity> id = ReadSysfsIdentity(sys.root(), 259, 2);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_TRUE(id->is_partition);
  EXPECT_EQ(id->kernel_name, "nvme0n1p2");
  EXPECT_EQ(id->disk_name, "nvme0n1");
  EXPECT_EQ(id->transport, Transport::kNvme);
  EXPECT_EQ(id->partition_start_bytes, 1050624ull * 512);
  EXPECT_EQ(id->rotational, false);
  EXPECT_EQ(id->discard_granularity, 512u);
  EXPECT_EQ(id->model, "Samsung SSD 970");
  EXPECT_EQ(id->serial, "S4EWNX0N123");
  EXPECT_EQ(id->wwn, "eui.0025388b91b3a2f1");
  EXPECT_FALSE(id->usb_bridge);
}

TEST(SysfsIdentityTest, SataDiskSerialFromVpdPage80AndMisalignedStack) {
  FakeSysfs sys;
  const std::string dev = "devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0";
  sys.Write(dev + "/vendor", "ATA     \n");
  sys.Write(dev + "/model", "ST2000DM008-2FR1\n");
  sys.Write(dev + "/vpd_pg80", std::string("\0\x80\0\x08ZFL1ABCD", 12));
  sys.Write(dev + "/block/sda/alignment_offset", "-1\n");
  sys.Link(dev + "/block/sda/device", "../../../2:0:0:0");
  sys.Link("dev/block/8:0", "../../" + dev + "/block/sda");

  Result<Identity> id = ReadSysfsIdentity(sys.root(), 8, 0);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->transport, Transport::kSata);
  EXPECT_EQ(id->serial, "ZFL1ABCD");
  EXPECT_EQ(id->sysfs_alignment_offset, -1);
}

TEST(SysfsIdentityTest, LoopDeviceReportsItsBackingFile) {
  FakeSysfs sys;
  sys.Write("devices/virtual/block/loop3/loop/backing_file", "/tmp/disk.img\n");
  sys.Write("devices/virtual/block/loop3/queue/rotational", "1\n");
  sys.Link("dev/block/7:3", "../../devices/virtual/block/loop3");
  Result<Identity> id = ReadSysfsIdentity(sys.root(), 7, 3);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->transport, Transport::kLoop);
  EXPECT_EQ(id->backing_file, "/tmp/disk.img");
}

TEST(SysfsIdentityTest, UnknownDeviceNumberIsAnErrorNamingIt) {
  FakeSysfs sys;
  sys.Write("dev/block/.keep", "");
  Result<Identity> id = ReadSysfsIdentity(sys.root(), 240, 99);
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("240:99"), std::string::npos) << id.error().message;
}

}  // namespace
}  // namespace partalign
