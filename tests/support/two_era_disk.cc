// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/two_era_disk.h"

#include <stdexcept>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign::test {
void MakeTwoEraDisk(const std::string& path) {
  CreateSparseFile(path, kTwoEraDiskBytes);
  std::string script = "label: gpt\nfirst-lba: 34\n";
  const char* names[] = {"legacy", "esp", "root", "home"};
  const char* types[] = {"L", "U", "L", "L"};
  for (int i = 0; i < 4; ++i) {
    script += "start=" + std::to_string(kTwoEraStarts[i]) +
              ", size=" + std::to_string(kTwoEraSizes[i]) + ", type=" + types[i] + ", name=\"" +
              names[i] + "\"\n";
  }
  RunOrThrow({"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", path}, script);
  auto kib = [](int i) { return std::to_string(kTwoEraSizes[i] * 512 / 1024) + "k"; };
  RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "4096", "-L", "legacy", "-E",
              "offset=" + std::to_string(kTwoEraStarts[0] * 512), path, kib(0)});
  RunOrThrow({"mkfs.vfat", "-F", "16", "-n", "ESP", "--offset", std::to_string(kTwoEraStarts[1]),
              path, std::to_string(kTwoEraSizes[1] * 512 / 1024)});
  RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "4096", "-L", "root", "-E",
              "offset=" + std::to_string(kTwoEraStarts[2] * 512), path, kib(2)});
}

}  // namespace partalign::test
