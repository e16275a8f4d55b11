// SPDX-License-Identifier: GPL-3.0-or-later
// The randomized differential test of apply (docs/safety.md, "Every byte"): seeded random
// disks - DOS with logical partitions and GPT, 512- and 4096-byte sectors, 1 to 12 partitions
// at random starts with random gaps and sizes - each partition filled with one kind of
// contents (a filesystem with files: ext4, XFS, btrfs, vfat, exFAT, NTFS; swap, an LVM2 PV with
// data in its LV, LUKS; raw random bytes, raw bytes that begin past the first MiB, bytes only in
// the last sector, sparse islands, written zeros, holes) and random bytes in every gap. Then
// `partalign plan` + `apply`, on the loop device or on the image file, some applies killed at a
// random point of their data moves and recovered as a user would (`resume`, then a new plan),
// until the plan has nothing left to do. The verdict: the disk invariant
// (support/disk_invariant.h) against a copy taken before, with only the partitions made of
// zeros allowed to stay behind; each filesystem's own checker; every file read back.
//
// Usage (as root; scripts/apply-invariant-sweep wraps it):
//   partalign_apply_invariant_sweep [--cases N] [--seed S] [--case I] [--minutes M]
//                                   [--kill-fraction F] [--make-room-fraction F]
//                                   [--dir DIR] [--keep] [--verbose] [--max-rounds N]
//                                   [--way auto|copies|ordered] [--kill-at K]
// --case I runs only case I of seed S (what a failure prints to reproduce it); --minutes M
// runs cases until M minutes have passed (then --cases is only a ceiling); --max-rounds N: the
// plans a case may make, each applied when it has work (default 4; 2: one plan + apply, and
// the plan after it finds nothing to do). A quarter of the
// cases (--make-room-fraction) plan and apply with --make-room: a partition's contents may be
// shrunk by its own tool, and only its checker and files judge its bytes then. --way W is
// apply's (left out: apply chooses by measuring the disk, so a case may take either way from
// run to run); --kill-at K kills the cases drawn to be killed at point K instead of the drawn
// one (every point of one case, one run each: a loop over K).
// PARTALIGN=path/to/partalign overrides the partalign built with it.
// Exit status: 0 no violation, 1 a violation or an error, 77 skipped (not root).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "io/table/fdisk_table.h"
#include "io/util/unique_fd.h"
#include "partalign/layout/ebr_placement.h"
#include "support/disk_invariant.h"
#include "support/loop_device.h"
#include "support/mount_point.h"
#include "support/old_tool_disks.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/table_readers.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;
using test::RunCommand;

constexpr int kSkipped = 77;
constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB;
// At most this many plan + apply rounds per case: a plan that still finds work after them is
// a failure (apply must converge).
constexpr int kMaxRounds = 4;
// The mover's kill points are counted per process across an apply's steps; a kill is drawn
// uniformly below this (a point past the end lets apply finish: counted as "not killed").
constexpr int kMaxKillPoint = 160;
// Mixed into the seed for the draw of --make-room (a stream of its own).
constexpr uint64_t kMakeRoomStream = 0x6d616b65726f6f6dull;  // "makeroom"

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct Options {
  uint64_t cases = 100;
  uint64_t seed = 1;
  std::optional<uint64_t> only_case;
  double minutes = 0;
  double kill_fraction = 0.25;
  double make_room_fraction = 0.25;
  std::string dir;
  bool keep = false;
  bool verbose = false;
  /// apply's --way (auto, copies, ordered); empty: apply's default, chosen by measurement.
  std::string way;
  /// Overrides the kill point of a case drawn to be killed (--kill-at), 0: the drawn one.
  int kill_at = 0;
  /// The plans a case may make (each applied when it has work): the last must find nothing.
  int max_rounds = kMaxRounds;
};

enum class Kind {
  kExt4,
  kXfs,
  kBtrfs,
  kVfat,
  kExfat,
  kNtfs,
  kSwap,
  kLvm,
  kLuks,
  kRandom,
  kAfterFirstMiB,
  kLastSector,
  kIslands,
  kZeros,
  kHoles,
};
constexpr int kKinds = 15;

const char* Name(Kind k) {
  static const char* kNames[kKinds] = {"ext4",       "xfs",         "btrfs",   "vfat",  "exfat",
                                       "ntfs",       "swap",        "lvm",     "luks",  "random",
                                       "after-1mib", "last-sector", "islands", "zeros", "holes"};
  return kNames[static_cast<int>(k)];
}

// How often each kind is drawn, and its size range in MiB.
struct KindTraits {
  int weight;
  uint64_t min_mib;
  uint64_t max_mib;
};
const KindTraits& Traits(Kind k) {
  static const KindTraits kTraits[kKinds] = {{12, 2, 24}, {4, 16, 40}, {4, 16, 40}, {8, 1, 24},
                                             {5, 4, 24},  {5, 2, 24},  {5, 1, 8},   {5, 4, 24},
                                             {4, 3, 16},  {8, 1, 32},  {8, 2, 32},  {6, 1, 16},
                                             {6, 2, 32},  {6, 1, 24},  {6, 1, 24}};
  return kTraits[static_cast<int>(k)];
}

bool IsFilesystem(Kind k) {
  return k == Kind::kExt4 || k == Kind::kXfs || k == Kind::kBtrfs || k == Kind::kVfat ||
         k == Kind::kExfat || k == Kind::kNtfs;
}

// The partitions whose bytes are all zero: the only ones that may stay behind.
bool IsEmptyByConstruction(Kind k) { return k == Kind::kZeros || k == Kind::kHoles; }

struct PartSpec {
  uint32_t number = 0;
  Kind kind = Kind::kRandom;
  uint64_t start = 0;  // sectors
  uint64_t size = 0;
  bool logical = false;
  std::map<std::string, std::string> files;  // filesystems: name -> contents
};

