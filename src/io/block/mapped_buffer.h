// SPDX-License-Identifier: GPL-3.0-or-later
// Memory for the benchmark's O_DIRECT I/O, mmap()ed: page-aligned (hence aligned to any
// logical sector size up to the page size), allocated once per engine and never inside the
// I/O loop. Not block_io.h's AlignedBuffer (heap, for the mover): the two once shared that
// name, two classes under one name in one program (an ODR violation).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "partalign/bench/bench_random.h"

namespace partalign {

/// Seed of the data the benchmark's writes carry.
inline constexpr uint64_t kWriteDataSeed = 0x77726974;  // "writ"

class MappedBuffer {
 public:
  MappedBuffer() = default;
  /// mmap()s `bytes` of anonymous memory; data() is nullptr when that fails.
  explicit MappedBuffer(size_t bytes) : size_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  MappedBuffer(MappedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MappedBuffer& operator=(MappedBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  ~MappedBuffer() { Release(); }

  /// Fills the buffer with seeded pseudo-random bytes, once, so that written data is neither
  /// zeros nor compressible (as fio's default buffer contents).
  void FillPseudoRandom(uint64_t seed = kWriteDataSeed) {
    Xoshiro256 rng(seed);
    for (size_t i = 0; i + sizeof(uint64_t) <= size_; i += sizeof(uint64_t)) {
      const uint64_t word = rng.Next();
      std::memcpy(data_ + i, &word, sizeof(word));
    }
  }

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Release() {
    if (data_) ::munmap(data_, size_);
    data_ = nullptr;
  }
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace partalign
