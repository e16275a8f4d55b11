// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/simulated_disk.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace partalign::test {

bool CrashClock::Tick() {
  std::lock_guard lock(mutex_);
  if (crashed_) return true;
  ++ticks_;
  if (crash_at_ != 0 && ticks_ >= crash_at_) crashed_ = true;
  return crashed_;
}

bool CrashClock::crashed() const {
  std::lock_guard lock(mutex_);
  return crashed_;
}

uint64_t CrashClock::ticks() const {
  std::lock_guard lock(mutex_);
  return ticks_;
}

SimulatedDisk::SimulatedDisk(std::string name, std::vector<uint8_t> contents, uint64_t sector_size,
                             CrashClock* clock)
    : name_(std::move(name)),
      sector_(sector_size),
      clock_(clock),
      current_(contents),
      durable_(std::move(contents)) {}

partalign::Status SimulatedDisk::Read(std::span<const partalign::IoSpan> requests) {
  std::lock_guard lock(mutex_);
  if (clock_ != nullptr && clock_->crashed()) return partalign::MakeError("power failure");
  for (const partalign::IoSpan& r : requests) {
    if (r.offset + r.length > current_.size()) {
      return partalign::MakeError(fmt::format("read beyond the end of '{}'", name_));
    }
    if (fail_length_ > 0 && r.offset < fail_offset_ + fail_length_ &&
        fail_offset_ < r.offset + r.length) {
      return partalign::ErrnoError(EIO,
                                   fmt::format("cannot read '{}' at byte {}", name_, r.offset));
    }
    std::memcpy(r.data, current_.data() + r.offset, r.length);
  }
  return {};
}

partalign::Status SimulatedDisk::Write(std::span<const partalign::IoSpan> requests) {
  std::lock_guard lock(mutex_);
  for (const partalign::IoSpan& r : requests) {
    if (r.offset + r.length > current_.size()) {
      return partalign::MakeError(fmt::format("write beyond the end of '{}'", name_));
    }
    if (r.offset % sector_ != 0 || r.length % sector_ != 0) {
      return partalign::MakeError(
          fmt::format("unaligned write to '{}' at byte {} (+{})", name_, r.offset, r.length));
    }
    if (clock_ != nullptr && clock_->crashed()) return partalign::MakeError("power failure");
    // The write the power fails in may still reach the cache, whole or in part.
    const bool power_fails = clock_ != nullptr && clock_->Tick();
    std::vector<uint8_t> data(r.data, r.data + r.length);
    if (on_write_) on_write_(r.offset, data);
    std::memcpy(current_.data() + r.offset, data.data(), data.size());
    cache_.push_back({r.offset, std::move(data)});
    if (power_fails) return partalign::MakeError("power failure");
  }
  return {};
}

partalign::Status SimulatedDisk::Flush() {
  std::lock_guard lock(mutex_);
  if (clock_ != nullptr && clock_->Tick()) return partalign::MakeError("power failure");
  durable_ = current_;
  cache_.clear();
  return {};
}

std::vector<uint8_t> SimulatedDisk::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

std::vector<uint8_t> SimulatedDisk::SurvivingImage(std::mt19937_64& rng) const {
  std::lock_guard lock(mutex_);
  switch (rng() % 4) {
    case 0:
      return durable_;  // the cache was lost entirely
    case 1:
      return current_;  // everything reached the medium (a process kill)
    default:
      break;
  }
  std::vector<uint8_t> image = durable_;
  std::vector<size_t> order(cache_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i : order) {
    const CachedWrite& w = cache_[i];
    for (uint64_t at = 0; at < w.data.size(); at += sector_) {
      if (rng() % 2 == 0) std::memcpy(image.data() + w.offset + at, w.data.data() + at, sector_);
    }
  }
  return image;
}

void SimulatedDisk::FailReads(uint64_t offset, uint64_t length) {
  std::lock_guard lock(mutex_);
  fail_offset_ = offset;
  fail_length_ = length;
}

void SimulatedDisk::OnWrite(std::function<void(uint64_t offset, std::span<uint8_t> data)> hook) {
  std::lock_guard lock(mutex_);
  on_write_ = std::move(hook);
}

void SimulatedDisk::Poke(uint64_t offset, std::span<const uint8_t> bytes) {
  std::lock_guard lock(mutex_);
  std::memcpy(current_.data() + offset, bytes.data(), bytes.size());
  std::memcpy(durable_.data() + offset, bytes.data(), bytes.size());
}

}  // namespace partalign::test