struct DiskSpec {
  bool gpt = true;
  unsigned ss = 512;
  bool on_image = false;  // partalign runs on the image file instead of the loop device
  bool kill = false;
  int kill_point = 0;
  bool rollback = false;
  /// plan and apply with --make-room: a partition's contents may be shrunk to make room.
  bool make_room = false;
  std::vector<PartSpec> parts;
  std::optional<std::pair<uint64_t, uint64_t>> extended;  // start, size (sectors)
  uint64_t sectors = 0;
  /// A table as Windows XP or the old Linux fdisk wrote it, byte for byte (cylinders, EBRs on
  /// them, logical partitions 63 sectors after their EBRs): written from this, not by sfdisk.
  std::optional<test::OldLayout> old_layout;
  /// Every partition right after the one before, the last one to the disk's end.
  bool full = false;
};

std::string Describe(const DiskSpec& d) {
  std::string out = fmt::format(
      "{}{}{} {} {}{}", d.gpt ? "gpt" : "dos",
      !d.old_layout                                     ? ""
      : d.old_layout->tool == test::OldTool::kWindowsXp ? " xp"
                                                        : " old-fdisk",
      d.full ? " full" : "", d.ss, d.on_image ? "image" : "loop",
      d.kill ? fmt::format(" kill@{}{}", d.kill_point, d.rollback ? "+rollback" : "") : "");
  if (d.make_room) out += " make-room";
  for (const PartSpec& p : d.parts) {
    out += fmt::format(" | {}{}:{}@{}+{}", p.logical ? "L" : "", p.number, Name(p.kind), p.start,
                       p.size);
  }
  return out;
}

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : engine_() % n; }
  uint64_t Between(uint64_t lo, uint64_t hi) { return lo + Below(hi - lo + 1); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(engine_) < p; }
  std::string Bytes(size_t n) {
    std::string out(n, '\0');
    for (size_t i = 0; i < n; i += 8) {
      uint64_t v = engine_();
      std::memcpy(out.data() + i, &v, std::min<size_t>(8, n - i));
    }
    return out;
  }
  Kind AnyKind() {
    int total = 0;
    for (int i = 0; i < kKinds; ++i) total += Traits(static_cast<Kind>(i)).weight;
    int pick = static_cast<int>(Below(total));
    for (int i = 0; i < kKinds; ++i) {
      pick -= Traits(static_cast<Kind>(i)).weight;
      if (pick < 0) return static_cast<Kind>(i);
    }
    return Kind::kRandom;
  }

 private:
  std::mt19937_64 engine_;
};

// A start at or after `at`: sometimes on the 1 MiB grain, mostly off it, as old tools left them.
uint64_t DrawStart(Random& r, uint64_t at, unsigned ss) {
  const uint64_t grain = kMiB / ss;
  uint64_t start = at;
  switch (r.Below(4)) {
    case 0:
      break;  // right after what precedes it
    case 1:
      start = at + r.Between(1, 64);
      break;
    case 2:
      start = at + r.Between(1, 3 * grain);
      break;
    default:
      start = (at + grain - 1) / grain * grain;  // aligned already
      if (r.Chance(0.5)) start += r.Between(1, grain - 1);
      break;
  }
  return start;
}

// The kill and the files of a drawn disk.
void DrawKillAndFiles(Random& r, double kill_fraction, DiskSpec& d) {
  if (r.Chance(kill_fraction)) {
    d.kill = true;
    // The switch counts from 1 (PARTALIGN_TEST_KILL_AFTER=0 is refused): a draw of 0 is 1.
    d.kill_point = std::max(1, static_cast<int>(r.Below(kMaxKillPoint)));
    d.rollback = r.Chance(0.25);
  }
  // Files for the filesystems: a few, of odd sizes, small next to the filesystem.
  for (PartSpec& p : d.parts) {
    if (!IsFilesystem(p.kind)) continue;
    const uint64_t budget = p.size * d.ss / 8;
    const int files = static_cast<int>(r.Between(1, 6));
    for (int f = 0; f < files; ++f) {
      size_t n = static_cast<size_t>(r.Between(1, std::min<uint64_t>(budget / files, 300 * kKiB)));
      p.files[fmt::format("f{}-{}.bin", p.number, f)] = r.Bytes(n);
    }
  }
}

// A disk laid out as Windows XP or the old Linux fdisk laid it out (support/old_tool_disks.h):
// 512-byte sectors, cylinders of 255 x 63, partitions of whole cylinders to the last one.
DiskSpec DrawOldToolDisk(Random& r, double kill_fraction) {
  DiskSpec d;
  d.ss = 512;
  d.gpt = false;
  d.on_image = r.Chance(0.5);
  test::OldLayout layout;
  layout.tool = r.Chance(0.5) ? test::OldTool::kWindowsXp : test::OldTool::kOldFdisk;
  const uint64_t cylinder_bytes = test::kCylinderSectors * 512;
  const int primaries = static_cast<int>(r.Between(1, 3));
  const int logicals = r.Chance(0.7) ? static_cast<int>(r.Between(1, 4)) : 0;
  std::vector<Kind> kinds;
  uint64_t cylinders = 0;
  auto draw = [&](std::vector<test::OldPartition>* into) {
    const Kind k = r.AnyKind();
    const KindTraits& t = Traits(k);
    const uint64_t least = (t.min_mib * kMiB + cylinder_bytes - 1) / cylinder_bytes + 1;
    const uint64_t most = std::max(least, (t.max_mib * kMiB + cylinder_bytes - 1) / cylinder_bytes);
    const uint64_t n = r.Between(least, most);
    into->push_back({"", n, false});
    kinds.push_back(k);
    cylinders += n;
  };
  for (int i = 0; i < primaries; ++i) draw(&layout.primaries);
  for (int i = 0; i < logicals; ++i) draw(&layout.logicals);
  layout.disk_bytes = (cylinders * test::kCylinderSectors + r.Below(test::kCylinderSectors)) * 512;
  size_t k = 0;
  for (const test::OldPlace& place : test::OldPlaces(layout)) {
    if (place.type == 0x05 || place.type == 0x0f) {
      d.extended = {{place.start, place.size}};
      continue;
    }
    PartSpec p;
    p.number = place.number;
    p.kind = kinds[k++];
    p.start = place.start;
    p.size = place.size;
    p.logical = place.number >= 5;
    d.parts.push_back(p);
  }
  d.sectors = layout.disk_bytes / 512;
  d.old_layout = layout;
  DrawKillAndFiles(r, kill_fraction, d);
  return d;
}

