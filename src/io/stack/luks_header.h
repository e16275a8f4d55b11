// SPDX-License-Identifier: GPL-3.0-or-later
// libcryptsetup: the payload offset (where the encrypted data starts), the encryption sector
// size and the LUKS version of a LUKS1/LUKS2 header found inside a partition or a whole disk.
// The only file that includes <libcryptsetup.h>. libcryptsetup reads a device by path and may
// repair a damaged LUKS2 header copy when it can write, so partalign never hands it the disk:
// it copies the header bytes into a sealed memfd (sparse, as large as the region) and lets
// libcryptsetup read that.
#pragma once

#include <cstdint>
#include <string>

#include "partalign/util/result.h"

namespace partalign {

struct LuksHeaderInfo {
  int version = 0;                 ///< 1 or 2
  uint64_t data_offset_bytes = 0;  ///< from the start of the LUKS device (crypt_get_data_offset)
  uint64_t encryption_sector_bytes = 512;  ///< crypt_get_sector_size
  uint64_t metadata_bytes = 0;             ///< LUKS2: one header copy (binary + JSON); LUKS1: 0
  uint64_t keyslots_bytes = 0;             ///< LUKS2 keyslot area; LUKS1: 0
};

/// Reads the LUKS header at [offset, offset + size) of the open file or device `fd` (`path`
/// names it in errors). An error names what libcryptsetup refused.
Result<LuksHeaderInfo> ReadLuksHeader(int fd, const std::string& path, uint64_t offset,
                                      uint64_t size);

}  // namespace partalign
