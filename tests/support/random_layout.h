// SPDX-License-Identifier: GPL-3.0-or-later
// Seeded random partition tables for the planner's property tests: GPT and DOS (with extended
// and logical partitions), 512 and 4096-byte sectors, the start patterns real disks carry
// (63-sector DOS era, 65535-sector JMicron-era parted, 2055 from an offset disk, 1 MiB,
// arbitrary), partitions back to back or with gaps, with and without data, filesystems of
// known and unknown size. Every table is one sfdisk 2.38 can write as it is (DOS logical
// partitions keep libfdisk's EBR gap). Header-only and pure: used by tests/core and tests/cli.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "partalign/layout/partition_table.h"

namespace partalign::test {

struct RandomLayoutOptions {
  LabelType label = LabelType::kGpt;
  uint64_t sector_size = 512;
  uint64_t disk_sectors = 0;  ///< 0: random
  /// DOS: libfdisk's first LBA on the target (2048 for 512-byte images of 4 MiB and more).
  uint64_t dos_first_lba = 2048;
  bool random_contents = true;
};

class RandomLayout {
 public:
  explicit RandomLayout(uint64_t seed) : rng_(seed) {}

  uint64_t Uniform(uint64_t lo, uint64_t hi) {  // inclusive
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  PartitionTable Make(const RandomLayoutOptions& options) {
    PartitionTable t;
    t.label = options.label;
    t.sector_size = options.sector_size;
    const uint64_t ss = options.sector_size;
    const uint64_t mib = (1ull << 20) / ss;
    t.disk_size_sectors =
        options.disk_sectors ? options.disk_sectors : Uniform(64, 4096) * mib + Uniform(0, mib);
    const uint64_t n = t.disk_size_sectors;
    if (options.label == LabelType::kGpt) {
      const uint64_t entries = 16384 / ss;  // 128 entries of 128 bytes
      t.first_usable_lba = Chance(0.7) ? 2 + entries : AlignUpTo(2 + entries, mib);
      t.last_usable_lba = n - 2 - entries;
      t.disk_id = "3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11";
    } else {
      t.first_usable_lba = options.dos_first_lba;
      t.last_usable_lba = std::min<uint64_t>(n - 1, 0xFFFFFFFFull);
      t.disk_id = "0x12345678";
    }
    style_ = static_cast<int>(Uniform(0, 5));
    const uint64_t lo = options.label == LabelType::kGpt ? t.first_usable_lba : 1;
    const uint64_t hi = t.last_usable_lba;
    uint64_t cursor = lo;
    if (options.label == LabelType::kGpt) {
      const uint64_t count = Uniform(1, Chance(0.1) ? 24 : 8);
      for (uint64_t i = 0; i < count; ++i) {
        if (!Place(&t, i + 1, PartitionKind::kPrimary, &cursor, hi, count - i, mib)) break;
      }
    } else {
      MakeDos(&t, options, &cursor, hi, mib);
      std::sort(t.partitions.begin(), t.partitions.end(),
                [](const Partition& a, const Partition& b) { return a.number < b.number; });
    }
    if (options.random_contents) {
      for (Partition& p : t.partitions) {
        if (p.kind != PartitionKind::kExtended) p.contents = Contents(p.size_sectors * ss);
      }
    }
    return t;
  }

  PartitionContents Contents(uint64_t size_bytes) {
    PartitionContents c;
    if (!Chance(0.6)) {
      c.proof = ContentProof::kZeros;
      return c;
    }
    c.proof = ContentProof::kSignature;
    static const char* kTypes[] = {"ext4", "vfat", "xfs",         "btrfs",
                                   "swap", "",     "crypto_LUKS", "linux_raid_member"};
    c.fs_type = kTypes[Uniform(0, Chance(0.05) ? 7 : 6)];
    if (c.fs_type == "ext4" || c.fs_type == "xfs") c.fs_block_size = 4096;
    if (c.fs_type == "vfat") c.fs_block_size = 512;
    if (!c.fs_type.empty() && c.fs_type != "crypto_LUKS" && Chance(0.6)) {
      uint64_t blocks = size_bytes / 4096;
      uint64_t used = Chance(0.5) ? blocks : Uniform(blocks / 2, blocks);
      if (used > 0) c.fs_size_bytes = used * 4096;
      if (Chance(0.03)) c.fs_size_bytes = size_bytes + 4096;  // larger than its partition
    }
    return c;
  }

 private:
  static uint64_t AlignUpTo(uint64_t v, uint64_t g) { return (v + g - 1) / g * g; }

  // The next start after `cursor` in the layout's style.
  uint64_t NextStart(uint64_t cursor, uint64_t mib) {
    uint64_t gap = Chance(0.45) ? 0 : (Chance(0.7) ? Uniform(1, 2 * mib) : Uniform(1, 64 * mib));
    uint64_t s = cursor + gap;
    switch (Chance(0.15) ? static_cast<int>(Uniform(0, 5)) : style_) {
      case 0:  // DOS era: 63, then cylinder boundaries (255 x 63)
        return s <= 63 ? 63 : (gap == 0 ? s : AlignUpTo(s, 16065));
      case 1:  // parted behind a JMicron bridge: multiples of 65535
        return gap == 0 && s > 65535 ? s : AlignUpTo(std::max<uint64_t>(s, 65535), 65535);
      case 2:  // parted on an offset disk: 7 + k * 2048
        return s <= 2055 ? 2055 : AlignUpTo(s - 7, 2048) + 7;
      case 3:  // aligned
        return AlignUpTo(s, mib);
      case 4:  // anything
        return s + Uniform(0, 100);
      default:  // 4 KiB multiples
        return AlignUpTo(s, 4096 / std::min<uint64_t>(4096, 512));
    }
  }

  uint64_t RandomSize(uint64_t mib, uint64_t room) {
    uint64_t size;
    switch (Uniform(0, 3)) {
      case 0:
        size = Uniform(1, mib);  // below a grain
        break;
      case 1:
        size = Uniform(1, 64) * mib;  // a whole number of MiB
        break;
      case 2:
        size = Uniform(mib, 512 * mib);
        break;
      default:
        size = Uniform(1, 4) * 65535;  // JMicron-era sizes
        break;
    }
    return std::max<uint64_t>(1, std::min(size, room));
  }

  bool Place(PartitionTable* t, uint32_t number, PartitionKind kind, uint64_t* cursor, uint64_t hi,
             uint64_t left, uint64_t mib) {
    uint64_t s = NextStart(*cursor, mib);
    if (s > hi) return false;
    uint64_t room = hi - s + 1;
    uint64_t size =
        left == 1 && Chance(0.3) ? room : RandomSize(mib, room / std::max<uint64_t>(left, 1) + 1);
    size = std::min(size, room);
    Partition p;
    p.number = number;
    p.kind = kind;
    p.start_sector = s;
    p.size_sectors = size;
    Describe(t, &p);
    t->partitions.push_back(p);
    *cursor = s + size;
    return true;
  }

  void Describe(const PartitionTable* t, Partition* p) {
    if (t->label == LabelType::kGpt) {
      static const char* kTypes[] = {"0FC63DAF-8483-4772-8E79-3D69D8477DE4",
                                     "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
                                     "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"};
      p->type_code = kTypes[Uniform(0, 2)];
      char uuid[40];
      std::snprintf(uuid, sizeof uuid, "%08X-1111-4222-8333-%012llX", p->number,
                    static_cast<unsigned long long>(Uniform(0, 0xFFFFFFFFFFFFull)));
      p->uuid = uuid;
      if (Chance(0.5)) p->name = "part" + std::to_string(p->number);
      if (Chance(0.1)) p->attributes = "RequiredPartition";
    } else {
      p->type_code = p->kind == PartitionKind::kExtended ? "0x05" : (Chance(0.8) ? "0x83" : "0x82");
      p->bootable = p->kind == PartitionKind::kPrimary && Chance(0.2);
    }
  }

  void MakeDos(PartitionTable* t, const RandomLayoutOptions& o, uint64_t* cursor, uint64_t hi,
               uint64_t mib) {
    const uint64_t primaries = Uniform(1, 4);
    const bool extended = Chance(0.6);
    const uint64_t ext_slot = extended ? Uniform(1, primaries) : 0;
    for (uint64_t i = 1; i <= primaries; ++i) {
      if (i != ext_slot) {
        if (!Place(t, static_cast<uint32_t>(i), PartitionKind::kPrimary, cursor, hi,
                   primaries - i + 1, mib)) {
          return;
        }
        continue;
      }
      // The extended partition and its logical partitions.
      uint64_t x = NextStart(*cursor, mib);
      if (x + 4 > hi) return;
      uint64_t f = o.dos_first_lba;
      uint64_t first_gap =
          Chance(0.5) ? Uniform(1, std::max<uint64_t>(f - 1, 1)) : f + Uniform(0, mib);
      uint64_t f_eff = first_gap < f || x < f ? 1 : f;
      uint64_t c = x + first_gap;
      const uint64_t count = Uniform(0, 6);
      uint64_t last_end = x;
      uint32_t number = 5;
      for (uint64_t k = 0; k < count; ++k) {
        uint64_t s = c;
        if (k > 0) {
          uint64_t extra = Chance(0.4) ? 0 : Uniform(0, 2 * mib);
          s = c + f_eff + extra;
          if (Chance(0.5)) s = std::max(s, NextStart(c + f_eff, mib));
        }
        if (s + 1 > hi) break;
        uint64_t size = std::min(RandomSize(mib, (hi - s + 1) / (count - k + 1) + 1), hi - s + 1);
        Partition p;
        p.number = number++;
        p.kind = PartitionKind::kLogical;
        p.start_sector = s;
        p.size_sectors = size;
        Describe(t, &p);
        t->partitions.push_back(p);
        last_end = s + size - 1;
        c = last_end + 1;
      }
      uint64_t ext_end = std::min(hi, last_end + (Chance(0.5) ? 0 : Uniform(1, 8 * mib)));
      if (count == 0) ext_end = std::min(hi, x + Uniform(1, 16 * mib));
      Partition e;
      e.number = static_cast<uint32_t>(i);
      e.kind = PartitionKind::kExtended;
      e.start_sector = x;
      e.size_sectors = ext_end - x + 1;
      Describe(t, &e);
      t->partitions.push_back(e);
      *cursor = ext_end + 1;
    }
  }

  std::mt19937_64 rng_;
  int style_ = 0;
};

}  // namespace partalign::test
