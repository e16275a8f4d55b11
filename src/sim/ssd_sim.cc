// SPDX-License-Identifier: GPL-3.0-or-later
// partalign-ssd-sim: a FUSE file system with one writable file, /disk.img, over a backing file,
// that charges time per flash page each I/O touches (partalign/sim/flash_model.h): a device
// where alignment matters, to attach as a loop device with direct I/O (scripts/ssd-sim) and
// run partalign on. The file is opened with direct_io, so every read and write reaches the
// daemon with its own offset and length (split only at max_read/max_write, 128 KiB) and the
// kernel caches nothing. Each request is answered when the flash would have finished it: the
// daemon sleeps until then, and spins for the last --spin-us so that short costs are precise.
// /stats reports what the flash did.
//
// Usage: partalign-ssd-sim MOUNTPOINT --backing=FILE [--page-size=BYTES] [--read-us=US]
//        [--program-us=US] [--dies=N] [--stripe=BYTES] [--spin-us=US] [FUSE options]
// Unmount with fusermount3 -u MOUNTPOINT (or umount as root).
#define FUSE_USE_VERSION 31

#include <fcntl.h>
#include <fuse.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "partalign/sim/flash_model.h"

namespace {

using partalign::FlashOp;
using partalign::FlashParams;
using partalign::FlashTimeline;

struct Options {
  char* backing = nullptr;
  unsigned long page_size = FlashParams{}.page_bytes;
  double read_us = static_cast<double>(FlashParams{}.read_ns) / 1000;
  double program_us = static_cast<double>(FlashParams{}.program_ns) / 1000;
  unsigned dies = FlashParams{}.units;
  unsigned long stripe = FlashParams{}.stripe_bytes;
  // Sleeping wakes up tens of microseconds late on a busy machine: the last part of a wait is
  // spent spinning on the clock instead.
  double spin_us = 50;
};

struct State {
  int backing_fd = -1;
  off_t size = 0;
  std::mutex mutex;  // guards timeline
  FlashTimeline timeline{FlashParams{}};
  uint64_t spin_ns = 0;
  std::atomic<unsigned long> reads{0};
  std::atomic<unsigned long> writes{0};
};

Options g_options;
State* g_state = nullptr;

constexpr const char* kImage = "/disk.img";
constexpr const char* kStats = "/stats";

#define SIM_OPT(t, p) \
  { t, offsetof(Options, p), 0 }
const fuse_opt kOptionSpec[] = {
    SIM_OPT("--backing=%s", backing),  SIM_OPT("--page-size=%lu", page_size),
    SIM_OPT("--read-us=%lf", read_us), SIM_OPT("--program-us=%lf", program_us),
    SIM_OPT("--dies=%u", dies),        SIM_OPT("--stripe=%lu", stripe),
    SIM_OPT("--spin-us=%lf", spin_us), FUSE_OPT_END,
};

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Returns at `deadline` (CLOCK_MONOTONIC ns): sleeps until spin_ns before it, then spins.
void WaitUntil(uint64_t deadline) {
  const uint64_t now = NowNs();
  if (deadline > now + g_state->spin_ns) {
    const uint64_t wake = deadline - g_state->spin_ns;
    timespec ts{static_cast<time_t>(wake / 1'000'000'000u),
                static_cast<long>(wake % 1'000'000'000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
  while (NowNs() < deadline) {
  }
}

// Books an I/O on the flash and waits until the flash is done with it.
void Charge(FlashOp op, off_t offset, size_t length) {
  const uint64_t arrived = NowNs();
  uint64_t done;
  {
    std::lock_guard<std::mutex> lock(g_state->mutex);
    done = g_state->timeline.Schedule(op, static_cast<uint64_t>(offset), length, arrived);
  }
  WaitUntil(done);
}

std::string StatsText() {
  partalign::FlashWork totals;
  {
    std::lock_guard<std::mutex> lock(g_state->mutex);
    totals = g_state->timeline.totals();
  }
  return "reads " + std::to_string(g_state->reads.load()) + " writes " +
         std::to_string(g_state->writes.load()) + " pages " + std::to_string(totals.pages) +
         " page_reads " + std::to_string(totals.page_reads) + " page_programs " +
         std::to_string(totals.page_programs) + " partial_pages " +
         std::to_string(totals.partial_pages) + "\n";
}

int GetAttr(const char* path, struct stat* st, fuse_file_info*) {
  std::memset(st, 0, sizeof(*st));
  if (std::strcmp(path, "/") == 0) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else if (std::strcmp(path, kImage) == 0) {
    st->st_mode = S_IFREG | 0644;
    st->st_nlink = 1;
    st->st_size = g_state->size;
  } else if (std::strcmp(path, kStats) == 0) {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = 4096;  // an upper bound; reads return the real text
  } else {
    return -ENOENT;
  }
  return 0;
}

int ReadDir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*,
            fuse_readdir_flags) {
  if (std::strcmp(path, "/") != 0) return -ENOENT;
  for (const char* name : {".", "..", kImage + 1, kStats + 1}) {
    fill(buf, name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  }
  return 0;
}

int Open(const char* path, fuse_file_info* fi) {
  const bool image = std::strcmp(path, kImage) == 0;
  if (!image && std::strcmp(path, kStats) != 0) return -ENOENT;
  if (!image && (fi->flags & O_ACCMODE) != O_RDONLY) return -EACCES;
  fi->direct_io = 1;  // every I/O reaches the daemon with its own offset and length
  fi->keep_cache = 0;
  return 0;
}

// The host's page size: the backing file is read in whole pages of it.
size_t HostPage() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Reads `n` bytes at `offset` of the backing file so that the host's work does not depend on
// the alignment: always the pages the request touches when it starts on a page boundary, plus
// one (a 4 KiB read touches two pages of the page cache whatever its offset). Otherwise a
// misaligned read would cost the daemon a second page-cache page, a real but foreign
// alignment effect of about 0.6% (measured with free flash: docs/bench.md); the flash model
// alone decides what alignment costs.
ssize_t ReadNeutral(char* buf, size_t n, off_t offset) {
  thread_local std::vector<char> scratch;
  const size_t page = HostPage();
  const off_t first = offset / static_cast<off_t>(page) * static_cast<off_t>(page);
  const size_t span = (n + page - 1) / page * page + page;
  if (scratch.size() < span) scratch.resize(span);
  const ssize_t got = pread(g_state->backing_fd, scratch.data(), span, first);
  if (got < 0) return -1;
  const size_t skip = static_cast<size_t>(offset - first);
  const size_t have = static_cast<size_t>(got) > skip ? static_cast<size_t>(got) - skip : 0;
  const size_t copied = std::min(n, have);
  std::memcpy(buf, scratch.data() + skip, copied);
  return static_cast<ssize_t>(copied);
}

int Read(const char* path, char* buf, size_t size, off_t offset, fuse_file_info*) {
  if (std::strcmp(path, kStats) == 0) {
    const std::string text = StatsText();
    if (static_cast<size_t>(offset) >= text.size()) return 0;
    const size_t n = std::min(size, text.size() - static_cast<size_t>(offset));
    std::memcpy(buf, text.data() + offset, n);
    return static_cast<int>(n);
  }
  if (std::strcmp(path, kImage) != 0) return -ENOENT;
  if (offset < 0 || offset >= g_state->size) return 0;
  const size_t n = std::min<size_t>(size, static_cast<size_t>(g_state->size - offset));
  ++g_state->reads;
  const ssize_t got = ReadNeutral(buf, n, offset);
  if (got < 0) return -errno;
  Charge(FlashOp::kRead, offset, static_cast<size_t>(got));
  return static_cast<int>(got);
}

int Write(const char* path, const char* buf, size_t size, off_t offset, fuse_file_info*) {
  if (std::strcmp(path, kImage) != 0) return -EACCES;
  if (offset < 0 || offset + static_cast<off_t>(size) > g_state->size) return -ENOSPC;
  ++g_state->writes;
  const ssize_t put = pwrite(g_state->backing_fd, buf, size, offset);
  if (put < 0) return -errno;
  Charge(FlashOp::kWrite, offset, static_cast<size_t>(put));
  return static_cast<int>(put);
}

int Fsync(const char* path, int, fuse_file_info*) {
  if (std::strcmp(path, kImage) != 0) return 0;
  return fdatasync(g_state->backing_fd) == 0 ? 0 : -errno;
}

// The size is the backing file's: the device cannot grow or shrink.
int Truncate(const char* path, off_t size, fuse_file_info*) {
  if (std::strcmp(path, kImage) != 0) return -EACCES;
  return size == g_state->size ? 0 : -EPERM;
}

}  // namespace

int main(int argc, char* argv[]) {
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, &g_options, kOptionSpec, nullptr) != 0) return 1;
  if (!g_options.backing) {
    std::fprintf(stderr, "partalign-ssd-sim: --backing=FILE is required\n");
    return 1;
  }
  const FlashParams params{g_options.page_size, static_cast<uint64_t>(g_options.read_us * 1000),
                           static_cast<uint64_t>(g_options.program_us * 1000), g_options.dies,
                           g_options.stripe};
  if (partalign::Status s = partalign::CheckFlashParams(params);
      !s || g_options.read_us < 0 || g_options.program_us < 0 || g_options.spin_us < 0) {
    std::fprintf(stderr,
                 "partalign-ssd-sim: --page-size and --dies must be greater than 0, --stripe a "
                 "multiple of --page-size, the costs not negative\n");
    return 1;
  }
  State state;
  state.backing_fd = open(g_options.backing, O_RDWR | O_CLOEXEC);
  if (state.backing_fd < 0) {
    std::fprintf(stderr, "partalign-ssd-sim: cannot open '%s': %s\n", g_options.backing,
                 std::strerror(errno));
    return 1;
  }
  struct stat st {};
  if (fstat(state.backing_fd, &st) != 0 || st.st_size <= 0) {
    std::fprintf(stderr, "partalign-ssd-sim: '%s' is empty or unreadable\n", g_options.backing);
    return 1;
  }
  state.size = st.st_size;
  state.timeline = FlashTimeline(params);
  state.spin_ns = static_cast<uint64_t>(g_options.spin_us * 1000);
  g_state = &state;
  // Wake up on time: the default timer slack of 50 us would add itself to every short sleep.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  fuse_operations ops{};
  ops.getattr = GetAttr;
  ops.readdir = ReadDir;
  ops.open = Open;
  ops.read = Read;
  ops.write = Write;
  ops.fsync = Fsync;
  ops.truncate = Truncate;
  const int rc = fuse_main(args.argc, args.argv, &ops, nullptr);
  fuse_opt_free_args(&args);
  close(state.backing_fd);
  return rc;
}
