// SPDX-License-Identifier: GPL-3.0-or-later
// partalign demo: builds a disk image that reproduces the USB-bridge scenario and runs the
// whole pipeline on it - probe, explain, audit, plan, apply (dry run, then for real, with a
// backup, journaled data moves and a before/after benchmark), audit again - printing each
// command line before its output so that a person can type the same commands on a real disk.
// The data partitions hold pseudo-random bytes whose digests are shown before and after: the
// demo fails if a single byte differs. Writes only inside its own directory.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/app.h"
#include "cli/apply/apply_bench.h"
#include "cli/commands.h"
#include "io/device/target.h"
#include "io/sim/simulated_ssd.h"
#include "io/table/blkpg.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_write.h"
#include "io/util/unique_fd.h"
#include "io/util/xxhash_digest.h"
#include "partalign/bench/bench_random.h"
#include "partalign/table/kernel_partitions.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// Small enough to fill its partitions with real bytes in a second or two (a benchmark of a
// sparse file reads holes and measures nothing), large enough for a realistic layout.
constexpr uint64_t kDemoImageBytes = 512 * kMiB;
constexpr uint64_t kDemoSectorBytes = 512;
// The grain parted takes behind the bridge: its optimal I/O size 33553920 = 65535 x 512.
constexpr uint64_t kBridgeGrainSectors = 65535;
constexpr const char* kBridgeProfile = "usb-jmicron-0xffff";
// Seconds per partition and place of apply's benchmark: four partitions, measured before the
// change and after it at both places (3 x 2 s each), keep the demo well under a minute.
constexpr const char* kDemoBenchSeconds = "2";
constexpr uint64_t kFillChunkBytes = kMiB;
// --ssd: the focused rewrite benchmark before the pipeline, seconds.
constexpr const char* kSsdRewriteBudget = "4";
constexpr uint64_t kDataSeed = 0x5eed'da7a;
// Where the default demo directory goes: on a disk file system (FHS: /var/tmp survives reboots,
// so it is never tmpfs), because apply refuses move journals on tmpfs - which /tmp is on many
// distributions - and a benchmark of tmpfs would measure memory.
constexpr const char* kDemoParentDir = "/var/tmp";

struct DemoPartition {
  uint32_t number;
  const char* name;
  const char* type;  // GPT type GUID
  uint64_t start_sector;
  uint64_t size_sectors;
  bool data;  // pseudo-random bytes; otherwise written zeros (empty, but not sparse)
};

constexpr const char* kLinuxType = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
constexpr const char* kEspType = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";

// The disk as it looks after two eras: a partition at sector 63 (the DOS-era fdisk default)
// and partitions that parted placed on multiples of 65535 sectors behind the JMicron bridge,
// FirstUsableLBA 34 as parted writes it. 1 and 3 hold data (no mkfs: the demo needs no mkfs
// tools, and raw bytes make "not a byte lost" checkable), 2 and 4 are empty. The rest of the
// image is unallocated.
constexpr DemoPartition kDemoPartitions[] = {
    {1, "legacy", kLinuxType, 63, kBridgeGrainSectors - 63, true},
    {2, "esp", kEspType, kBridgeGrainSectors, 2 * kBridgeGrainSectors, false},
    {3, "root", kLinuxType, 3 * kBridgeGrainSectors, 4 * kBridgeGrainSectors, true},
    {4, "home", kLinuxType, 7 * kBridgeGrainSectors, 2 * kBridgeGrainSectors, false},
};

struct DemoCommand {
  std::string dir;
  bool keep = false;
  bool ssd = false;  ///< --ssd: on the simulated SSD (RunOnSimulatedSsd)
};

std::string DemoScript() {
  std::string script = "label: gpt\nfirst-lba: 34\n";
  for (const DemoPartition& p : kDemoPartitions) {
    script += fmt::format("start={}, size={}, type={}, name=\"{}\"\n", p.start_sector,
                          p.size_sectors, p.type, p.name);
  }
  return script;
}

