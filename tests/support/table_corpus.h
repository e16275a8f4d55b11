// SPDX-License-Identifier: GPL-3.0-or-later
// The corpus of damaged, unusual and hostile partition tables (issue 11): every kind of damage
// the validation gate names, the tables libfdisk aborts on or truncates, tiny images, and
// tables written for the other sector size - built byte by byte (tests/support/
// table_images.h), so that CI needs no stored images. tests/cli/commands/table_corpus_test.cc
// runs every read-only command and apply on each; `partalign_make_table_corpus DIR` writes
// them as image files (the fuzzers' seeds, and for trying partalign by hand).
#pragma once

#include <string>
#include <vector>

#include "partalign/label/disk_reader.h"

namespace partalign::test {

struct CorpusCase {
  std::string name;  ///< kebab-case, the image's file name without ".img"
  SparseDisk disk;
  /// What audit prints as its one-line error, or empty when audit reads the table (exit 0 or
  /// 2). Every command that reads the table refuses the same way.
  std::string audit_error;
  /// What plan prints as its one-line error, or empty when plan makes a plan.
  std::string plan_error;
};

/// Every case, in a fixed order; names are unique.
std::vector<CorpusCase> TableCorpus();

}  // namespace partalign::test
