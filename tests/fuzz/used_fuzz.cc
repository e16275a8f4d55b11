// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the used maps (the bytes of a partition decide which of its bytes a move
// copies, docs/used-map.md) on any partition: the core's parsers (vfat, XFS, btrfs, swap), and
// at the I/O edge libext2fs's bitmaps, the LVM2 PV reader and the dispatch by libblkid's type
// (the partition written to a memory file).
//
// An input is a sparse partition, so that a real filesystem of hundreds of MiB is a seed of a
// few KiB (scripts/fuzz makes them with mkfs):
//   byte 0       the parser: 0 vfat, 1 XFS, 2 btrfs, 3 swap, 4 ext2/3/4, 5 LVM2 PV, 6 the type
//                libblkid finds (modulo 7)
//   bytes 1..8   the partition's length, little-endian (modulo 512 MiB + 1)
//   then records, to the end: offset (8 bytes, little-endian), length (2 bytes), the bytes;
//   a record cut short by the end of the input keeps what is there.
// Every other byte of the partition is zero; a later record wins where two overlap.
//
// Any input: no crash, no sanitizer report, no read outside the partition (core parsers); the
// map covers the partition's first 64 KiB, its ranges are sorted, disjoint, not touching and
// inside the partition, and its chunks of the mover hold every used byte (what
// tests/io/used/used_map_mutation_test.cc checks on mkfs images, here on every input).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/fuzz_check.h"
#include "io/used/ext_used_map.h"
#include "io/used/lvm_used_map.h"
#include "io/used/used_map_reader.h"
#include "io/util/unique_fd.h"
#include "partalign/used/btrfs_used_map.h"
#include "partalign/used/byte_source.h"
#include "partalign/used/fat_used_map.h"
#include "partalign/used/swap_used_map.h"
#include "partalign/used/used_map.h"
#include "partalign/used/xfs_used_map.h"

namespace {

using partalign::ByteSource;
using partalign::Result;

// Large enough for the seeds (300 MiB filesystems), small enough that a parser reading every
// byte it may (a FAT as large as the partition) stays well under a second.
constexpr uint64_t kMaxLength = uint64_t{512} << 20;

struct Record {
  uint64_t offset;
  std::span<const uint8_t> bytes;
};

class SparseSource : public ByteSource {
 public:
  SparseSource(uint64_t length, std::vector<Record> records)
      : length_(length), records_(std::move(records)) {}
  uint64_t size_bytes() const override { return length_; }
  Result<std::vector<uint8_t>> Read(uint64_t offset, uint64_t length) const override {
    if (offset > length_ || length > length_ - offset) {
      ++out_of_range;
      return partalign::MakeError("out of the partition");
    }
    std::vector<uint8_t> out(length);
    for (const Record& r : records_) {
      if (r.offset >= offset + length || r.offset + r.bytes.size() <= offset) continue;
      const uint64_t from = std::max(r.offset, offset);
      const uint64_t to = std::min<uint64_t>(r.offset + r.bytes.size(), offset + length);
      std::memcpy(out.data() + (from - offset), r.bytes.data() + (from - r.offset), to - from);
    }
    return out;
  }
  mutable int out_of_range = 0;

 private:
  uint64_t length_;
  std::vector<Record> records_;
};

// The partition as a file, for the readers at the I/O edge (libext2fs opens it by name).
class MemoryFile {
 public:
  MemoryFile(uint64_t length, const std::vector<Record>& records)
      : fd_(::memfd_create("used_fuzz", MFD_CLOEXEC)) {
    FUZZ_CHECK(fd_.get() >= 0 && ::ftruncate(fd_.get(), static_cast<off_t>(length)) == 0);
    for (const Record& r : records) {
      // Records lie inside the partition but may run past its end: those bytes are cut.
      const size_t count =
          static_cast<size_t>(std::min<uint64_t>(r.bytes.size(), length - r.offset));
      FUZZ_CHECK(::pwrite(fd_.get(), r.bytes.data(), count, static_cast<off_t>(r.offset)) ==
                 static_cast<ssize_t>(count));
    }
  }
  int fd() const { return fd_.get(); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_.get()); }

 private:
  partalign::UniqueFd fd_;
};

uint64_t Le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

void CheckMap(const partalign::UsedMap& map, uint64_t length) {
  using namespace partalign;
  FUZZ_CHECK(map.length_bytes() == length);
  uint64_t end = 0;
  bool first = true;
  for (const UsedRange& r : map.ranges()) {
    FUZZ_CHECK(r.length_bytes > 0 && r.reasons != 0);
    FUZZ_CHECK(first || r.offset_bytes > end);
    FUZZ_CHECK(r.offset_bytes < length && r.length_bytes <= length - r.offset_bytes);
    end = r.offset_bytes + r.length_bytes;
    first = false;
  }
  FUZZ_CHECK(map.used_bytes() <= length);
  if (length == 0) return;
  FUZZ_CHECK(!map.ranges().empty());
  FUZZ_CHECK(map.ranges().front().offset_bytes == 0);
  FUZZ_CHECK(map.ranges().front().length_bytes >= std::min(kUsedHeadBytes, length));
  // The mover's chunks (4 MiB and a small one): every used byte is in one.
  for (const uint64_t chunk : {uint64_t{4} << 20, uint64_t{64} << 10}) {
    const std::vector<ChunkRun> runs = ChunkRunsOf(map, chunk);
    FUZZ_CHECK(ChunkTotal(runs) * chunk >= map.used_bytes());
    size_t at = 0;
    for (const UsedRange& r : map.ranges()) {
      const uint64_t first_chunk = r.offset_bytes / chunk;
      const uint64_t last_chunk = (r.offset_bytes + r.length_bytes - 1) / chunk;
      while (at < runs.size() && runs[at].first_chunk + runs[at].chunk_count <= first_chunk) ++at;
      FUZZ_CHECK(at < runs.size() && runs[at].first_chunk <= first_chunk &&
                 last_chunk < runs[at].first_chunk + runs[at].chunk_count);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  if (size < 9) return 0;
  const uint8_t parser = data[0] % 7;
  const uint64_t length = Le(data + 1, 8) % (kMaxLength + 1);
  std::vector<Record> records;
  for (size_t at = 9; at + 10 <= size;) {
    const uint64_t offset = Le(data + at, 8);
    const size_t count = std::min<size_t>(Le(data + at + 8, 2), size - at - 10);
    // A record past the end is never read (and its end could wrap around).
    if (offset < length) records.push_back({offset, {data + at + 10, count}});
    at += 10 + count;
  }
  if (parser >= 4) {
    const MemoryFile file(length, records);
    if (parser == 4) {
      CheckMap(ReadExtUsedMap(file.path(), 0, length), length);
    } else if (parser == 5) {
      CheckMap(ReadLvmUsedMap(file.fd(), file.path(), 0, length), length);
    } else if (Result<UsedMap> map = ProbeUsedMap(file.fd(), file.path(), 0, length)) {
      CheckMap(*map, length);
    } else {
      FUZZ_CHECK(!map.error().message.empty());
    }
    return 0;
  }
  const SparseSource source(length, std::move(records));
  switch (parser) {
    case 0:
      CheckMap(FatUsedMap(source), length);
      break;
    case 1:
      CheckMap(XfsUsedMap(source), length);
      break;
    case 2:
      CheckMap(BtrfsUsedMap(source), length);
      break;
    default:
      // An error is a hibernation image: refused, never mapped.
      if (Result<UsedMap> map = SwapUsedMap(source)) CheckMap(*map, length);
      break;
  }
  FUZZ_CHECK(source.out_of_range == 0);
  return 0;
}
