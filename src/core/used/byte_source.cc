// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/byte_source.h"

#include <fmt/format.h>

namespace partalign {

Result<std::vector<uint8_t>> MemoryByteSource::Read(uint64_t offset, uint64_t length) const {
  if (offset > bytes_.size() || length > bytes_.size() - offset) {
    return MakeError(fmt::format("read of {} bytes at byte {} leaves the {}-byte partition", length,
                                 offset, bytes_.size()));
  }
  return std::vector<uint8_t>(bytes_.begin() + static_cast<ptrdiff_t>(offset),
                              bytes_.begin() + static_cast<ptrdiff_t>(offset + length));
}

}  // namespace partalign
