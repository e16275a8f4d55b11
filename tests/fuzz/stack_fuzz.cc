// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the stack's pure parsers (docs/stack.md) on any bytes - the LVM2 PV label
// and metadata area header, the VG metadata text, MD version-1 superblocks, ext4/XFS
// superblocks. Any input: no crash, no sanitizer report, and what a parser accepts keeps its
// promises: areas and runs inside their bounds, segments that name listed PVs, an MD data area
// inside the member, filesystem blocks of a size mkfs writes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "partalign/stack/fs_geometry.h"
#include "partalign/stack/lvm_label.h"
#include "partalign/stack/lvm_vg_metadata.h"
#include "partalign/stack/md_superblock.h"
#include "partalign/util/byte_order.h"

namespace {

using namespace partalign;

void CheckLabel(std::span<const uint8_t> bytes) {
  Result<LvmLabel> label = ParseLvmLabel(bytes);
  if (!label) return;
  FUZZ_CHECK(label->label_sector < 4);
  FUZZ_CHECK(!label->data_areas.empty());
  if (label->device_size_bytes == 0) return;
  for (const LvmDiskArea& a : label->metadata_areas) {
    FUZZ_CHECK(a.offset_bytes < label->device_size_bytes);
    FUZZ_CHECK(a.size_bytes <= label->device_size_bytes - a.offset_bytes);
  }
}

void CheckMdaHeader(std::span<const uint8_t> bytes) {
  // The area the header claims, so that the cross-check with the label passes and the
  // location list is what gets exercised.
  const LvmDiskArea area{Le<uint64_t>(bytes, 24).value_or(0), Le<uint64_t>(bytes, 32).value_or(0)};
  Result<LvmMdaHeader> header = ParseLvmMdaHeader(bytes, area);
  if (!header) return;
  Result<std::vector<LvmDiskArea>> runs = LvmMetadataTextRuns(*header);
  if (!runs) return;
  uint64_t total = 0;
  for (const LvmDiskArea& r : *runs) {
    FUZZ_CHECK(r.offset_bytes >= header->start_bytes + kLvmMdaHeaderBytes);
    FUZZ_CHECK(r.offset_bytes - header->start_bytes + r.size_bytes <= header->size_bytes);
    total += r.size_bytes;
  }
  FUZZ_CHECK(runs->empty() || total == header->locations.front().size_bytes);
}

void CheckVg(std::string_view text) {
  Result<LvmVolumeGroup> vg = ParseLvmVgMetadata(text);
  if (!vg) return;
  FUZZ_CHECK(vg->extent_size_bytes != 0 && vg->extent_size_bytes % 512 == 0);
  for (const LvmLogicalVolume& lv : vg->logical_volumes) {
    for (const LvmSegment& s : lv.segments) {
      FUZZ_CHECK(s.stripes.empty() || s.stripes.size() == s.stripe_count);
      for (const LvmStripe& stripe : s.stripes) {
        bool listed = false;
        for (const LvmPhysicalVolume& pv : vg->physical_volumes)
          listed |= pv.name == stripe.pv_name;
        FUZZ_CHECK(listed);
      }
    }
  }
}

void CheckMd(std::span<const uint8_t> bytes, uint8_t selector) {
  const auto version = static_cast<MdSuperblockVersion>(selector % 3);
  const uint64_t size = Le<uint64_t>(bytes, 4088).value_or(64ull << 20);
  const uint64_t at = Le<uint64_t>(bytes, 144).value_or(0) * 512;  // pass the position check
  Result<MdSuperblock> sb = ParseMdSuperblock(bytes, version, at, size);
  if (!sb) return;
  FUZZ_CHECK(sb->data_offset_bytes <= size && sb->data_size_bytes <= size - sb->data_offset_bytes);
  FUZZ_CHECK(sb->raid_disks != 0);
  FUZZ_CHECK(!sb->striped() || sb->chunk_bytes != 0);
  FUZZ_CHECK(sb->data_disks() >= 1);
  FUZZ_CHECK(!sb->role || *sb->role <= 0xfffd);
}

void CheckFs(std::span<const uint8_t> bytes) {
  for (std::optional<FsGeometry> g :
       {ReadFsGeometry("ext4", bytes), ReadFsGeometry("xfs", bytes), DetectFsGeometry(bytes)}) {
    if (!g) continue;
    FUZZ_CHECK(g->block_size_bytes >= 512 && g->block_size_bytes <= 65536);
    FUZZ_CHECK((g->block_size_bytes & (g->block_size_bytes - 1)) == 0);
    FUZZ_CHECK(g->stripe_unit_bytes % g->block_size_bytes == 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  std::span<const uint8_t> bytes(data + 1, size - 1);
  switch (selector % 5) {
    case 0:
      CheckLabel(bytes);
      break;
    case 1:
      CheckMdaHeader(bytes);
      break;
    case 2:
      CheckVg(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      break;
    case 3:
      CheckMd(bytes, selector / 5);
      break;
    default:
      CheckFs(bytes);
      break;
  }
  return 0;
}