DiskSpec DrawDisk(Random& r, double kill_fraction) {
  // One case in six as the old tools laid disks out.
  if (r.Chance(1.0 / 6)) return DrawOldToolDisk(r, kill_fraction);
  DiskSpec d;
  d.ss = r.Chance(0.7) ? 512 : 4096;
  d.gpt = r.Chance(0.5);
  d.on_image = r.Chance(0.5);
  d.kill = false;
  // One in eight full: no gaps, the last partition to the disk's end.
  d.full = r.Chance(1.0 / 8);
  const int count =
      r.Chance(0.6) ? static_cast<int>(r.Between(1, 4)) : static_cast<int>(r.Between(5, 12));
  const uint64_t ss = d.ss;
  uint64_t at = d.gpt ? 2 + 16384 / ss : (r.Chance(0.5) ? 63 : 1);
  if (!d.gpt && ss == 4096 && at == 63) at = 8;
  auto size_of = [&](Kind k) {
    const KindTraits& t = Traits(k);
    uint64_t bytes = r.Between(t.min_mib * kMiB, t.max_mib * kMiB);
    uint64_t sectors = std::max<uint64_t>(bytes / ss, (t.min_mib * kMiB + ss - 1) / ss);
    if (r.Chance(0.5)) sectors = (sectors + 7) / 8 * 8;  // a 4 KiB multiple, as most are
    return sectors;
  };
  int primaries = count;
  int logicals = 0;
  if (!d.gpt && count > 4) {
    primaries = static_cast<int>(r.Below(4));  // 0-3, the extended partition is the 4th
    logicals = count - primaries;
  } else if (!d.gpt && count >= 2 && r.Chance(0.3)) {
    primaries = static_cast<int>(r.Below(count));
    logicals = count - primaries;
  }
  auto start_at = [&](uint64_t from) { return d.full ? from : DrawStart(r, from, d.ss); };
  uint32_t number = 1;
  for (int i = 0; i < primaries; ++i) {
    PartSpec p;
    p.number = number++;
    p.kind = r.AnyKind();
    p.start = start_at(at);
    p.size = size_of(p.kind);
    at = p.start + p.size;
    d.parts.push_back(p);
  }
  if (logicals > 0) {
    const uint64_t ext_start = start_at(at);
    uint64_t lat = ext_start + 1;
    uint32_t logical_number = 5;
    for (int i = 0; i < logicals; ++i) {
      PartSpec p;
      p.number = logical_number++;
      p.logical = true;
      p.kind = r.AnyKind();
      // Room for this partition's EBR before it (libfdisk puts it one sector before at the
      // least): the first logical partition's EBR is the extended partition's first sector.
      p.start = start_at(i == 0 ? lat : lat + 1);
      p.size = size_of(p.kind);
      lat = p.start + p.size;
      d.parts.push_back(p);
    }
    const uint64_t ext_end = d.full ? lat : lat + r.Below(2 * kMiB / ss);
    d.extended = {{ext_start, ext_end - ext_start}};
    at = ext_end;
  }
  // Room after the last partition to move up into, sometimes none.
  const uint64_t tail = !d.full && r.Chance(0.8) ? r.Between(kMiB / ss, 8 * kMiB / ss) : 0;
  d.sectors = at + tail + (d.gpt ? 1 + 16384 / ss : 0) + (d.full && !d.gpt ? 0 : 1);
  DrawKillAndFiles(r, kill_fraction, d);
  return d;
}

std::string SfdiskScript(const DiskSpec& d) {
  std::string s = fmt::format("label: {}\n", d.gpt ? "gpt" : "dos");
  if (d.gpt) s += fmt::format("first-lba: {}\n", 2 + 16384 / d.ss);
  bool ext_done = false;
  for (const PartSpec& p : d.parts) {
    if (p.logical && !ext_done) {
      s += fmt::format("start={}, size={}, type=5\n", d.extended->first, d.extended->second);
      ext_done = true;
    }
    s += fmt::format("start={}, size={}, type={}\n", p.start, p.size,
                     d.gpt ? "0FC63DAF-8483-4772-8E79-3D69D8477DE4" : "83");
  }
  return s;
}

// Runs `argv`; throws with its output unless it exits 0.
std::string Must(const std::vector<std::string>& argv, const std::string& input = "",
                 const std::map<std::string, std::string>& env = {}) {
  CommandResult r = RunCommand(argv, input, env);
  if (r.exit_code != 0) throw std::runtime_error(test::Describe(argv, r));
  return r.out;
}

void WriteAt(const std::string& target, uint64_t offset, const std::string& bytes) {
  Must({"dd", "of=" + target, "bs=64K", fmt::format("seek={}", offset), "oflag=seek_bytes",
        "iflag=fullblock", "conv=notrunc", "status=none"},
       bytes);
}

std::string Partalign() {
  const char* env = std::getenv("PARTALIGN");
  return env && *env ? env : PARTALIGN_BINARY;
}

// Environment for LVM2 without device-mapper (environment.md): no activation, only `node`.
std::vector<std::string> LvmArgs(const std::string& command, const std::string& node) {
  return {command, "--config", "global{activation=0}", "--devices", node};
}

