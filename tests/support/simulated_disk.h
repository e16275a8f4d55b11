// SPDX-License-Identifier: GPL-3.0-or-later
// A disk in memory with a volatile write cache, for testing the mover's recovery from a power
// failure at any instant. Writes land in the cache (reads see them); Flush() makes every cached
// write durable. A shared CrashClock counts writes and flushes across the device and the journal
// and "cuts the power" at a chosen one: that operation and everything after it fail, and
// SurvivingImage() says what a disk could hold afterwards - the durable bytes plus any subset of
// the cached writes, sector by sector, in any order (a real cache reorders and tears writes).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "io/block/block_io.h"

namespace partalign::test {

class CrashClock {
 public:
  /// Power fails at operation `crash_at` (1-based); 0 = never.
  explicit CrashClock(uint64_t crash_at = 0) : crash_at_(crash_at) {}
  /// Counts one operation; true when the power fails at it (and from then on).
  bool Tick();
  bool crashed() const;
  uint64_t ticks() const;

 private:
  mutable std::mutex mutex_;
  uint64_t crash_at_;
  uint64_t ticks_ = 0;
  bool crashed_ = false;
};

class SimulatedDisk final : public partalign::BlockIo {
 public:
  SimulatedDisk(std::string name, std::vector<uint8_t> contents, uint64_t sector_size,
                CrashClock* clock);

  partalign::Status Read(std::span<const partalign::IoSpan> requests) override;
  partalign::Status Write(std::span<const partalign::IoSpan> requests) override;
  partalign::Status Flush() override;
  uint64_t size_bytes() const override { return current_.size(); }
  const std::string& name() const override { return name_; }

  /// What reads return now (cache included).
  std::vector<uint8_t> current() const;
  /// What the disk holds after the power failure: durable bytes, then the cached writes in a
  /// random order, each sector of each one kept or lost at random (or all kept, or all lost).
  std::vector<uint8_t> SurvivingImage(std::mt19937_64& rng) const;

  /// Reads that touch [offset, offset + length) fail with EIO.
  void FailReads(uint64_t offset, uint64_t length);
  /// Called with every write before it lands (offset, data); may change the data (corruption
  /// tests).
  void OnWrite(std::function<void(uint64_t offset, std::span<uint8_t> data)> hook);
  /// Changes bytes directly, like another program writing to the disk.
  void Poke(uint64_t offset, std::span<const uint8_t> bytes);

 private:
  struct CachedWrite {
    uint64_t offset;
    std::vector<uint8_t> data;
  };
  std::string name_;
  uint64_t sector_;
  CrashClock* clock_;
  mutable std::mutex mutex_;
  std::vector<uint8_t> current_;
  std::vector<uint8_t> durable_;
  std::vector<CachedWrite> cache_;
  uint64_t fail_offset_ = 0;
  uint64_t fail_length_ = 0;
  std::function<void(uint64_t, std::span<uint8_t>)> on_write_;
};

}  // namespace partalign::test
