// SPDX-License-Identifier: GPL-3.0-or-later
// The partition layouts apply and restore are tested on: GPT and DOS (with logical
// partitions), 512- and 4096-byte sectors. In each, partitions 1 and 2 (DOS: 1, 5 and 6) start
// off the 1 MiB grain and hold no data, so a plan moves their starts up by editing the table
// alone; the last partition is aligned and stays where it is, so tests can put a filesystem or
// swap on it without turning the plan into a data move.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace partalign::test {

struct ApplyLayout {
  std::string name;  ///< "gpt_512"
  unsigned sector_size = 512;
  std::string script;         ///< for sfdisk
  int aligned_partition = 0;  ///< the partition no plan moves
};

std::vector<ApplyLayout> ApplyLayouts();

/// GoogleTest prints the name instead of the bytes.
inline void PrintTo(const ApplyLayout& layout, std::ostream* os) { *os << layout.name; }

/// The layout named `name`.
ApplyLayout ApplyLayoutNamed(const std::string& name);

}  // namespace partalign::test