// One case: the disk built on an image and a loop device, planned and applied until nothing is
// left, then judged.
class Case {
 public:
  Case(const Options& options, uint64_t index, const DiskSpec& spec, Random& random)
      : options_(options), index_(index), d_(spec), r_(random) {
    base_ = fs::path(options.dir) / fmt::format("case{}", index);
    fs::remove_all(base_);
    fs::create_directories(base_ / "mnt");
    fs::create_directories(base_ / "state");
    image_ = (base_ / "disk.img").string();
  }
  ~Case() {
    Detach();
    if (!keep_) fs::remove_all(base_);
  }

  // Violations and errors, one line each; empty when the case passed.
  std::vector<std::string> Run() {
    Build();
    Must({"sync"});
    before_ = (base_ / "before.img").string();
    Must({"cp", "--sparse=always", image_, before_});
    if (d_.on_image) Detach();
    target_ = d_.on_image ? image_ : loop_->path();
    std::vector<std::string> out = ApplyUntilDone();
    if (!out.empty()) return out;
    test::DiskInvariantOptions invariant;
    invariant.before_sector_size = d_.ss;
    invariant.after_sector_size = d_.ss;
    for (const PartSpec& p : d_.parts) {
      if (IsEmptyByConstruction(p.kind)) invariant.left_behind.push_back(p.number);
    }
    // A partition whose contents a plan shrank (--make-room): its own tool rewrote them, so
    // its bytes are not where they were (rules 1 and 3); what is kept there is for its checker
    // and its files to prove (CheckContents). Rule 2 holds around it as everywhere. The same
    // for a filesystem whose boot records an apply that shrank rewrote unlisted.
    std::set<uint32_t> by_checker = shrunk_;
    by_checker.insert(unlisted_records_.begin(), unlisted_records_.end());
    for (uint32_t n : by_checker) {
      if (std::find(invariant.left_behind.begin(), invariant.left_behind.end(), n) ==
          invariant.left_behind.end()) {
        invariant.left_behind.push_back(n);
      }
    }
    // The boot records the applies said they rewrite (NTFS, FAT and exFAT boot sectors).
    for (const std::string& dry : dry_runs_) test::AddDryRunRecords(invariant, dry);
    for (const std::string& v : test::DiskInvariantViolations(before_, target_, invariant)) {
      out.push_back("invariant: " + v);
    }
    std::vector<std::string> checked = CheckContents();
    out.insert(out.end(), checked.begin(), checked.end());
    if (wrote_) {
      // The table apply wrote: its EBRs where the planner's model says libfdisk puts them, and
      // every reader reading it as sfdisk does (support/table_readers.h).
      for (const std::string& e : EbrModelProblems()) out.push_back("ebr model: " + e);
      for (const std::string& e : test::TableReaderProblems(*loop_, d_.ss)) {
        out.push_back("reader: " + e);
      }
    }
    return out;
  }

  // Where libfdisk put the EBRs of the table on the disk, against PredictEbrSectors.
  std::vector<std::string> EbrModelProblems() const {
    std::vector<std::string> out;
    if (d_.gpt) return out;
    // The image: the loop device the case wrote through was replaced by CheckContents.
    Result<TableRead> read =
        ReadPartitionTable(image_, {.sector_size = d_.ss, .probe_contents = false});
    if (!read) return {read.error().message};
    const PartitionTable& t = read->table;
    std::vector<uint64_t> actual;
    for (const TableArea& a : t.areas) {
      if (a.name == "EBR") actual.push_back(a.offset_bytes / t.sector_size);
    }
    std::vector<uint64_t> predicted;
    for (const auto& [n, sector] : PredictEbrSectors(t, t.first_usable_lba)) {
      predicted.push_back(sector);
    }
    if (actual != predicted) {
      out.push_back(fmt::format("libfdisk put the EBRs at {}, the model says {}",
                                fmt::join(actual, ", "), fmt::join(predicted, ", ")));
    }
    return out;
  }

  void Keep() { keep_ = true; }
  std::string Dir() const { return base_.string(); }
  int killed() const { return killed_; }
  int resumed() const { return resumed_; }
  int rolled_back() const { return rolled_back_; }
  int rounds() const { return rounds_; }
  /// The partitions whose contents a plan shrank to make room.
  size_t shrunk() const { return shrunk_.size(); }
  /// apply's one-line refusal, when it refused the case's plan before writing anything.
  const std::string& refused() const { return refused_; }

 private:
  std::string Node(const PartSpec& p) const {
    return loop_->PartitionPath(static_cast<int>(p.number));
  }

  void Attach() {
    loop_ = std::make_unique<test::LoopDevice>(image_, d_.ss);
    test::AddKernelPartitions(*loop_, d_.ss);
  }
  void Detach() { loop_.reset(); }

