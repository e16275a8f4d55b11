// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/hasher.h"

#include <fmt/format.h>

namespace partalign {

std::string ToHex(const Digest128& digest) {
  return fmt::format("{:016x}{:016x}", digest.high, digest.low);
}

}  // namespace partalign
