// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/apply_layouts.h"

#include <stdexcept>

namespace partalign::test {

std::vector<ApplyLayout> ApplyLayouts() {
  return {
      {"gpt_512", 512,
       "label: gpt\n"
       "first-lba: 34\n"
       "start=63, size=20000, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=\"one\"\n"
       "start=40000, size=20480, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F, name=\"two\"\n"
       "start=65536, size=20480, name=\"three\", attrs=\"RequiredPartition\"\n",
       3},
      {"dos_512", 512,
       "label: dos\n"
       "start=63, size=20000, type=83, bootable\n"
       "start=30000, size=100000, type=5\n"
       "start=32000, size=10000, type=83\n"
       "start=45000, size=10000, type=82\n"
       "start=61440, size=20480, type=83\n",
       7},
      {"gpt_4096", 4096,
       "label: gpt\n"
       "first-lba: 6\n"
       "start=7, size=2500, name=\"one\"\n"
       "start=5000, size=2560, name=\"two\"\n"
       "start=8192, size=2560, name=\"three\"\n",
       3},
      {"dos_4096", 4096,
       "label: dos\n"
       "start=7, size=2500, type=83\n"
       "start=3750, size=12000, type=5\n"
       "start=4000, size=1250, type=83\n"
       "start=5625, size=1250, type=83\n"
       "start=7680, size=2560, type=83\n",
       7},
  };
}

ApplyLayout ApplyLayoutNamed(const std::string& name) {
  for (const ApplyLayout& l : ApplyLayouts()) {
    if (l.name == name) return l;
  }
  throw std::runtime_error("no layout " + name);
}

}  // namespace partalign::test