  void Build() {
    test::CreateSparseFile(image_, d_.sectors * d_.ss);
    if (d_.old_layout) {
      test::WriteOldToolTable(*d_.old_layout, image_, static_cast<uint32_t>(r_.Below(1ull << 32)));
    } else {
      test::SfdiskImage(image_, SfdiskScript(d_), d_.ss);
    }
    // Random bytes in every gap: every byte outside the partitions and the table. Written to the
    // image before the loop device exists: through the whole loop device, a gap that ends or
    // starts inside a 4 KiB block is a read-modify-write of that block in the whole device's page
    // cache, and the partition's bytes it holds are written back whenever the last holder of the
    // device closes it. When another program held it at that moment (a blkid scanning devices, a
    // test beside), the write-back came after mkfs had written the partition through its own
    // node, and the stale block erased the start of the filesystem before partalign ever ran
    // (seed 20261127, case 0: the XFS superblock after a 2 KiB gap).
    std::vector<std::pair<uint64_t, uint64_t>> taken = test::TableAreaRanges(image_, d_.ss);
    for (const PartSpec& p : d_.parts)
      taken.push_back({p.start * d_.ss, (p.start + p.size) * d_.ss});
    std::sort(taken.begin(), taken.end());
    uint64_t at = 0;
    auto fill = [&](uint64_t from, uint64_t to) {
      if (to > from) WriteAt(image_, from, r_.Bytes(static_cast<size_t>(to - from)));
    };
    for (const auto& [first, end] : taken) {
      fill(at, first);
      at = std::max(at, end);
    }
    fill(at, d_.sectors * d_.ss);
    // Each partition through its own node: a partition's page cache holds only its own bytes.
    // The whole device held open meanwhile, as a program scanning devices may hold it: a write
    // through it would then be written back late in every run, not in an unlucky one.
    Attach();
    UniqueFd held(::open(loop_->path().c_str(), O_RDONLY | O_CLOEXEC));
    if (!held.valid()) throw std::runtime_error("cannot open " + loop_->path());
    for (const PartSpec& p : d_.parts) Fill(p);
  }

  void StageFiles(const PartSpec& p, const fs::path& dir) {
    fs::create_directories(dir);
    for (const auto& [name, bytes] : p.files) test::WriteFile((dir / name).string(), bytes);
  }

  void CopyFilesInto(const PartSpec& p, const std::string& mounted) {
    for (const auto& [name, bytes] : p.files) test::WriteFile(mounted + "/" + name, bytes);
  }

  void Fill(const PartSpec& p) {
    const std::string node = Node(p);
    const uint64_t bytes = p.size * d_.ss;
    const fs::path staging = base_ / fmt::format("staging{}", p.number);
    const std::string mnt = (base_ / "mnt").string();
    switch (p.kind) {
      case Kind::kExt4:
        StageFiles(p, staging);
        Must({"mkfs.ext4", "-q", "-F", "-d", staging.string(), node});
        break;
      case Kind::kXfs: {
        Must({"mkfs.xfs", "-q", "-f", node}, "",
             {{"TEST_DIR", "1"}, {"TEST_DEV", "1"}, {"QA_CHECK_FS", "1"}});
        test::MountPoint m(node, mnt);
        CopyFilesInto(p, mnt);
        if (!m.Unmount()) throw std::runtime_error("cannot unmount " + node);
        break;
      }
      case Kind::kBtrfs:
        StageFiles(p, staging);
        Must({"mkfs.btrfs", "-q", "-f", "--mixed", "--rootdir", staging.string(), node});
        break;
      case Kind::kVfat:
        Must({"mkfs.vfat", node});
        StageFiles(p, staging);
        for (const auto& [name, unused] : p.files) {
          Must({"mcopy", "-i", node, (staging / name).string(), "::/" + name});
        }
        break;
      case Kind::kExfat: {
        Must({"mkfs.exfat", node});
        Must({"mount.exfat-fuse", node, mnt});
        CopyFilesInto(p, mnt);
        Must({"umount", mnt});
        break;
      }
      case Kind::kNtfs:
        Must({"mkntfs", "-q", "-F", "-Q", node});
        Must({"ntfs-3g", node, mnt});
        CopyFilesInto(p, mnt);
        Must({"umount", mnt});
        break;
      case Kind::kSwap:
        Must({"mkswap", node});
        break;
      case Kind::kLvm: {
        const std::string vg = fmt::format("sweep{}c{}p{}", ::getpid(), index_, p.number);
        std::vector<std::string> pv = LvmArgs("pvcreate", node);
        pv.insert(pv.end(), {"-q", "-y", node});
        Must(pv);
        std::vector<std::string> vgc = LvmArgs("vgcreate", node);
        vgc.insert(vgc.end(), {"-q", "-s", "1m", vg, node});
        Must(vgc);
        const uint64_t lv_mib = std::max<uint64_t>(1, bytes / kMiB / 2);
        std::vector<std::string> lv = LvmArgs("lvcreate", node);
        lv.insert(lv.end(), {"-q", "-an", "-Zn", "-L", fmt::format("{}m", lv_mib), "-n", "lv", vg});
        Must(lv);
        std::vector<std::string> pvs = LvmArgs("pvs", node);
        pvs.insert(pvs.end(),
                   {"--noheadings", "--units", "b", "--nosuffix", "-o", "pe_start", node});
        const uint64_t pe_start = std::stoull(Must(pvs));
        WriteAt(node, pe_start, r_.Bytes(static_cast<size_t>(lv_mib * kMiB)));
        break;
      }
      case Kind::kLuks: {
        const std::string key = (base_ / fmt::format("key{}", p.number)).string();
        test::WriteFile(key, r_.Bytes(64));
        Must({"cryptsetup", "luksFormat", "--batch-mode", "--type", "luks1",
              "--pbkdf-force-iterations", "1000", "--key-file", key, node});
        const std::string dump = Must({"cryptsetup", "luksDump", node});
        const size_t at = dump.find("Payload offset:");
        if (at == std::string::npos) throw std::runtime_error("luksDump: no payload offset");
        const uint64_t payload = std::stoull(dump.substr(at + 15)) * 512;
        if (payload < bytes) WriteAt(node, payload, r_.Bytes(static_cast<size_t>(bytes - payload)));
        break;
      }
      case Kind::kRandom:
        WriteAt(node, 0, r_.Bytes(static_cast<size_t>(bytes)));
        break;
      case Kind::kAfterFirstMiB: {
        WriteAt(node, 0, std::string(std::min<uint64_t>(kMiB, bytes), '\0'));
        if (bytes > kMiB) {
          const uint64_t length = r_.Between(1, bytes - kMiB);
          WriteAt(node, kMiB, r_.Bytes(static_cast<size_t>(length)));
        }
        break;
      }
      case Kind::kLastSector:
        WriteAt(node, bytes - d_.ss, r_.Bytes(d_.ss));
        break;
      case Kind::kIslands: {
        const int islands = static_cast<int>(r_.Between(1, 5));
        for (int i = 0; i < islands; ++i) {
          const uint64_t length = r_.Between(1, std::min<uint64_t>(64 * kKiB, bytes));
          WriteAt(node, r_.Below(bytes - length + 1), r_.Bytes(static_cast<size_t>(length)));
        }
        break;
      }
      case Kind::kZeros:
        WriteAt(node, 0, std::string(static_cast<size_t>(bytes), '\0'));
        break;
      case Kind::kHoles:
        break;  // the image's holes: never written
    }
  }

