// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/hive_builder.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <hivex.h>

#include "support/boot_sectors.h"

namespace partalign::test {
namespace {

// The smallest hive libhivex opens for writing: a 4 KiB base block ("regf", both sequence
// numbers 1, version 1.3, the root cell at hbin offset 0x20, 4 KiB of hbins, its checksum),
// one 4 KiB hbin with the root nk cell, an sk cell (a self-relative security descriptor with
// no owner, group or ACLs, referenced once) and a free cell for the rest.
Bytes EmptyHiveBytes(const std::string& root_name) {
  Bytes h(0x2000, 0);
  PutText(h, 0, "regf");
  PutLe(h, 0x04, 1, 4);
  PutLe(h, 0x08, 1, 4);
  PutLe(h, 0x14, 1, 4);  // major
  PutLe(h, 0x18, 3, 4);  // minor
  PutLe(h, 0x20, 1, 4);  // format: direct memory load
  PutLe(h, 0x24, 0x20, 4);
  PutLe(h, 0x28, 0x1000, 4);
  PutLe(h, 0x2C, 1, 4);
  uint32_t sum = 0;
  for (size_t at = 0; at < 0x1FC; at += 4) {
    sum ^= static_cast<uint32_t>(h[at] | h[at + 1] << 8 | h[at + 2] << 16 | h[at + 3] << 24);
  }
  PutLe(h, 0x1FC, sum, 4);

  const size_t hbin = 0x1000;
  PutText(h, hbin, "hbin");
  PutLe(h, hbin + 4, 0, 4);
  PutLe(h, hbin + 8, 0x1000, 4);
  // Root nk at hbin + 0x20.
  const size_t nk = hbin + 0x20;
  const size_t nk_size = (0x50 + root_name.size() + 7) / 8 * 8;
  const size_t sk_rel = 0x20 + nk_size;
  PutLe(h, nk, static_cast<uint32_t>(-static_cast<int32_t>(nk_size)), 4);
  PutText(h, nk + 4, "nk");
  PutLe(h, nk + 6, 0x2C, 2);           // HiveEntry | NoDelete | CompressedName
  PutLe(h, nk + 0x14, 0xFFFFFFFF, 4);  // parent: none
  PutLe(h, nk + 0x20, 0xFFFFFFFF, 4);  // no subkey list
  PutLe(h, nk + 0x24, 0xFFFFFFFF, 4);
  PutLe(h, nk + 0x2C, 0xFFFFFFFF, 4);  // no value list
  PutLe(h, nk + 0x30, sk_rel, 4);
  PutLe(h, nk + 0x34, 0xFFFFFFFF, 4);  // no class name
  PutLe(h, nk + 0x4C, root_name.size(), 2);
  PutText(h, nk + 0x50, root_name);
  // sk: a circular list of one, 20 bytes of security descriptor (revision 1, self-relative).
  const size_t sk = hbin + sk_rel;
  const size_t sk_size = 0x30;
  PutLe(h, sk, static_cast<uint32_t>(-static_cast<int32_t>(sk_size)), 4);
  PutText(h, sk + 4, "sk");
  PutLe(h, sk + 8, sk_rel, 4);
  PutLe(h, sk + 0xC, sk_rel, 4);
  PutLe(h, sk + 0x10, 1, 4);
  PutLe(h, sk + 0x14, 20, 4);
  h[sk + 0x18] = 1;
  PutLe(h, sk + 0x1A, 0x8000, 2);
  // The rest of the hbin is one free cell.
  const size_t free_at = sk + sk_size;
  PutLe(h, free_at, hbin + 0x1000 - free_at, 4);
  return h;
}

std::string Fail(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

void MakeHive(const std::string& path, const std::string& root_name,
              const std::vector<HiveValueSpec>& values) {
  const Bytes empty = EmptyHiveBytes(root_name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(empty.data()),
             static_cast<std::streamsize>(empty.size()));
  std::unique_ptr<hive_h, int (*)(hive_h*)> h(hivex_open(path.c_str(), HIVEX_OPEN_WRITE),
                                              hivex_close);
  if (!h) throw std::runtime_error(Fail("hivex_open of the empty hive '" + path + "'"));
  for (const HiveValueSpec& v : values) {
    hive_node_h node = hivex_root(h.get());
    size_t from = 0;
    while (from < v.key_path.size()) {
      size_t to = v.key_path.find('\\', from);
      if (to == std::string::npos) to = v.key_path.size();
      const std::string name = v.key_path.substr(from, to - from);
      hive_node_h child = hivex_node_get_child(h.get(), node, name.c_str());
      if (child == 0) child = hivex_node_add_child(h.get(), node, name.c_str());
      if (child == 0) throw std::runtime_error(Fail("hivex_node_add_child '" + name + "'"));
      node = child;
      from = to + 1;
    }
    std::vector<char> data(v.data.begin(), v.data.end());
    hive_set_value set{const_cast<char*>(v.name.c_str()), static_cast<hive_type>(v.type),
                       data.size(), data.data()};
    if (hivex_node_set_value(h.get(), node, &set, 0) != 0) {
      throw std::runtime_error(Fail("hivex_node_set_value '" + v.name + "'"));
    }
  }
  if (hivex_commit(h.get(), path.c_str(), 0) != 0) {
    throw std::runtime_error(Fail("hivex_commit '" + path + "'"));
  }
}

}  // namespace partalign::test