// Writes every partition's bytes once (pseudo-random for data, zeros for the empty ones) and
// flushes them, so that the benchmark reads blocks that exist and the first run does not pay
// for the write-back.
Status FillPartitions(const std::string& image) {
  UniqueFd fd(::open(image.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", image));
  std::vector<uint64_t> chunk(kFillChunkBytes / sizeof(uint64_t));
  for (const DemoPartition& p : kDemoPartitions) {
    Xoshiro256 random(DeriveSeed(kDataSeed, p.number));
    const uint64_t end = (p.start_sector + p.size_sectors) * kDemoSectorBytes;
    for (uint64_t at = p.start_sector * kDemoSectorBytes; at < end; at += kFillChunkBytes) {
      for (uint64_t& word : chunk) word = p.data ? random.Next() : 0;
      const size_t length = static_cast<size_t>(std::min(kFillChunkBytes, end - at));
      if (::pwrite(fd.get(), chunk.data(), length, static_cast<off_t>(at)) !=
          static_cast<ssize_t>(length)) {
        return ErrnoError(errno, fmt::format("cannot write the demo data into '{}'", image));
      }
    }
  }
  if (::fdatasync(fd.get()) != 0) return ErrnoError(errno, fmt::format("cannot flush '{}'", image));
  return {};
}

Status CreateDemoImage(const std::string& image) {
  {
    UniqueFd fd(::open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot create '{}'", image));
    if (::ftruncate(fd.get(), static_cast<off_t>(kDemoImageBytes)) != 0) {
      return ErrnoError(errno, fmt::format("cannot size '{}'", image));
    }
  }
  Result<std::vector<std::string>> written = WriteSfdiskScript(image, DemoScript());
  if (!written) return written.error();
  return FillPartitions(image);
}

// xxh64 of `length` bytes of `image` from `offset`.
Result<std::string> DigestRange(const std::string& image, uint64_t offset, uint64_t length) {
  Result<Target> target = OpenTarget(image);
  if (!target) return target.error();
  Xxh64Digest digest;
  std::vector<char> buffer(kFillChunkBytes);
  for (uint64_t done = 0; done < length;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), length - done));
    Result<size_t> got = ReadAt(target->fd.get(), buffer.data(), want, offset + done, image);
    if (!got) return got.error();
    if (*got != want) {
      return MakeError(fmt::format("'{}' ends before byte {}", image, offset + length));
    }
    digest.Update(buffer.data(), want);
    done += want;
  }
  return digest.Hex();
}

// One line per data partition: where it starts now (from the image's table) and the digest of
// its original length of bytes from there. `expected`: the digests before; empty the first time.
Result<std::vector<std::string>> PrintDigests(Streams io, const std::string& image,
                                              const std::vector<std::string>& expected) {
  Result<TableRead> table =
      ReadPartitionTable(image, {.sector_size = kDemoSectorBytes, .probe_contents = false});
  if (!table) return table.error();
  std::vector<std::string> digests;
  for (const DemoPartition& p : kDemoPartitions) {
    if (!p.data) continue;
    const Partition* now = table->table.Find(p.number);
    if (!now) return MakeError(fmt::format("partition {} is gone from '{}'", p.number, image));
    const uint64_t bytes = p.size_sectors * kDemoSectorBytes;
    Result<std::string> digest = DigestRange(image, now->start_sector * kDemoSectorBytes, bytes);
    if (!digest) return digest.error();
    std::string verdict;
    if (!expected.empty()) {
      verdict = *digest == expected[digests.size()] ? "  same as before" : "  DIFFERENT";
    }
    io.out << fmt::format("  partition {} ({}) at sector {:>6}: {} of data, {}{}\n", p.number,
                          p.name, now->start_sector, FormatSize(bytes), *digest, verdict);
    digests.push_back(std::move(*digest));
  }
  return digests;
}

// Runs one partalign command in-process, echoing it like a shell transcript.
int Step(Streams io, const std::vector<std::string>& args) {
  std::vector<const char*> argv{"partalign"};
  std::string line = "$ partalign";
  for (const std::string& a : args) {
    argv.push_back(a.c_str());
    line += " " + a;
  }
  io.out << '\n' << line << '\n';
  io.out.flush();
  return RunApp(static_cast<int>(argv.size()), argv.data(), io.out, io.err);
}

// A step's stderr without the lines that contain `drop`, counted: everything else passes
// through as it is written (a progress line redrawn with '\r' too).
class DropLines : public std::streambuf {
 public:
  DropLines(std::ostream& to, std::string drop) : to_(to), drop_(std::move(drop)) {}
  ~DropLines() override { Pass(); }
  DropLines(const DropLines&) = delete;
  DropLines& operator=(const DropLines&) = delete;
  int dropped() const { return dropped_; }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    line_ += static_cast<char>(c);
    if (c == '\n' || c == '\r') Pass();
    return c;
  }
  int sync() override {
    Pass();
    to_.flush();
    return 0;
  }

 private:
  void Pass() {
    if (line_.find(drop_) != std::string::npos) {
      ++dropped_;
    } else {
      to_ << line_;
    }
    line_.clear();
  }
  std::ostream& to_;
  std::string drop_;
  std::string line_;
  int dropped_ = 0;
};

