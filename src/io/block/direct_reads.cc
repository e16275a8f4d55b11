// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/block/direct_reads.h"

#include <fcntl.h>

#include <cerrno>

#include <fmt/format.h>

#include "io/block/uring_batch.h"
#include "io/util/unique_fd.h"

namespace partalign {
namespace {

// O_DIRECT needs offsets and lengths on the device's logical block: 512 bytes on most, 4096 on
// 4Kn disks (where a table's sectors, and so a partition's offsets, are 4096 bytes too).
constexpr uint64_t kDirectUnit = 512;

Status ReadInto(const std::string& path, int flags, const std::vector<ByteRange>& ranges,
                std::vector<AlignedBuffer>* buffers) {
  UniqueFd fd(::open(path.c_str(), flags | O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", path));
  std::vector<IoSpan> requests;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].length > 0) {
      requests.push_back({(*buffers)[i].data(), ranges[i].length, ranges[i].offset});
    }
  }
  return TransferAll(fd.get(), TransferKind::kRead, requests, path);
}

}  // namespace

Result<std::vector<AlignedBuffer>> ReadRanges(const std::string& path,
                                              const std::vector<ByteRange>& ranges) {
  std::vector<AlignedBuffer> buffers;
  bool direct = true;
  for (const ByteRange& r : ranges) {
    buffers.emplace_back(
        static_cast<size_t>((r.length + AlignedBuffer::kAlignment - 1) / AlignedBuffer::kAlignment *
                            AlignedBuffer::kAlignment));
    direct = direct && r.offset % kDirectUnit == 0 && r.length % kDirectUnit == 0;
  }
  // O_DIRECT refused (tmpfs), or a read it cannot make (a 4Kn device, an odd range): the same
  // reads buffered, which can make them all.
  if (direct && ReadInto(path, O_DIRECT, ranges, &buffers)) return buffers;
  if (Status s = ReadInto(path, 0, ranges, &buffers); !s) return s.error();
  return buffers;
}

}  // namespace partalign
