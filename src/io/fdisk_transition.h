// Computing a TableTransition through libfdisk without touching the disk: the disk's table as
// an sfdisk dump, with the planned partitions moved, is applied by libfdisk (exactly as sfdisk
// would apply it) to a scratch copy - a sparse memfd of the disk's size and sector size that
// holds a copy of the table's sectors. The new table's sectors are then read back from the
// scratch copy. So the new table is libfdisk's own (header CRCs, backup GPT, EBR chain, boot
// code kept), and every byte the write will change is known - and backed up - before the first
// write. docs/apply.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/fdisk_write.h"
#include "partalign/partition_table.h"
#include "partalign/result.h"
#include "partalign/table_transition.h"

namespace partalign {

struct ComputedTransition {
  TableTransition transition;
  PartitionTable old_table;           ///< as read from the disk, with each partition's contents
  PartitionTable new_table;           ///< as libfdisk wrote it on the scratch copy
  std::string old_script;             ///< sfdisk dump of the disk's table
  std::string new_script;             ///< the script libfdisk applied
  std::vector<std::string> messages;  ///< what libfdisk said while applying it
};

/// Never writes to `path`. `sector_size` is the disk's logical sector size (image files have
/// none of their own). Fails on tables other than GPT and DOS, on edits libfdisk rejects, and
/// when libfdisk wrote anything outside the table areas it reports.
Result<ComputedTransition> ComputeTableTransition(const std::string& path, uint64_t sector_size,
                                                  const std::vector<ScriptEdit>& edits);

}  // namespace partalign