// A step whose exit code must be `expected`; false after saying which step failed.
bool Expect(Streams io, const std::vector<std::string>& args, int expected) {
  const int rc = Step(io, args);
  if (rc == expected) return true;
  io.out.flush();
  PrintError(io.err, fmt::format("demo: 'partalign {}' exited with {}, expected {}; the demo "
                                 "stops here",
                                 args.front(), rc, expected));
  return false;
}

// The last act: the disk moves from the USB bridge to a SATA port. A snapshot behind the
// bridge, then verify and plan as the disk is seen on SATA (no --assume): the same disk, the
// topology fields that changed and what they mean for each partitioner, and - the partitions
// now on 1 MiB boundaries - nothing to do (docs/migration.md).
bool RunMoveToSata(Streams io, const std::string& dir, const std::string& image) {
  const std::string snapshot = dir + "/usb.partalign-snapshot";
  io.out << "\nThe disk moves from the USB bridge to a SATA port: a snapshot first, then what "
            "changed.\n";
  if (!Expect(io, {"snapshot", "--assume", kBridgeProfile, "-o", snapshot, image}, 0)) {
    return false;
  }
  if (!Expect(io, {"verify", "--against", snapshot, image}, 0)) return false;
  return Expect(io, {"plan", image}, 0);
}

// The pipeline on the image in `dir`. True when every step did what it should.
bool RunSteps(Streams io, const std::string& dir, const std::string& image) {
  const std::string plan = dir + "/plan.json";
  const std::vector<std::string> bridge = {"--assume", kBridgeProfile};
  auto with_bridge = [&](std::vector<std::string> args, std::vector<std::string> tail) {
    args.insert(args.end(), bridge.begin(), bridge.end());
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  };
  if (!Expect(io, with_bridge({"probe"}, {image}), 0)) return false;
  if (!Expect(io, with_bridge({"explain"}, {image}), 0)) return false;
  // audit exits 2 when it finds misaligned partitions, which this disk has by design.
  if (!Expect(io, with_bridge({"audit"}, {image}), 2)) return false;
  if (!Expect(io, with_bridge({"plan"}, {"-o", plan, image}), 0)) return false;

  io.out << "\nThe partitions that hold data, before the apply (xxh64 of their bytes):\n";
  Result<std::vector<std::string>> before = PrintDigests(io, image, {});
  if (!before) {
    PrintError(io.err, before.error().message);
    return false;
  }
  // The dry run names the journals the real run will write, so it gets the same directory.
  const std::vector<std::string> journals = {"--journal-dir", dir + "/journals"};
  std::vector<std::string> dry_run = journals;
  dry_run.push_back("--dry-run");
  if (!Expect(io, with_bridge({"apply", plan}, dry_run), 0)) return false;
  std::vector<std::string> real = {"--yes", "--backup-dir", dir + "/backups"};
  real.insert(real.end(), journals.begin(), journals.end());
  real.insert(real.end(), {"--bench", "--bench-seconds", kDemoBenchSeconds});
  {
    // The demo chose its seconds to stay short: apply's advice to give a slow device a larger
    // --bench-seconds is about a value the person did not choose. Said once, in its place.
    DropLines filter(io.err, "a slow device needs a larger --bench-seconds");
    std::ostream err(&filter);
    if (!Expect(Streams{io.out, err}, with_bridge({"apply", plan}, real), 0)) return false;
    err.flush();
    if (filter.dropped() > 0) {
      io.out << fmt::format(
          "(The demo measures {} s per partition and place, to stay short: {} of the runs had "
          "cells with few I/Os per window, whose intervals are wide. apply --bench measures {:g} "
          "s by default, and --bench-seconds gives a slow disk more.)\n",
          kDemoBenchSeconds, filter.dropped(), kDefaultApplyBenchSeconds);
    }
  }

  io.out << "\nThe same partitions after the apply, at their new places:\n";
  Result<std::vector<std::string>> after = PrintDigests(io, image, *before);
  if (!after) {
    PrintError(io.err, after.error().message);
    return false;
  }
  if (*after != *before) {
    PrintError(io.err, "demo: the data of a moved partition differs from what it was");
    return false;
  }
  io.out << fmt::format(
      "Digests match: all {} data partitions hold exactly the bytes they held before.\n",
      after->size());
  if (!Expect(io, with_bridge({"audit"}, {image}), 0)) return false;
  return RunMoveToSata(io, dir, image);
}

// Deletes the partition nodes apply added to `device` through BLKPG: they would outlive the
// loop device (environment.md).
void DeletePartitionNodes(Streams io, const std::string& device) {
  Result<Target> target = OpenTarget(device);
  if (!target) return;
  Result<std::vector<KernelPartitionNode>> nodes =
      ReadKernelPartitions("/sys", target->major, target->minor);
  if (!nodes) return;
  std::vector<KernelPartition> current;
  for (const KernelPartitionNode& n : *nodes) current.push_back(n.partition);
  if (Status s = ApplyKernelUpdates(target->fd.get(), device, KernelUpdates(current, {})); !s) {
    PrintWarning(io.err, s.error().message);
  }
}

