// penalty_fs: a test-only FUSE filesystem with one file, /disk.img, whose reads that cross a
// boundary (4 KiB by default) take a known extra time. It stands in for a disk with a
// misalignment penalty (a 512e drive, a RAID stripe) so that the tests can check that
// `partalign bench` detects a penalty that is there and reports none where there is none.
//
// The file is opened with direct_io, so the kernel passes every read with its real offset and
// length (split only at max_read, 128 KiB by default) and caches nothing. Reads return zeros.
// /stats reports how many reads arrived and how many crossed a boundary.
//
// Usage: penalty_fs MOUNTPOINT [--size=BYTES] [--penalty-us=N] [--boundary=BYTES] [FUSE options]
// Unmount with fusermount3 -u MOUNTPOINT.
#define FUSE_USE_VERSION 31

#include <fuse.h>
#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

struct Options {
  unsigned long size = 256ul << 20;
  unsigned penalty_us = 0;
  unsigned long boundary = 4096;
};

Options g_options;
std::atomic<unsigned long> g_reads{0};
std::atomic<unsigned long> g_crossing{0};

constexpr const char* kImage = "/disk.img";
constexpr const char* kStats = "/stats";

#define PENALTY_OPT(t, p) \
  { t, offsetof(Options, p), 0 }
const fuse_opt kOptionSpec[] = {
    PENALTY_OPT("--size=%lu", size),
    PENALTY_OPT("--penalty-us=%u", penalty_us),
    PENALTY_OPT("--boundary=%lu", boundary),
    FUSE_OPT_END,
};

std::string StatsText() {
  return "reads " + std::to_string(g_reads.load()) + " crossing " +
         std::to_string(g_crossing.load()) + "\n";
}

int GetAttr(const char* path, struct stat* st, fuse_file_info*) {
  std::memset(st, 0, sizeof(*st));
  if (std::strcmp(path, "/") == 0) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else if (std::strcmp(path, kImage) == 0) {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(g_options.size);
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
  fill(buf, ".", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  fill(buf, "..", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  fill(buf, kImage + 1, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  fill(buf, kStats + 1, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  return 0;
}

int Open(const char* path, fuse_file_info* fi) {
  if (std::strcmp(path, kImage) != 0 && std::strcmp(path, kStats) != 0) return -ENOENT;
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  fi->direct_io = 1;  // every read reaches Read() with its own offset and length
  fi->keep_cache = 0;
  return 0;
}

void Sleep(unsigned microseconds) {
  timespec ts{static_cast<time_t>(microseconds / 1000000),
              static_cast<long>(microseconds % 1000000) * 1000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
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
  if (offset < 0 || static_cast<unsigned long>(offset) >= g_options.size) return 0;
  const size_t n = std::min<size_t>(size, g_options.size - static_cast<unsigned long>(offset));
  ++g_reads;
  const unsigned long first = static_cast<unsigned long>(offset) / g_options.boundary;
  const unsigned long last = (static_cast<unsigned long>(offset) + n - 1) / g_options.boundary;
  if (n > 0 && first != last) {
    ++g_crossing;
    if (g_options.penalty_us > 0) Sleep(g_options.penalty_us);
  }
  std::memset(buf, 0, n);
  return static_cast<int>(n);
}

}  // namespace

int main(int argc, char* argv[]) {
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, &g_options, kOptionSpec, nullptr) != 0) return 1;
  if (g_options.boundary == 0 || g_options.size == 0) {
    std::fprintf(stderr, "penalty_fs: --size and --boundary must be greater than 0\n");
    return 1;
  }
  fuse_operations ops{};
  ops.getattr = GetAttr;
  ops.readdir = ReadDir;
  ops.open = Open;
  ops.read = Read;
  const int rc = fuse_main(args.argc, args.argv, &ops, nullptr);
  fuse_opt_free_args(&args);
  return rc;
}