  std::vector<std::string> SectorSizeArgs() const {
    if (d_.on_image && d_.ss != 512) return {"--sector-size", std::to_string(d_.ss)};
    return {};
  }

  CommandResult Run(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    env["PARTALIGN_STATE_DIR"] = (base_ / "state").string();
    args.insert(args.begin(), Partalign());
    CommandResult r = RunCommand(args, "", env);
    if (options_.verbose) fmt::print(stderr, "  {}\n", test::Describe(args, r));
    return r;
  }

  // The journals a killed apply left.
  std::vector<std::string> Journals() const {
    return test::FilesIn((base_ / "journals").string(), ".partalign-journal");
  }

  // plan + apply until the plan has nothing to do; the first apply killed when the case says
  // so, and recovered as apply's messages tell a user to.
  std::vector<std::string> ApplyUntilDone() {
    const std::string plan = (base_ / "plan.json").string();
    for (rounds_ = 0; rounds_ < options_.max_rounds; ++rounds_) {
      std::vector<std::string> plan_args = {"plan", target_, "-o", plan};
      for (const std::string& a : SectorSizeArgs()) plan_args.push_back(a);
      if (d_.make_room) plan_args.push_back("--make-room");
      CommandResult planned = Run(plan_args);
      if (planned.exit_code != 0) return {"plan failed: " + test::Describe(plan_args, planned)};
      nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan), nullptr, false);
      bool work = false, moves = false, shrinks = false;
      for (const nlohmann::json& a : doc.value("actions", nlohmann::json::array())) {
        const std::string kind = a.value("kind", "");
        work |= kind == "table-only" || kind == "move-data";
        moves |= kind == "move-data";
        if (a.contains("shrink")) {
          shrinks = true;
          shrunk_.insert(a.value("partition", 0u));
        }
      }
      if (!work) return {};
      if (shrinks) {
        // apply's dry run of a plan that shrinks shows the shrinks and the actions after them,
        // not the boot records (NTFS, FAT, exFAT boot sectors) those moves rewrite: a filesystem
        // moved in such a round is judged by its checker and its files, as a shrunk one is.
        for (const nlohmann::json& a : doc.value("actions", nlohmann::json::array())) {
          const uint32_t n = a.value("partition", 0u);
          for (const PartSpec& p : d_.parts) {
            if (p.number == n && a.value("kind", "") == "move-data" &&
                (p.kind == Kind::kNtfs || p.kind == Kind::kVfat || p.kind == Kind::kExfat)) {
              unlisted_records_.insert(n);
            }
          }
        }
      }
      std::vector<std::string> apply_args = {"apply",         "--yes",
                                             "--backup-dir",  (base_ / "backups").string(),
                                             "--journal-dir", (base_ / "journals").string()};
      for (const std::string& a : SectorSizeArgs()) apply_args.push_back(a);
      // apply takes --make-room for a plan that shrinks, and refuses it for one that does not.
      if (shrinks) apply_args.push_back("--make-room");
      if (!options_.way.empty()) apply_args.insert(apply_args.end(), {"--way", options_.way});
      apply_args.push_back(plan);
      std::vector<std::string> dry_args = apply_args;
      dry_args.insert(dry_args.end() - 1, {"--dry-run", "--json"});
      CommandResult dry = Run(dry_args);
      if (dry.exit_code == 0) dry_runs_.push_back(dry.out);
      std::map<std::string, std::string> env;
      const bool kill = d_.kill && moves && killed_ == 0;
      if (kill) env["PARTALIGN_TEST_KILL_AFTER"] = std::to_string(d_.kill_point);
      CommandResult applied = Run(apply_args, env);
      if (applied.exit_code == 128 + SIGKILL) {
        ++killed_;
        wrote_ = true;
        for (const std::string& journal : Journals()) {
          std::vector<std::string> resume = {"resume", journal, "--yes"};
          if (d_.rollback) resume.push_back("--rollback");
          CommandResult r = Run(resume);
          if (r.exit_code != 0) {
            // A journal killed while it was being made is not registered: resume says the
            // file can be removed, and nothing was written under it.
            if (r.err.find("can be removed") != std::string::npos) {
              fs::remove(journal);
              continue;
            }
            // Killed after the step's table was written: the move is complete, a rollback has
            // nothing to undo (resume exits 1 saying so, and the disk decides).
            if (d_.rollback && r.err.find("the move had already completed") != std::string::npos) {
              ++resumed_;
              continue;
            }
            return {"resume failed: " + test::Describe(resume, r)};
          }
          ++(d_.rollback ? rolled_back_ : resumed_);
        }
        continue;
      }
      if (applied.exit_code == 3 &&
          (applied.err.find("nothing was written") != std::string::npos ||
           applied.err.find("nothing else was written") != std::string::npos)) {
        // A refusal before any write (or, after a plan's shrinks, before any write of the rest:
        // "... is written ...; nothing else was written"): every plan partalign makes must be
        // one apply carries out (issue 38), so this fails the case.
        refused_ = applied.err.substr(0, applied.err.find('\n'));
        return {"apply refused the plan: " + test::Describe(apply_args, applied)};
      }
      if (applied.exit_code != 0) return {"apply failed: " + test::Describe(apply_args, applied)};
      wrote_ = true;
    }
    return {fmt::format("the plan still has work after {} rounds of plan and apply",
                        options_.max_rounds)};
  }

  // Each filesystem's checker, and every file read back; the other kinds' own checks.
  std::vector<std::string> CheckContents() {
    std::vector<std::string> out;
    // The partitions where the table on the disk says they are now, as a booted system would
    // have them (a new loop device, its partitions registered from the table).
    Detach();
    Attach();
    const std::string mnt = (base_ / "mnt").string();
    for (const PartSpec& p : d_.parts) {
      const std::string node = Node(p);
      auto check = [&](const std::vector<std::string>& argv,
                       std::map<std::string, std::string> env = {}) {
        CommandResult r = RunCommand(argv, "", env);
        if (r.exit_code != 0) {
          out.push_back(fmt::format("partition {} ({}): checker: {}", p.number, Name(p.kind),
                                    test::Describe(argv, r)));
          return false;
        }
        return true;
      };
      auto same_files = [&](const std::string& dir) {
        for (const auto& [name, bytes] : p.files) {
          std::string got;
          try {
            got = test::ReadFile(dir + "/" + name);
          } catch (const std::exception& e) {
            got = "<unreadable>";
          }
          if (got != bytes) {
            out.push_back(
                fmt::format("partition {} ({}): file '{}' differs", p.number, Name(p.kind), name));
          }
        }
      };
      try {
        switch (p.kind) {
          case Kind::kExt4:
            if (check({"e2fsck", "-fn", node})) {
              test::MountPoint m(node, mnt, "ro");
              same_files(mnt);
            }
            break;
          case Kind::kXfs:
            if (check({"xfs_repair", "-n", "-o", "force_geometry", node})) {
              test::MountPoint m(node, mnt, "ro");
              same_files(mnt);
            }
            break;
          case Kind::kBtrfs:
            if (check({"btrfs", "check", "--readonly", node})) {
              test::MountPoint m(node, mnt, "ro");
              same_files(mnt);
            }
            break;
          case Kind::kVfat:
            if (check({"fsck.vfat", "-n", node})) {
              const fs::path out_dir = base_ / fmt::format("out{}", p.number);
              fs::create_directories(out_dir);
              for (const auto& [name, unused] : p.files) {
                check({"mcopy", "-n", "-i", node, "::/" + name, (out_dir / name).string()});
              }
              same_files(out_dir.string());
            }
            break;
          case Kind::kExfat:
            if (check({"fsck.exfat", "-n", node})) {
              Must({"mount.exfat-fuse", "-o", "ro", node, mnt});
              same_files(mnt);
              Must({"umount", mnt});
            }
            break;
          case Kind::kNtfs:
            if (check({"ntfsfix", "-n", node})) {
              Must({"ntfs-3g", "-o", "ro", node, mnt});
              same_files(mnt);
              Must({"umount", mnt});
            }
            break;
          case Kind::kSwap:
            check({"swaplabel", node});
            break;
          case Kind::kLvm: {
            std::vector<std::string> lvs = LvmArgs("lvs", node);
            lvs.insert(lvs.end(), {"--noheadings", "-o", "lv_name"});
            CommandResult r = RunCommand(lvs);
            if (r.exit_code != 0 || r.out.find("lv") == std::string::npos) {
              out.push_back(fmt::format("partition {} (lvm): the LV is not listed: {}", p.number,
                                        test::Describe(lvs, r)));
            }
            break;
          }
          case Kind::kLuks: {
            const std::string key = (base_ / fmt::format("key{}", p.number)).string();
            check({"cryptsetup", "open", "--test-passphrase", "--key-file", key, node});
            break;
          }
          default:
            break;  // raw bytes: the invariant is the check
        }
      } catch (const std::exception& e) {
        out.push_back(fmt::format("partition {} ({}): {}", p.number, Name(p.kind), e.what()));
      }
    }
    return out;
  }

  const Options& options_;
  uint64_t index_;
  DiskSpec d_;
  Random& r_;
  fs::path base_;
  std::string image_;
  std::string before_;
  std::string target_;
  std::unique_ptr<test::LoopDevice> loop_;
  bool keep_ = false;
  int killed_ = 0;
  int resumed_ = 0;
  int rolled_back_ = 0;
  int rounds_ = 0;
  std::string refused_;
  bool wrote_ = false;                 ///< an apply wrote the table (or was killed while it did)
  std::vector<std::string> dry_runs_;  ///< each apply's --dry-run --json, for its boot records
  std::set<uint32_t> shrunk_;          ///< partitions a plan shrank (--make-room)
  /// Filesystems moved by an apply that shrank: boot records its dry run does not list.
  std::set<uint32_t> unlisted_records_;
};

