// SPDX-License-Identifier: GPL-3.0-or-later
// Writes the table corpus (tests/support/table_corpus.h) as files.
//   partalign_make_table_corpus DIR              one sparse image per case: DIR/NAME.img
//   partalign_make_table_corpus --seeds DIR MAX  table_fuzz inputs: DIR/NAME, each the harness's
//                                                header (sector size 512, the disk's sector
//                                                count) and the image's first MAX bytes
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/table_corpus.h"
#include "support/table_images.h"

namespace {

using partalign::SparseDisk;

void WriteSeed(const SparseDisk& disk, const std::string& path, uint64_t max_bytes) {
  const uint64_t length = std::min<uint64_t>(disk.size_bytes(), max_bytes);
  std::vector<uint8_t> bytes(length);
  if (!disk.ReadAt(0, bytes)) throw std::runtime_error("cannot read the first bytes of " + path);
  // The harness's header (tests/fuzz/table_fuzz.cc): selector 0 (512-byte sectors, nothing at
  // the end), then the sector count less one, big-endian.
  std::vector<uint8_t> seed(1, 0);
  const uint64_t sectors = disk.size_bytes() / 512 == 0 ? 0 : disk.size_bytes() / 512 - 1;
  for (int shift = 56; shift >= 0; shift -= 8)
    seed.push_back(static_cast<uint8_t>(sectors >> shift));
  seed.insert(seed.end(), bytes.begin(), bytes.end());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(seed.data()), static_cast<std::streamsize>(seed.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const bool seeds = !args.empty() && args[0] == "--seeds";
    if (args.size() != (seeds ? 3u : 1u)) {
      std::fprintf(stderr, "usage: %s DIR | --seeds DIR MAX_BYTES\n", argv[0]);
      return 2;
    }
    const std::string dir = seeds ? args[1] : args[0];
    std::filesystem::create_directories(dir);
    for (const partalign::test::CorpusCase& c : partalign::test::TableCorpus()) {
      if (seeds) {
        WriteSeed(c.disk, dir + "/" + c.name, std::stoull(args[2]));
      } else {
        partalign::test::WriteImageFile(c.disk, dir + "/" + c.name + ".img");
      }
      std::printf("%s\n", c.name.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "partalign_make_table_corpus: %s\n", e.what());
    return 1;
  }
}
