// SPDX-License-Identifier: GPL-3.0-or-later
// Registry hives made with libhivex for the BCD and MountedDevices tests: libhivex edits hives
// but cannot create one, so the test writes the smallest valid hive itself (a base block and
// one hbin holding a root key and its security record, laid out as libhivex's hivex-internal.h
// and its open checks describe), and libhivex adds every key and value to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace partalign::test {

struct HiveValueSpec {
  std::string key_path;  ///< "Objects\\{guid}\\Elements\\21000001" ("" = the root key)
  std::string name;      ///< "Element"
  uint32_t type = 3;     ///< REG_BINARY
  std::vector<uint8_t> data;
};

/// Writes at `path` a hive whose root key is `root_name`, with every key of `values` and their
/// values, made by libhivex (hivex_node_add_child, hivex_node_set_value, hivex_commit).
/// Throws on a libhivex error.
void MakeHive(const std::string& path, const std::string& root_name,
              const std::vector<HiveValueSpec>& values);

}  // namespace partalign::test
