#include "partalign/layout/partition_table.h"

namespace partalign {

std::string_view ToString(PartitionKind kind) {
  switch (kind) {
    case PartitionKind::kPrimary:
      return "primary";
    case PartitionKind::kExtended:
      return "extended";
    case PartitionKind::kLogical:
      return "logical";
  }
  return "primary";
}

const Partition* PartitionTable::Find(uint32_t number) const {
  for (const Partition& p : partitions) {
    if (p.number == number) return &p;
  }
  return nullptr;
}

}  // namespace partalign
