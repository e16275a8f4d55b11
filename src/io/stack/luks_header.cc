// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/stack/luks_header.h"

#include <fcntl.h>
#include <libcryptsetup.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/util/c_handle.h"
#include "io/util/unique_fd.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

using CryptDevice = std::unique_ptr<crypt_device, CDeleter<crypt_free>>;

// LUKS1 keeps all libcryptsetup reads for crypt_load() in its 592-byte phdr; one page covers it.
constexpr uint64_t kLuks1HeaderBytes = 4096;
// LUKS2 (docs/on-disk-format-luks2.pdf): "LUKS\xba\xbe" + version u16 BE, hdr_size u64 BE at 8:
// one binary+JSON copy, 16 KiB to 4 MiB; the second copy follows it.
constexpr uint64_t kLuks2HdrSizeOffset = 8;
constexpr uint64_t kLuks2MinHdrBytes = 16 * 1024;
constexpr uint64_t kLuks2MaxHdrBytes = 4 * 1024 * 1024;
constexpr uint64_t kSector = 512;

// libcryptsetup's messages would go to stderr; keep the last error for our own message.
void LogToString(int level, const char* message, void* user) {
  if (level == CRYPT_LOG_ERROR && message != nullptr) {
    *static_cast<std::string*>(user) = message;
  }
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// A memfd of `size` bytes (sparse) holding `bytes` at its start, sealed against writes.
Result<UniqueFd> SealedCopy(const std::vector<uint8_t>& bytes, uint64_t size) {
  UniqueFd fd(::memfd_create("partalign-luks-header", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return ErrnoError(errno, "memfd_create");
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    return ErrnoError(errno, "sizing the LUKS header copy");
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n =
        ::pwrite(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError(errno ? errno : EIO, "copying the LUKS header");
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
      0) {
    return ErrnoError(errno, "sealing the LUKS header copy");
  }
  return fd;
}

}  // namespace

Result<LuksHeaderInfo> ReadLuksHeader(int fd, const std::string& path, uint64_t offset,
                                      uint64_t size) {
  const std::string where = fmt::format("LUKS header in '{}' at byte {}", path, offset);
  std::vector<uint8_t> bytes(static_cast<size_t>(std::min(kLuks1HeaderBytes, size)));
  Result<size_t> got = ReadAt(fd, bytes.data(), bytes.size(), offset, path);
  if (!got) return got.error();
  bytes.resize(*got);
  if (std::optional<uint16_t> version = Be<uint16_t>(bytes, 6); version == 2) {
    std::optional<uint64_t> hdr = Be<uint64_t>(bytes, kLuks2HdrSizeOffset);
    if (!hdr || *hdr < kLuks2MinHdrBytes || *hdr > kLuks2MaxHdrBytes) {
      return MakeError(where + ": the LUKS2 header size is not one LUKS2 allows");
    }
    bytes.resize(static_cast<size_t>(std::min(2 * *hdr, size)));
    got = ReadAt(fd, bytes.data(), bytes.size(), offset, path);
    if (!got) return got.error();
    bytes.resize(*got);
  }
  Result<UniqueFd> copy = SealedCopy(bytes, size);
  if (!copy) return copy.error();
  const std::string copy_path = fmt::format("/proc/self/fd/{}", copy->get());

  std::string last_error;
  // Locking (LUKS2's /run/cryptsetup lock files) protects writers; partalign only reads a copy.
  crypt_metadata_locking(nullptr, 0);
  crypt_set_log_callback(nullptr, LogToString, &last_error);
  crypt_device* raw = nullptr;
  if (int rc = crypt_init(&raw, copy_path.c_str()); rc < 0) {
    crypt_set_log_callback(nullptr, nullptr, nullptr);
    return ErrnoError(rc, where + ": crypt_init");
  }
  CryptDevice cd(raw);
  crypt_set_log_callback(cd.get(), LogToString, &last_error);
  const int rc = crypt_load(cd.get(), CRYPT_LUKS, nullptr);
  crypt_set_log_callback(nullptr, nullptr, nullptr);
  if (rc < 0) {
    if (!last_error.empty()) return MakeError(where + ": " + Trimmed(last_error));
    return ErrnoError(rc, where + ": libcryptsetup cannot load it");
  }
  LuksHeaderInfo info;
  const char* type = crypt_get_type(cd.get());
  info.version = type != nullptr && std::string_view(type) == CRYPT_LUKS2 ? 2 : 1;
  info.data_offset_bytes = crypt_get_data_offset(cd.get()) * kSector;
  const int sector = crypt_get_sector_size(cd.get());
  info.encryption_sector_bytes = sector > 0 ? static_cast<uint64_t>(sector) : kSector;
  if (info.version == 2) {
    uint64_t metadata = 0, keyslots = 0;
    if (crypt_get_metadata_size(cd.get(), &metadata, &keyslots) == 0) {
      info.metadata_bytes = metadata;
      info.keyslots_bytes = keyslots;
    }
  }
  if (info.data_offset_bytes >= size) {
    return MakeError(where + fmt::format(": the payload offset {} lies past the end ({} bytes)",
                                         info.data_offset_bytes, size));
  }
  return info;
}

}  // namespace partalign
