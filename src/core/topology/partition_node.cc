// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/partition_node.h"

#include <fmt/format.h>

#include "partalign/util/shell_quote.h"

namespace partalign {

std::string PartitionNodeRefusal(const PartitionNode& node) {
  return fmt::format(
      "'{}' is partition{} of the disk '{}', not a disk: partition tables are read and written on "
      "the whole disk, give '{}' ('partalign audit {}' checks this one partition)",
      node.path, node.number ? fmt::format(" {}", *node.number) : "", node.disk, node.disk,
      ShellQuote(node.path));
}

}  // namespace partalign
