// SPDX-License-Identifier: GPL-3.0-or-later
// PopulatePages and AlignedBuffer::Populated: memory whose every page is resident before
// anything is read into it (mincore), aligned for O_DIRECT like any AlignedBuffer; ReadEach's
// buffers are so.
#include "io/block/block_io.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

// How many of the pages of [data, data + size) are in memory.
size_t ResidentPages(const uint8_t* data, size_t size) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t pages = (size + page - 1) / page;
  std::vector<unsigned char> in_core(pages);
  EXPECT_EQ(::mincore(const_cast<uint8_t*>(data), size, in_core.data()), 0) << std::strerror(errno);
  size_t resident = 0;
  for (unsigned char c : in_core) resident += c & 1;
  return resident;
}

size_t PagesOf(size_t size) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (size + page - 1) / page;
}

TEST(AlignedBufferTest, PopulatePagesPutsEveryPageOfAFreshMappingInMemory) {
  constexpr size_t kSize = 16 * kMiB;  // the mover's batch
  void* map = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED) << std::strerror(errno);
  auto* data = static_cast<uint8_t*>(map);
  // A fresh mapping has no page in memory: the check below can fail.
  EXPECT_EQ(ResidentPages(data, kSize), 0u);
  PopulatePages({data, kSize / 2});
  EXPECT_EQ(ResidentPages(data, kSize / 2), PagesOf(kSize / 2));
  EXPECT_EQ(ResidentPages(data + kSize / 2, kSize / 2), 0u);  // only what it was given
  EXPECT_EQ(data[0], 0);  // anonymous memory reads as zeros, populated or not
  EXPECT_EQ(::munmap(map, kSize), 0);
}

// A span that does not start or end on a page (a vector's allocation): the whole pages inside it.
TEST(AlignedBufferTest, PopulatePagesTakesTheWholePagesInsideASpanOffAPage) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  constexpr size_t kSize = 4 * kMiB;
  void* map = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED) << std::strerror(errno);
  // Small pages whatever the machine's THP mode: a huge page would take the pages around too.
  ASSERT_EQ(::madvise(map, kSize, MADV_NOHUGEPAGE), 0) << std::strerror(errno);
  auto* data = static_cast<uint8_t*>(map);
  PopulatePages({data + 100, kSize / 2});
  EXPECT_EQ(ResidentPages(data, page), 0u);  // the part of a page before it
  EXPECT_EQ(ResidentPages(data + page, kSize / 2 - page), PagesOf(kSize / 2 - page));
  EXPECT_EQ(ResidentPages(data + kSize / 2, kSize / 2), 0u);  // the part of a page after it
  EXPECT_EQ(::munmap(map, kSize), 0);
}

TEST(AlignedBufferTest, APopulatedCopyHoldsTheBytes) {
  std::vector<uint8_t> bytes(3 * kMiB + 123);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  EXPECT_EQ(PopulatedCopy(bytes), bytes);
  EXPECT_TRUE(PopulatedCopy({}).empty());
  const std::vector<uint8_t> small = {1, 2, 3};
  EXPECT_EQ(PopulatedCopy(small), small);
}

TEST(AlignedBufferTest, APopulatedBufferIsAlignedAndInMemory) {
  constexpr size_t kSize = 16 * kMiB;
  AlignedBuffer populated = AlignedBuffer::Populated(kSize);
  ASSERT_NE(populated.data(), nullptr);
  EXPECT_EQ(populated.size(), kSize);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(populated.data()) % AlignedBuffer::kAlignment, 0u);
  EXPECT_EQ(ResidentPages(populated.data(), kSize), PagesOf(kSize));
}

// The kilobytes of huge pages (AnonHugePages in /proc/self/smaps) of the mapping holding `p`.
size_t AnonHugePagesKb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    unsigned long low = 0;
    unsigned long high = 0;
    // A mapping's first line: "low-high perms offset dev inode [path]"; the others "Key: value".
    if (line.find(':') > line.find(' ') &&
        std::sscanf(line.c_str(), "%lx-%lx ", &low, &high) == 2) {
      inside = address >= low && address < high;
    } else if (inside && line.starts_with("AnonHugePages:")) {
      return std::stoul(line.substr(std::string("AnonHugePages:").size()));
    }
  }
  return 0;
}

// The mover's batch buffers (16 MiB and its records' headers) are faulted in as huge pages
// where the kernel has them (docs/mover.md §10: the moves took 7-24% less time so).
TEST(AlignedBufferTest, ALargePopulatedBufferIsInHugePagesWhereTheKernelHasThem) {
  constexpr size_t kSize = 16 * kMiB + 80 * 1024;
  AlignedBuffer populated = AlignedBuffer::Populated(kSize);
  ASSERT_NE(populated.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(populated.data()) % AlignedBuffer::kHugePageBytes, 0u);
  EXPECT_EQ(ResidentPages(populated.data(), kSize), PagesOf(kSize));
  // A buffer below a huge page is populated as before, with the plain alignment.
  AlignedBuffer small = AlignedBuffer::Populated(64 * 1024);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % AlignedBuffer::kAlignment, 0u);
  EXPECT_EQ(ResidentPages(small.data(), small.size()), PagesOf(small.size()));
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (mode.empty() || mode.find("[never]") != std::string::npos) {
    std::printf("transparent huge pages are off here ('%s'): only the alignment is checked\n",
                mode.c_str());
    return;
  }
  // At least one huge page (a sanitizer's allocator may keep the first for its header).
  EXPECT_GE(AnonHugePagesKb(populated.data()), AlignedBuffer::kHugePageBytes / 1024) << mode;
}

TEST(AlignedBufferTest, AnEmptyPopulatedBufferHasNoMemory) {
  AlignedBuffer empty = AlignedBuffer::Populated(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
}

// A BlockIo that reads nothing: what ReadEach hands it shows how its buffers were made.
class CheckingIo final : public BlockIo {
 public:
  Status Read(std::span<const IoSpan> requests) override {
    for (const IoSpan& r : requests) {
      resident.push_back(ResidentPages(r.data, r.length));
      pages.push_back(PagesOf(r.length));
      std::memset(r.data, 0x5a, r.length);
    }
    return {};
  }
  Status Write(std::span<const IoSpan>) override { return {}; }
  Status Flush() override { return {}; }
  uint64_t size_bytes() const override { return 64 * kMiB; }
  const std::string& name() const override { return name_; }

  std::vector<size_t> resident;
  std::vector<size_t> pages;

 private:
  std::string name_ = "checking";
};

TEST(AlignedBufferTest, ReadEachHandsTheReadBuffersAlreadyInMemory) {
  CheckingIo io;
  const std::vector<ByteRange> ranges = {{0, 8 * kMiB}, {16 * kMiB, 4096}, {32 * kMiB, 0}};
  Result<std::vector<AlignedBuffer>> read = ReadEach(io, ranges);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 3u);
  ASSERT_EQ(io.resident.size(), 2u);  // a range of 0 bytes is not read
  EXPECT_EQ(io.resident, io.pages);
  EXPECT_EQ((*read)[0].size(), 8 * kMiB);
  EXPECT_EQ((*read)[0].data()[8 * kMiB - 1], 0x5a);
  EXPECT_EQ((*read)[1].size(), 4096u);
}

}  // namespace
}  // namespace partalign