// Whether libfdisk makes the table `spec` describes (on a throw-away sparse image in `dir`).
bool Creatable(const DiskSpec& spec, const std::string& dir) {
  const std::string image = (fs::path(dir) / "creatable.img").string();
  fs::remove(image);
  test::CreateSparseFile(image, spec.sectors * spec.ss);
  bool ok = true;
  try {
    test::SfdiskImage(image, SfdiskScript(spec), spec.ss);
    // libfdisk may also place a logical partition's EBR one grain before it, inside the
    // partition before (sfdisk writes that table; partalign refuses to read it, rightly): such a
    // layout is redrawn too.
    (void)test::TableAreaRanges(image, spec.ss);
  } catch (const std::exception&) {
    ok = false;
  }
  fs::remove(image);
  return ok;
}

// A case's own seed: the run's seed and the case's index, mixed (splitmix64), so that one case
// is reproduced alone with --case.
uint64_t CaseSeed(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--cases") {
      o.cases = std::stoull(value());
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--case") {
      o.only_case = std::stoull(value());
    } else if (a == "--minutes") {
      o.minutes = std::stod(value());
    } else if (a == "--kill-fraction") {
      o.kill_fraction = std::stod(value());
    } else if (a == "--make-room-fraction") {
      o.make_room_fraction = std::stod(value());
    } else if (a == "--dir") {
      o.dir = value();
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--kill-at") {
      o.kill_at = std::stoi(value());
    } else if (a == "--way") {
      o.way = value();
    } else if (a == "--max-rounds") {
      o.max_rounds = std::stoi(value());
    } else {
      throw std::runtime_error("unknown option '" + a + "'");
    }
  }
  return o;
}

