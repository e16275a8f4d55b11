// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/blkid_probe.h"

#include <blkid.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/device/zero_scan.h"
#include "io/util/c_handle.h"
#include "partalign/layout/fs_size.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

using BlkidProbe = CHandle<blkid_free_probe, blkid_probe>;

Result<BlkidProbe> NewProbe(int fd, const std::string& path) {
  BlkidProbe probe(blkid_new_probe());
  if (!probe) return ErrnoError(ENOMEM, "blkid_new_probe");
  if (blkid_probe_set_device(probe.get(), fd, 0, 0) != 0) {
    return ErrnoError(errno ? errno : EINVAL, fmt::format("libblkid cannot use '{}'", path));
  }
  return probe;
}

}  // namespace

Result<std::optional<BlkidTopology>> ProbeBlkidTopology(int fd, const std::string& path) {
  Result<BlkidProbe> probe = NewProbe(fd, path);
  if (!probe) return probe.error();
  // The topology belongs to the probe and is freed with it.
  blkid_topology tp = blkid_probe_get_topology(probe->get());
  if (tp == nullptr) return std::optional<BlkidTopology>();
  BlkidTopology t;
  t.logical_sector_size = blkid_topology_get_logical_sector_size(tp);
  t.physical_sector_size = blkid_topology_get_physical_sector_size(tp);
  t.minimum_io_size = blkid_topology_get_minimum_io_size(tp);
  t.optimal_io_size = blkid_topology_get_optimal_io_size(tp);
  t.alignment_offset = blkid_topology_get_alignment_offset(tp);
  return std::optional<BlkidTopology>(t);
}

Result<std::string> ProbeBlkidTableType(int fd, const std::string& path, uint64_t sector_size) {
  Result<BlkidProbe> probe = NewProbe(fd, path);
  if (!probe) return probe.error();
  blkid_probe pr = probe->get();
  blkid_probe_set_sectorsize(pr, static_cast<unsigned>(sector_size));
  blkid_probe_enable_superblocks(pr, 0);
  blkid_probe_enable_partitions(pr, 1);
  blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
  int rc = blkid_do_safeprobe(pr);
  if (rc < 0) {
    // -2 means ambivalent (several tables); libblkid sets no errno for it.
    return MakeError(fmt::format("libblkid cannot tell which partition table '{}' holds", path));
  }
  const char* type = nullptr;
  if (rc == 0 && blkid_probe_lookup_value(pr, "PTTYPE", &type, nullptr) == 0 && type) {
    return std::string(type);
  }
  return std::string();
}

