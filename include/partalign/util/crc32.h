// SPDX-License-Identifier: GPL-3.0-or-later
// CRC-32 as GPT uses it (UEFI 2.x Appendix F: the ISO-HDLC CRC, reflected polynomial
// 0xEDB88320, initial value and final XOR 0xFFFFFFFF), the checksum of a GPT header and of its
// partition entry array. The core may link no C library (zlib has the same function), and the
// algorithm is a dozen lines with a published check value; tests/core/util/crc32_test.cc checks
// it against that value and the table reader checks it on every GPT the real sfdisk writes.
#pragma once

#include <cstdint>
#include <span>

namespace partalign {

/// The CRC-32 of `data`: Crc32("123456789") is 0xCBF43926.
uint32_t Crc32(std::span<const uint8_t> data);

}  // namespace partalign
