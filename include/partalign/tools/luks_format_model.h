// SPDX-License-Identifier: GPL-3.0-or-later
// Where `cryptsetup luksFormat` puts a LUKS payload (the encrypted data) on a device with a
// given topology, per cryptsetup era, without --offset or --align-payload: the required
// alignment from the minimum/optimal I/O size (1 MiB by default), the header before it and the
// alignment offset after it. Restated from cryptsetup lib/utils_device.c
// device_topology_alignment(), lib/luks2/luks2_json_format.c LUKS2_generate_hdr() and
// lib/luks1/keymanage.c LUKS_generate_phdr(); no upstream code is copied. Checked against the
// real cryptsetup under the topology shim (tests/cli/commands/explain_stack_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/topology/topology.h"

namespace partalign {

enum class LuksType { kLuks1, kLuks2 };

std::string_view ToString(LuksType type);  ///< "luks1", "luks2"

/// LUKS1's key material with the default aes-xts-plain64 512-bit key: the 592-byte header, 8
/// key slots of 4000 anti-forensic stripes x 64 bytes, each rounded up to 4 KiB
/// (LUKS_ALIGN_KEYSLOTS): 4040 sectors.
inline constexpr uint64_t kLuks1DefaultHeaderBytes = 4040 * 512;
/// LUKS2's default header: two 16 KiB binary+JSON copies and the key-slot area, 16 MiB in all
/// (LUKS2_DEFAULT_HDR_SIZE since cryptsetup 2.1).
inline constexpr uint64_t kLuks2DefaultHeaderBytes = 16ull * 1024 * 1024;

struct LuksFormatPrediction {
  ToolVersion version;
  std::string era;
  LuksType type = LuksType::kLuks2;
  uint64_t required_alignment_bytes = 0;
  uint64_t alignment_offset_bytes = 0;
  /// Where the payload starts, from the start of the device luksFormat writes.
  uint64_t data_offset_bytes = 0;
  std::string error;  ///< a version older than modelled
  std::vector<std::string> reasons;
  std::string key_reason;
};

/// luksFormat --type `type` of cryptsetup `version` on a device reporting `topology`'s minimum
/// I/O, optimal I/O and alignment offset (for a partition, its own: PartitionAlignmentOffset).
LuksFormatPrediction PredictLuksFormat(const Topology& topology, const ToolVersion& version,
                                       LuksType type);

}  // namespace partalign
