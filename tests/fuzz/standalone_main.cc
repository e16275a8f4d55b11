// SPDX-License-Identifier: GPL-3.0-or-later
// A driver for the libFuzzer harnesses (tests/fuzz/*_fuzz.cc) in the ordinary build, without
// clang: runs the harness on every file named (directories: every file in them), and on
// `--mutations N` seeded mutations of each (bits flipped, bytes set to 0x00/0xff/0x7f/0x80,
// bytes inserted and erased, the input cut short, a run copied elsewhere), so that CI runs
// every harness on its seeds and a few thousand neighbours of them and the harnesses never rot.
// scripts/fuzz builds the same harnesses with libFuzzer for long runs.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "partalign/bench/bench_random.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void Mutate(std::vector<uint8_t>& b, partalign::Xoshiro256& rng) {
  const int edits = 1 + static_cast<int>(rng.Below(8));
  for (int e = 0; e < edits; ++e) {
    const size_t at = b.empty() ? 0 : rng.Below(b.size());
    switch (rng.Below(6)) {
      case 0:
        if (!b.empty()) b[at] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1: {
        static constexpr uint8_t kInteresting[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe};
        if (!b.empty()) b[at] = kInteresting[rng.Below(sizeof kInteresting)];
        break;
      }
      case 2:
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng.Next()));
        break;
      case 3:
        if (!b.empty()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 4:
        b.resize(b.empty() ? 0 : rng.Below(b.size() + 1));
        break;
      default:
        if (b.size() >= 16) {
          const size_t length = 1 + rng.Below(std::min<size_t>(64, b.size() / 2));
          const size_t from = rng.Below(b.size() - length + 1);
          const size_t to = rng.Below(b.size() - length + 1);
          std::vector<uint8_t> run(b.begin() + static_cast<std::ptrdiff_t>(from),
                                   b.begin() + static_cast<std::ptrdiff_t>(from + length));
          std::copy(run.begin(), run.end(), b.begin() + static_cast<std::ptrdiff_t>(to));
        }
    }
  }
}

// What runs now, for a finding: the harness aborts (FUZZ_CHECK, or ASan and UBSan with
// abort_on_error), and the handler saves the input where the driver was started, so that a
// mutation found in CI can be replayed alone: HARNESS FILE.
const uint8_t* g_input = nullptr;
size_t g_input_size = 0;
char g_finding[512] = "";

void SaveFinding(int) {
  const int fd = ::open(g_finding, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    for (size_t done = 0; done < g_input_size;) {
      const ssize_t n = ::write(fd, g_input + done, g_input_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    static constexpr char kSaved[] = "standalone: the input is saved in ";
    (void)!::write(2, kSaved, sizeof kSaved - 1);
    (void)!::write(2, g_finding, std::strlen(g_finding));
    (void)!::write(2, "\n", 1);
  }
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}

void Run(const std::vector<uint8_t>& input) {
  g_input = input.data();
  g_input_size = input.size();
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mutations = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
      (arg == "--seed" ? seed : mutations) = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      inputs.emplace_back(arg);
    } else {
      std::fprintf(stderr, "%s: not a file or directory: %s\n", argv[0], arg.c_str());
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations N] [--seed S] FILE|DIR...\n", argv[0]);
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  partalign::Xoshiro256 rng(seed);
  std::snprintf(g_finding, sizeof g_finding, "finding-%s",
                std::filesystem::path(argv[0]).filename().c_str());
  std::signal(SIGABRT, SaveFinding);
  uint64_t runs = 0;
  for (const std::filesystem::path& path : inputs) {
    const std::vector<uint8_t> original = ReadAll(path);
    Run(original);
    ++runs;
    for (uint64_t m = 0; m < mutations; ++m) {
      std::vector<uint8_t> input = original;
      Mutate(input, rng);
      Run(input);
      ++runs;
    }
  }
  std::printf("%s: %llu inputs run (%zu files, %llu mutations each, seed %llu), no finding\n",
              argv[0], static_cast<unsigned long long>(runs), inputs.size(),
              static_cast<unsigned long long>(mutations), static_cast<unsigned long long>(seed));
  return 0;
}
