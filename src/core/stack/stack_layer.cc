// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_layer.h"

#include <algorithm>

namespace partalign {

std::string_view ToString(LayerKind kind) {
  switch (kind) {
    case LayerKind::kLuks:
      return "luks";
    case LayerKind::kLvmPv:
      return "lvm2_pv";
    case LayerKind::kLvmSegment:
      return "lvm2_lv_segment";
    case LayerKind::kMdMember:
      return "md_member";
    case LayerKind::kFilesystem:
      return "filesystem";
  }
  return "";
}

StackLayer MakeLayer(LayerKind kind, std::string name, int depth, uint64_t data_offset_bytes,
                     uint64_t offset_in_parent_bytes) {
  StackLayer l;
  l.kind = kind;
  l.name = std::move(name);
  l.depth = depth;
  l.data_offset_bytes = data_offset_bytes;
  l.offset_in_parent_bytes = offset_in_parent_bytes;
  return l;
}

const StackCheck* StackLayer::Check(std::string_view key) const {
  for (const StackCheck& c : checks) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

bool StackWalk::aligned() const {
  return std::all_of(layers.begin(), layers.end(), [](const StackLayer& l) { return l.aligned; });
}

}  // namespace partalign
