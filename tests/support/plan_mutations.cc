// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/plan_mutations.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace partalign::test {
namespace {

using Json = nlohmann::json;
using Pointer = Json::json_pointer;

// "actions[0].bytes_to_move" for /actions/0/bytes_to_move.
std::string Name(const Pointer& at) {
  std::string out;
  Pointer p = at;
  std::vector<std::string> parts;
  while (!p.empty()) {
    parts.insert(parts.begin(), p.back());
    p.pop_back();
  }
  for (const std::string& part : parts) {
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      out += "[" + part + "]";
    } else {
      out += (out.empty() ? "" : ".") + part;
    }
  }
  return out;
}

// The values an enum field may take, by its key ("" for none: not an enum).
std::vector<Json> EnumValues(const std::string& key) {
  if (key == "kind") return {"none", "table-only", "move-data", "impossible"};
  if (key == "empty") return {"zeros", "holes", "discarded"};
  if (key == "label") return {"gpt", "dos", "none"};
  if (key == "source") return {"kernel", "assumed", "default"};
  return {};
}

std::string Dump(const Json& v, const Pointer& here, const Pointer& target, const Json& second) {
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const Pointer child = here / it.key();
      out += fmt::format("{}{}:{}", first ? "" : ",", Json(it.key()).dump(),
                         Dump(it.value(), child, target, second));
      if (child == target) out += fmt::format(",{}:{}", Json(it.key()).dump(), second.dump());
      first = false;
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      out += (i ? "," : "") + Dump(v[i], here / i, target, second);
    }
    return out + "]";
  }
  return v.dump();
}

class Mutator {
 public:
  explicit Mutator(const Json& plan) : plan_(plan) {
    grain_bytes_ = plan.value("grain_bytes", uint64_t{1} << 20);
    const uint64_t ss = plan.contains("disk") && plan["disk"].is_object()
                            ? plan["disk"].value("logical_sector_size", uint64_t{512})
                            : 512;
    grain_sectors_ = ss == 0 ? 1 : std::max<uint64_t>(1, grain_bytes_ / ss);
  }

  std::vector<PlanMutation> All() {
    Walk(plan_, Pointer());
    // The optional "empty" of an action, added where it is missing.
    if (plan_.contains("actions") && plan_["actions"].is_array()) {
      for (size_t i = 0; i < plan_["actions"].size(); ++i) {
        const Pointer action = Pointer("/actions") / i;
        if (!plan_.at(action).is_object() || plan_.at(action).contains("empty")) continue;
        for (const Json& value : EnumValues("empty")) Set(action / "empty", value);
      }
    }
    return std::move(out_);
  }

 private:
  void Add(const std::string& name, const Json& doc) { out_.push_back({name, doc.dump(1)}); }

  void Set(const Pointer& at, const Json& value) {
    Json doc = plan_;
    doc[at] = value;
    Add(fmt::format("{}={}", Name(at), value.dump()), doc);
  }

  // The value a second copy of the key at `at` carries: another value of the same type.
  Json Other(const Pointer& at, const Json& v) const {
    if (v.is_number_unsigned()) return v.get<uint64_t>() + Step(at);
    if (v.is_number_integer()) return v.get<int64_t>() + 1;
    if (v.is_boolean()) return !v.get<bool>();
    if (v.is_string()) {
      for (const Json& e : EnumValues(at.back())) {
        if (e != v) return e;
      }
      return v.get<std::string>() + "x";
    }
    return v;  // objects, arrays, null: the same again
  }

  uint64_t Step(const Pointer& at) const {
    const std::string key = at.empty() ? "" : at.back();
    const bool sectors =
        key.find("_sector") != std::string::npos || key.find("_lba") != std::string::npos;
    return sectors ? grain_sectors_ : grain_bytes_;
  }

  void Numbers(const Pointer& at, const Json& v) {
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    if (!v.is_number_unsigned()) {
      if (v.is_number_integer()) Set(at, 0);
      return;
    }
    const uint64_t x = v.get<uint64_t>();
    const uint64_t step = Step(at);
    std::vector<Json> values;
    if (x < max) values.push_back(x + 1);
    values.push_back(x == 0 ? Json(-1) : Json(x - 1));
    if (x <= max - step) values.push_back(x + step);
    if (x >= step) values.push_back(x - step);
    values.push_back(0);
    values.push_back(max);
    std::vector<Json> seen;
    for (const Json& value : values) {
      if (value == v || std::find(seen.begin(), seen.end(), value) != seen.end()) continue;
      seen.push_back(value);
      Set(at, value);
    }
  }

  void Walk(const Json& v, const Pointer& at) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        const Pointer child = at / it.key();
        // Removed, and written twice.
        Json removed = plan_;
        removed[at].erase(it.key());
        Add(fmt::format("{} removed", Name(child)), removed);
        out_.push_back({fmt::format("{} twice", Name(child)),
                        DumpWithDuplicateKey(plan_, child, Other(child, it.value()))});
        Walk(it.value(), child);
      }
      return;
    }
    if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) Walk(v[i], at / i);
      return;
    }
    if (v.is_number()) {
      Numbers(at, v);
    } else if (v.is_boolean()) {
      Set(at, !v.get<bool>());
    } else if (v.is_string() && !at.empty()) {
      for (const Json& value : EnumValues(at.back())) {
        if (value != v) Set(at, value);
      }
    }
  }

  const Json& plan_;
  uint64_t grain_bytes_ = 1;
  uint64_t grain_sectors_ = 1;
  std::vector<PlanMutation> out_;
};

}  // namespace

std::string DumpWithDuplicateKey(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                                 const nlohmann::json& second) {
  return Dump(doc, Pointer(), at, second);
}

std::vector<PlanMutation> PlanMutations(const nlohmann::json& plan) { return Mutator(plan).All(); }

}  // namespace partalign::test
