// SPDX-License-Identifier: GPL-3.0-or-later
// The journal's checksums: XXH3-64 for metadata, XXH3-128 for data (Debian's libxxhash).
#pragma once

#include "partalign/util/hasher.h"

namespace partalign {

class XxHasher final : public Hasher {
 public:
  std::string name() const override { return "xxh3"; }
  uint64_t Hash64(std::span<const uint8_t> data) const override;
  Digest128 Hash128(std::span<const uint8_t> data) const override;
};

}  // namespace partalign