// --ssd: the same pipeline on a device where alignment matters. The demo image becomes the
// backing file of the simulated SSD (partalign-ssd-sim: a flash device that charges time per
// 4 KiB page each I/O touches, read-modify-write for pages written in part), attached as a loop
// device with direct I/O. First a focused benchmark of 4 KiB rewrites at misaligned and aligned
// offsets shows what misalignment costs this device; then the pipeline runs on the loop device,
// and apply --bench compares each partition's old and new place, rewrites included.
bool RunOnSimulatedSsd(Streams io, const std::string& dir, const std::string& image) {
  io.out << "\n--ssd: the image is the backing file of a simulated SSD (4 KiB flash pages, 25 us "
            "to read one, 200 us to program one, a page written in part is read and "
            "programmed whole; 8 dies), attached as a loop device with direct I/O.\n";
  Result<SimulatedSsd> ssd = SimulatedSsd::Start(image, dir + "/ssd");
  if (!ssd) {
    PrintError(io.err, "demo --ssd: " + ssd.error().message);
    return false;
  }
  const std::string& device = ssd->device();
  io.out << fmt::format("Simulated SSD: {} (simulator mounted on {}/ssd)\n", device, dir);
  io.out << "\nRandom 4 KiB rewrites (read a block, write the same bytes back) at offsets "
            "aligned to 512 bytes and to 4 KiB, their I/Os interleaved:\n";
  bool ok = Expect(io,
                   {"bench", "--rewrite", "--block-sizes", "4K", "--offset-aligns", "512,4K",
                    "--budget", kSsdRewriteBudget, "--no-report", device},
                   0) &&
            RunSteps(io, dir, device);
  if (Result<std::string> stats = ssd->Stats()) {
    io.out << "\nWhat the simulated flash did: " << *stats;
  }
  DeletePartitionNodes(io, device);
  if (Status s = ssd->Stop(); !s) {
    PrintError(io.err, "demo --ssd: " + s.error().message);
    ok = false;
  }
  return ok;
}

ExitCode RunDemo(const DemoCommand& command, Streams io) {
  const auto started = std::chrono::steady_clock::now();
  std::string dir = command.dir;
  bool made_dir = false;
  if (dir.empty()) {
    std::string templ = std::string(kDemoParentDir) + "/partalign-demo.XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      PrintError(io.err, ErrnoError(errno, "cannot create a demo directory").message);
      return ExitCode::kFailure;
    }
    dir = templ;
    made_dir = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      PrintError(io.err, fmt::format("cannot create '{}': {}", dir, ec.message()));
      return ExitCode::kFailure;
    }
  }
  const std::string image = dir + "/demo.img";
  io.out << fmt::format(
      "partalign demo: a {} disk image behind a JMicron-style USB bridge that reports an optimal "
      "I/O size of 33553920 bytes (0xFFFF x 512).\nIts GPT has a partition at sector 63 (the "
      "DOS-era fdisk default) and partitions parted put on multiples of 65535 sectors behind "
      "the bridge.\nPartitions 1 and 3 hold pseudo-random data, 2 and 4 are empty; the rest of "
      "the image is unallocated.\nImage: {}\n",
      FormatSize(kDemoImageBytes), image);
  io.out.flush();
  bool ok = false;
  if (Status s = CreateDemoImage(image); !s) {
    PrintError(io.err, s.error().message);
  } else {
    ok = command.ssd ? RunOnSimulatedSsd(io, dir, image) : RunSteps(io, dir, image);
  }

  if (!command.keep && made_dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } else {
    io.out << fmt::format("\nThe demo files are kept in {}\n", dir);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  io.out << fmt::format("\npartalign demo {} in {:.0f} s.\n", ok ? "finished" : "failed", seconds);
  return ok ? ExitCode::kOk : ExitCode::kFailure;
}

}  // namespace

void AddDemoCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<DemoCommand>();
  CLI::App* sub = app.add_subcommand(
      "demo", "build a demo disk image with the USB-bridge problem and run the pipeline on it");
  sub->add_option(
      "--dir", command->dir,
      "directory for the demo files, on a disk file system (default: a new directory in /var/tmp)");
  sub->add_flag("--keep", command->keep, "keep the demo files");
  sub->add_flag("--ssd", command->ssd,
                "run it on a simulated SSD where misalignment costs time (partalign-ssd-sim, "
                "attached as a loop device; needs root)");
  runners[sub] = [command](Streams io) { return RunDemo(*command, io); };
}

}  // namespace partalign
