// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the user-number parsers (--assume SPEC, --layout SPEC, sizes) and what is
// computed from what they accept. Any input: no crash, no sanitizer report, and no wrapped
// arithmetic where it can be seen: an accepted topology is one ValidateTopology accepts, a
// recommended grain is a multiple of everything it was raised for, a layout's partitions lie
// inside the usable area in order without overlaps, each at least as large as asked.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "partalign/layout/layout_spec.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/topology_check.h"
#include "partalign/topology/topology_spec.h"
#include "partalign/util/sfdisk_size.h"
#include "partalign/util/units.h"

namespace {

using namespace partalign;

void CheckAlignment(const Topology& t, std::optional<uint64_t> grain) {
  if (!CheckGrainFits(t, grain)) return;
  const Alignment a = RecommendAlignment(t, grain).alignment;
  FUZZ_CHECK(a.grain_bytes != 0);
  FUZZ_CHECK(a.grain_bytes % t.logical_sector_size == 0);
  FUZZ_CHECK(a.grain_bytes % t.physical_sector_size == 0);
  FUZZ_CHECK(t.minimum_io_size == 0 || a.grain_bytes % t.minimum_io_size == 0);
  FUZZ_CHECK(a.grain_bytes % grain.value_or(kDefaultGrainBytes) == 0);
  FUZZ_CHECK(a.offset_bytes < a.grain_bytes);
}

void CheckLayout(const LayoutSpec& spec, uint64_t disk_sectors, uint64_t ss, const Alignment& a) {
  Result<PlanLayout> layout = MakeLayout(spec, disk_sectors, ss, a);
  if (!layout) return;
  FUZZ_CHECK(layout->partitions.size() == spec.items.size());
  uint64_t previous_end = 0;
  for (size_t i = 0; i < layout->partitions.size(); ++i) {
    const LayoutPartition& p = layout->partitions[i];
    FUZZ_CHECK(p.start_sector <= p.end_sector);
    FUZZ_CHECK(p.end_sector < disk_sectors);
    FUZZ_CHECK(p.start_sector >= layout->first_usable_lba);
    FUZZ_CHECK(p.end_sector <= layout->last_usable_lba);
    FUZZ_CHECK(i == 0 || p.start_sector > previous_end);
    FUZZ_CHECK(a.IsAligned(p.start_sector * ss));
    const std::optional<uint64_t> asked = spec.items[i].SizeBytes(ss);
    FUZZ_CHECK(!asked || (p.end_sector - p.start_sector + 1) * ss >= *asked);
    previous_end = p.end_sector;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseSize(text);
  if (Result<SfdiskSize> parsed = ParseSfdiskSize(text); parsed && parsed->sectors) {
    FUZZ_CHECK(parsed->Bytes(512).has_value() == (parsed->value <= UINT64_MAX / 512));
  }
  (void)ParseUint(text);

  Result<TopologyOverride> assume = ParseTopologySpec(text, BuiltinProfiles());
  if (assume) {
    Topology kernel = DefaultTopology(512, 1ull << 40);
    kernel.origin = TopologyOrigin::kKernel;
    for (const Topology& base :
         {DefaultTopology(512, 64ull << 20), kernel, DefaultTopology(4096, 8ull << 30)}) {
      Result<Topology> t = ApplyOverride(base, *assume);
      if (!t) continue;
      FUZZ_CHECK(ValidateTopology(*t));
      (void)CheckTopology(*t);
      for (std::optional<uint64_t> grain :
           {std::optional<uint64_t>(), std::optional<uint64_t>(kGiB - 512),
            std::optional<uint64_t>(1000)}) {
        CheckAlignment(*t, grain);
      }
    }
  }

  Result<LayoutSpec> layout = ParseLayoutSpec(text);
  if (layout) {
    for (uint64_t ss : {512u, 4096u}) {
      for (uint64_t disk_bytes :
           {uint64_t{0}, uint64_t{1} << 20, uint64_t{64} << 20, uint64_t{2} << 40, ~uint64_t{0}}) {
        CheckLayout(*layout, disk_bytes / ss, ss, {kMiB, 0});
        CheckLayout(*layout, disk_bytes / ss, ss, {4 * kMiB, 3584 / 512 * 512 % ss});
      }
    }
  }
  return 0;
}