int Main(int argc, char** argv) {
  Options o;
  try {
    o = ParseOptions(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "apply-invariant-sweep: {}\n", e.what());
    return 1;
  }
  if (::geteuid() != 0) {
    const char* required = std::getenv("PARTALIGN_REQUIRE_DEVICE_TESTS");
    fmt::print(stderr, "apply-invariant-sweep: needs root (loop devices, mounts)\n");
    return required && std::string(required) == "1" ? 1 : kSkipped;
  }
  ::signal(SIGINT, OnSignal);
  ::signal(SIGTERM, OnSignal);
  std::unique_ptr<test::TempDir> own_dir;
  if (o.dir.empty()) {
    own_dir = std::make_unique<test::TempDir>();
    o.dir = own_dir->path();
  }
  const auto started = std::chrono::steady_clock::now();
  auto minutes = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  };
  std::map<std::string, int> kinds;
  int cases = 0, partitions = 0, killed = 0, resumed = 0, rolled_back = 0, failed = 0;
  int violations = 0, checker_errors = 0, other = 0, extra_rounds = 0, refused = 0;
  int reader_problems = 0, old_tool = 0, full = 0, make_room = 0, shrunk = 0;
  const uint64_t first = o.only_case.value_or(0);
  const uint64_t last = o.only_case ? *o.only_case + 1 : o.cases;
  for (uint64_t index = first; index < last && !g_stop; ++index) {
    if (o.minutes > 0 && minutes() >= o.minutes) break;
    Random random(CaseSeed(o.seed, index));
    DiskSpec spec = DrawDisk(random, o.kill_fraction);
    // libfdisk refuses some drawn DOS layouts (a logical partition with no room for its EBR as
    // it places EBRs): draw again, from the same sequence, so that the case stays reproducible.
    for (int tries = 0; tries < 20 && !spec.old_layout && !Creatable(spec, o.dir); ++tries) {
      spec = DrawDisk(random, o.kill_fraction);
    }
    // Whether the case plans with --make-room: from a generator of its own, so that the disk
    // each seed and case draws stays the one it drew before the option existed.
    spec.make_room = Random(CaseSeed(o.seed ^ kMakeRoomStream, index)).Chance(o.make_room_fraction);
    if (spec.kill && o.kill_at > 0) spec.kill_point = o.kill_at;
    ++cases;
    make_room += spec.make_room;
    old_tool += spec.old_layout.has_value();
    full += spec.full;
    for (const PartSpec& p : spec.parts) ++kinds[Name(p.kind)];
    partitions += static_cast<int>(spec.parts.size());
    const auto case_started = std::chrono::steady_clock::now();
    std::vector<std::string> problems;
    Case c(o, index, spec, random);
    try {
      problems = c.Run();
    } catch (const std::exception& e) {
      problems.push_back(std::string("error: ") + e.what());
    }
    killed += c.killed();
    resumed += c.resumed();
    rolled_back += c.rolled_back();
    extra_rounds += std::max(0, c.rounds() - 1);
    shrunk += static_cast<int>(c.shrunk());
    if (!c.refused().empty()) {
      ++refused;
      if (o.verbose) fmt::print("case {}: apply refused: {}\n", index, c.refused());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - case_started).count();
    if (problems.empty()) {
      if (o.verbose) fmt::print("case {}: ok in {:.1f} s: {}\n", index, seconds, Describe(spec));
      continue;
    }
    ++failed;
    for (const std::string& p : problems) {
      if (p.rfind("apply refused", 0) == 0) {
        continue;  // counted as a refusal
      } else if (p.rfind("reader: ", 0) == 0 || p.rfind("ebr model: ", 0) == 0) {
        ++reader_problems;
      } else if (p.rfind("invariant: ", 0) == 0) {
        ++violations;
      } else if (p.find("checker") != std::string::npos || p.find("differs") != std::string::npos) {
        ++checker_errors;
      } else {
        ++other;
      }
    }
    if (o.keep) c.Keep();
    fmt::print(
        "FAIL case {} ({}): reproduce with: scripts/apply-invariant-sweep --seed {} --case "
        "{}{}\n",
        index, Describe(spec), o.seed, index, o.keep ? fmt::format(" (kept in {})", c.Dir()) : "");
    for (const std::string& p : problems) fmt::print("  {}\n", p);
    std::fflush(stdout);
  }
  std::string by_kind;
  for (const auto& [name, n] : kinds)
    by_kind += fmt::format("{}{} {}", by_kind.empty() ? "" : ", ", name, n);
  fmt::print(
      "apply-invariant-sweep: {} cases (seed {}; {} laid out as XP or the old fdisk did, {} "
      "full, {} with --make-room), {} partitions ({}), {} shrunk to make room, {} killed applies "
      "({} resumed, {} rolled back), {} extra plan rounds; {} failed cases: {} plans refused by "
      "apply, {} invariant violations, {} checker errors, {} table reader problems, {} other; "
      "{:.1f} min\n",
      cases, o.seed, old_tool, full, make_room, partitions, by_kind, shrunk, killed, resumed,
      rolled_back, extra_rounds, failed, refused, violations, checker_errors, reader_problems,
      other, minutes());
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace partalign

int main(int argc, char** argv) { return partalign::Main(argc, argv); }
