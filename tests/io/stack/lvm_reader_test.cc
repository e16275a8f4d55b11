// SPDX-License-Identifier: GPL-3.0-or-later
// partalign's own LVM2 reader against what lvm2 itself reports (pvs/lvs --reportformat json),
// on PVs made by the real pvcreate/vgcreate/lvcreate on loop devices (activation off: there is
// no device-mapper here).
#include "io/stack/lvm_reader.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/device/target.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::LvmBytes;
using test::LvmReport;
using test::RunLvmOrThrow;

constexpr uint64_t kPvBytes = 64ull << 20;

Result<LvmPvRead> Read(const std::string& device) {
  Result<Target> t = OpenTarget(device);
  if (!t) return t.error();
  return ReadLvmPv(t->fd.get(), device, 0, t->size_bytes);
}

class LvmReaderTest : public testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    for (const char* name : {"a.img", "b.img"}) {
      test::CreateSparseFile(dir_.File(name), kPvBytes);
      loops_.push_back(std::make_unique<test::LoopDevice>(dir_.File(name), 512));
      devices_.push_back(loops_.back()->path());
    }
  }
  test::TempDir dir_;
  std::vector<std::unique_ptr<test::LoopDevice>> loops_;
  std::vector<std::string> devices_;
};

TEST_F(LvmReaderTest, ReadsWhatPvsAndLvsReport) {
  const std::string vg = test::UniqueVgName("r");
  RunLvmOrThrow("pvcreate", {"-q", "--dataalignment", "768k", devices_[0]}, devices_);
  RunLvmOrThrow("pvcreate", {"-q", devices_[1]}, devices_);
  RunLvmOrThrow("vgcreate", {"-q", "-s", "4m", vg, devices_[0], devices_[1]}, devices_);
  RunLvmOrThrow("lvcreate", {"-q", "-an", "-Zn", "-L", "8m", "-n", "lin", vg}, devices_);
  RunLvmOrThrow("lvcreate",
                {"-q", "-an", "-Zn", "-i", "2", "-I", "16", "-L", "16m", "-n", "str", vg},
                devices_);

  Result<LvmPvRead> pv = Read(devices_[0]);
  ASSERT_TRUE(pv) << pv.error().message;
  ASSERT_TRUE(pv->vg);
  nlohmann::json pvs = LvmReport("pvs", "pv_name,pe_start,vg_extent_size,pv_uuid", devices_);
  for (const nlohmann::json& row : pvs) {
    if (row["pv_name"] != devices_[0]) continue;
    EXPECT_EQ(pv->label.pe_start_bytes(), LvmBytes(row["pe_start"]));
    EXPECT_EQ(pv->label.pe_start_bytes(), 1572864u);  // 768 KiB rounded past the metadata
    EXPECT_EQ(pv->vg->extent_size_bytes, LvmBytes(row["vg_extent_size"]));
    EXPECT_EQ(FormatLvmUuid(pv->label.pv_uuid), row["pv_uuid"]);
  }
  nlohmann::json segs =
      LvmReport("lvs", "lv_name,seg_start_pe,stripes,stripe_size,devices", devices_, true);
  ASSERT_EQ(segs.size(), 2u);
  for (const nlohmann::json& row : segs) {
    const LvmLogicalVolume* lv = nullptr;
    for (const LvmLogicalVolume& l : pv->vg->logical_volumes) {
      if (l.name == row["lv_name"]) lv = &l;
    }
    ASSERT_NE(lv, nullptr) << row;
    ASSERT_EQ(lv->segments.size(), 1u);
    const LvmSegment& seg = lv->segments[0];
    EXPECT_EQ(seg.stripe_count, std::stoull(row["stripes"].get<std::string>()));
    EXPECT_EQ(seg.stripe_size_bytes, LvmBytes(row["stripe_size"]));
    // "devices": "/dev/loop1(0),/dev/loop2(0)": the PVs and first extents of the stripes.
    std::string devices;
    for (const LvmStripe& s : seg.stripes) {
      const LvmPhysicalVolume* p = nullptr;
      for (const LvmPhysicalVolume& q : pv->vg->physical_volumes) {
        if (q.name == s.pv_name) p = &q;
      }
      ASSERT_NE(p, nullptr);
      devices +=
          (devices.empty() ? "" : ",") + p->device + "(" + std::to_string(s.start_extent) + ")";
    }
    EXPECT_EQ(devices, row["devices"]);
  }
}

TEST_F(LvmReaderTest, AnOrphanPvHasNoVg) {
  RunLvmOrThrow("pvcreate", {"-q", devices_[0]}, devices_);
  Result<LvmPvRead> pv = Read(devices_[0]);
  ASSERT_TRUE(pv) << pv.error().message;
  EXPECT_FALSE(pv->vg);
  EXPECT_EQ(pv->label.pe_start_bytes(), 1048576u);
}

TEST_F(LvmReaderTest, ADamagedMetadataTextIsRefused) {
  const std::string vg = test::UniqueVgName("d");
  RunLvmOrThrow("pvcreate", {"-q", devices_[0]}, devices_);
  RunLvmOrThrow("vgcreate", {"-q", vg, devices_[0]}, devices_);
  // Flip bytes in the metadata text area (after the 512-byte header at 4096): the checksum of
  // the committed copy no longer matches.
  const std::string area =
      test::RunCommand({"dd", "if=" + devices_[0], "bs=4096", "skip=1", "count=16", "status=none"})
          .out;
  ASSERT_NE(area.find(vg), std::string::npos);
  for (size_t at = area.find("extent_size"); at != std::string::npos;
       at = area.find("extent_size", at + 1)) {
    test::WriteBytesAt(devices_[0], 4096 + at, {'X', 'X'});
  }
  Result<LvmPvRead> pv = Read(devices_[0]);
  ASSERT_FALSE(pv);
  EXPECT_NE(pv.error().message.find("checksum mismatch"), std::string::npos) << pv.error().message;
}

}  // namespace
}  // namespace partalign