Result<std::vector<BlkidSignature>> ProbeBlkidSignatures(int fd, const std::string& path,
                                                         uint64_t sector_size) {
  Result<BlkidProbe> probe = NewProbe(fd, path);
  if (!probe) return probe.error();
  blkid_probe pr = probe->get();
  blkid_probe_set_sectorsize(pr, static_cast<unsigned>(sector_size));
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(
      pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
  blkid_probe_enable_partitions(pr, 1);
  blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
  auto lookup = [pr](const char* name) -> std::string {
    const char* value = nullptr;
    if (blkid_probe_lookup_value(pr, name, &value, nullptr) == 0 && value) return value;
    return "";
  };
  std::vector<BlkidSignature> found;
  // blkid_do_probe() returns one signature per call and moves on to the next prober, like
  // wipefs's listing loop: 0 = found one, 1 = done, < 0 = error.
  for (;;) {
    const int rc = blkid_do_probe(pr);
    if (rc == 1) break;
    if (rc < 0) {
      return ErrnoError(errno ? errno : EIO, fmt::format("libblkid cannot probe '{}'", path));
    }
    BlkidSignature s;
    std::string offset;
    if (std::string pt = lookup("PTTYPE"); !pt.empty()) {
      s.type = pt;
      s.usage = "partition table";
      offset = lookup("PTMAGIC_OFFSET");
    } else {
      s.type = lookup("TYPE");
      s.usage = lookup("USAGE");
      offset = lookup("SBMAGIC_OFFSET");
    }
    if (!offset.empty()) s.offset_bytes = std::strtoull(offset.c_str(), nullptr, 10);
    if (!s.type.empty()) found.push_back(std::move(s));
  }
  return found;
}

namespace {

// Asks the kernel to read ahead, all at once, what libblkid 2.38's superblock probers read of a
// partition without a signature (measured with strace on an empty partition): its first 256 KiB
// and a page past it, pages at 512 KiB, 1, 2 and 4 MiB (LUKS2's secondary headers), and pages in
// its last 1.6 MiB (md, ZFS, UDF, DRBD...). A block device's page cache is empty at each open,
// and libblkid's few dozen small reads per partition would otherwise wait one by one. Only a
// hint. (A block device's head is read apart, with O_DIRECT: FindFirstNonZeroInEach.)
void HintPartitionProbes(int fd, std::span<const ByteRange> ranges) {
  constexpr uint64_t kPage = 4096;
  constexpr uint64_t kHeadRun = 256 * 1024 + kPage;
  constexpr uint64_t kHead[] = {512 * 1024, 1u << 20, 2u << 20, 4u << 20};
  constexpr uint64_t kTail[] = {1580544, 507392, 498688, 486912, 466432, 376320,
                                345600,  302592, 204288, 131584, 131072, 130560,
                                65536,   32256,  8192,   4096,   1024,   512};
  auto hint = [fd](uint64_t at, uint64_t length) {
    (void)::posix_fadvise(fd, static_cast<off_t>(at), static_cast<off_t>(length),
                          POSIX_FADV_WILLNEED);
  };
  // An image's head is read buffered (FindFirstNonZeroInEach): read it ahead whole.
  struct stat st {};
  const uint64_t head =
      ::fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) ? kHeadRun : kDataProbeBytes + kPage;
  for (const ByteRange& r : ranges) {
    // A range of a sparse image with no data is never probed (ProbeSignature); read ahead, its
    // holes would only fill the page cache with zeros (about 2 of plan's 34 ms of CPU on
    // scripts/bench-plan's image, 96 of whose 128 partitions are holes).
    if (IsAllHoles(fd, r.offset, r.length)) continue;
    hint(r.offset, std::min(head, r.length));
    for (uint64_t at : kHead) {
      if (at < r.length) hint(r.offset + at, kPage);
    }
    for (uint64_t back : kTail) {
      if (back <= r.length) hint(r.offset + r.length - back, kPage);
    }
  }
}

// What libblkid finds in [offset, offset + size) of `fd`, and the filesystem's size: the
// contents with a signature, or with an image's holes; otherwise the proof is left for the head
// to be read (kUnscanned).
Result<PartitionContents> ProbeSignature(int fd, const std::string& path, uint64_t offset,
                                         uint64_t size) {
  PartitionContents contents;
  // A range of a sparse image that holds no data at all reads as zeros: no signature can be
  // there, and libblkid's few dozen reads per probe are saved (most of audit's time on images
  // with many empty partitions).
  if (IsAllHoles(fd, offset, size)) {
    contents.proof = ContentProof::kHoles;
    return contents;
  }
  BlkidProbe probe(blkid_new_probe());
  if (!probe) return ErrnoError(ENOMEM, "blkid_new_probe");
  blkid_probe pr = probe.get();
  if (blkid_probe_set_device(pr, fd, static_cast<blkid_loff_t>(offset),
                             static_cast<blkid_loff_t>(size)) != 0) {
    return ErrnoError(errno ? errno : EINVAL,
                      fmt::format("libblkid cannot read '{}' at byte {}", path, offset));
  }
  blkid_probe_enable_partitions(pr, 0);
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(
      pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_USAGE);
  int rc = blkid_do_safeprobe(pr);
  if (rc == -2) {
    // Several signatures: something is there, which one is for a person to decide.
    contents.fs_type = "ambivalent";
    contents.proof = ContentProof::kSignature;
  } else if (rc < 0) {
    return MakeError(fmt::format("libblkid cannot probe '{}' at byte {}", path, offset));
  } else if (rc == 0) {
    auto value = [&](const char* name) -> std::string {
      const char* data = nullptr;
      if (blkid_probe_lookup_value(pr, name, &data, nullptr) == 0 && data) return data;
      return {};
    };
    contents.fs_type = value("TYPE");
    contents.fs_label = value("LABEL");
    contents.fs_uuid = value("UUID");
    if (std::string bs = value("BLOCK_SIZE"); !bs.empty()) {
      if (Result<uint64_t> n = ParseUint(bs)) contents.fs_block_size = *n;
    }
    if (!contents.fs_type.empty()) contents.proof = ContentProof::kSignature;
  }
  if (contents.proof == ContentProof::kSignature && !contents.fs_type.empty()) {
    // libblkid 2.38 has no FSSIZE: read the superblock ourselves (partalign/layout/fs_size.h).
    std::vector<uint8_t> head(std::min<uint64_t>(kSuperblockProbeBytes, size));
    Result<size_t> got = ReadAt(fd, head.data(), head.size(), offset, path);
    if (!got) return got.error();
    head.resize(*got);
    contents.fs_size_bytes = FilesystemSizeBytes(contents.fs_type, head);
  }
  return contents;
}

}  // namespace

Result<std::vector<PartitionContents>> ProbePartitionsContents(int fd, const std::string& path,
                                                               std::span<const ByteRange> ranges) {
  HintPartitionProbes(fd, ranges);
  std::vector<PartitionContents> all;
  std::vector<ByteRange> heads;
  std::vector<size_t> headless;  // the index in `all` of each head
  for (const ByteRange& r : ranges) {
    Result<PartitionContents> contents = ProbeSignature(fd, path, r.offset, r.length);
    if (!contents) return contents.error();
    if (contents->proof == ContentProof::kUnscanned) {
      heads.push_back({r.offset, std::min<uint64_t>(kDataProbeBytes, r.length)});
      headless.push_back(all.size());
    }
    all.push_back(std::move(*contents));
  }
  // Only the head: enough to find most data at once, cheap enough for every audit. A zero head
  // proves nothing (kUnscanned); plan and apply read the rest when it matters
  // (ProvePartitionsEmpty, src/cli/content/content_proof.h).
  Result<std::vector<std::optional<uint64_t>>> data = FindFirstNonZeroInEach(fd, path, heads);
  if (!data) return data.error();
  for (size_t k = 0; k < heads.size(); ++k) {
    PartitionContents& contents = all[headless[k]];
    if ((*data)[k]) {
      contents.proof = ContentProof::kData;
      contents.data_offset_bytes = *(*data)[k];
    } else if (ranges[headless[k]].length <= kDataProbeBytes) {
      contents.proof = ContentProof::kZeros;  // the head is all of it
    }
  }
  return all;
}

Result<PartitionContents> ProbePartitionContents(int fd, const std::string& path, uint64_t offset,
                                                 uint64_t size) {
  const ByteRange range{offset, size};
  Result<std::vector<PartitionContents>> one =
      ProbePartitionsContents(fd, path, std::span<const ByteRange>(&range, 1));
  if (!one) return one.error();
  return std::move(one->front());
}

}  // namespace partalign
