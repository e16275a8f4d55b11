// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_render.h"

#include <fmt/format.h>

#include "partalign/util/json_util.h"

namespace partalign {
namespace {

nlohmann::json GeometryJson(const LayerGeometry& g) {
  return {{"block_size_bytes", OptionalJson(g.block_size_bytes)},
          {"extent_size_bytes", OptionalJson(g.extent_size_bytes)},
          {"stripe_unit_bytes", OptionalJson(g.stripe_unit_bytes)},
          {"stripe_count", OptionalJson(g.stripe_count)},
          {"stripe_width_bytes", OptionalJson(g.stripe_width_bytes)}};
}

}  // namespace

nlohmann::json StackJson(const StackWalk& walk) {
  nlohmann::json layers = nlohmann::json::array();
  for (const StackLayer& l : walk.layers) {
    nlohmann::json checks = nlohmann::json::object();
    nlohmann::json details = nlohmann::json::object();
    nlohmann::json required = nlohmann::json::array();
    for (const StackCheck& c : l.checks) {
      checks[c.key] = c.applicable ? nlohmann::json(c.ok) : nlohmann::json(nullptr);
      details[c.key] = c.detail;
      if (c.required) required.push_back(c.key);
    }
    layers.push_back({{"layer", ToString(l.kind)},
                      {"name", l.name},
                      {"depth", l.depth},
                      {"data_offset_bytes", l.data_offset_bytes},
                      {"offset_in_parent_bytes", l.offset_in_parent_bytes},
                      {"geometry", GeometryJson(l.geometry)},
                      {"properties", l.properties},
                      {"aligned", l.aligned},
                      {"checks", checks},
                      {"details", details},
                      {"required_checks", required},
                      {"reasons", l.reasons},
                      {"notes", l.notes}});
  }
  return layers;
}

std::vector<std::string> StackTreeLines(const StackWalk& walk, const std::string& indent) {
  std::vector<std::string> lines;
  for (const StackLayer& l : walk.layers) {
    const std::string pad = indent + std::string(2 * static_cast<size_t>(l.depth), ' ');
    lines.push_back(fmt::format("{}{}: data at byte {} (+{}){}", pad, l.name, l.data_offset_bytes,
                                l.offset_in_parent_bytes, l.aligned ? "" : " NOT ALIGNED"));
    for (const std::string& r : l.reasons) lines.push_back(pad + "  - " + r);
    for (const std::string& n : l.notes) lines.push_back(pad + "  note: " + n);
  }
  for (const std::string& e : walk.errors) lines.push_back(indent + "cannot read further: " + e);
  return lines;
}

}  // namespace partalign
