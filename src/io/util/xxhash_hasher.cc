// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/xxhash_hasher.h"

#include <xxhash.h>

namespace partalign {

uint64_t XxHasher::Hash64(std::span<const uint8_t> data) const {
  return XXH3_64bits(data.data(), data.size());
}

Digest128 XxHasher::Hash128(std::span<const uint8_t> data) const {
  const XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  return {h.low64, h.high64};
}

}  // namespace partalign
