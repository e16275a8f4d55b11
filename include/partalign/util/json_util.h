// SPDX-License-Identifier: GPL-3.0-or-later
// Small helpers for the JSON documents partalign writes: unknown values are null, never "".
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace partalign {

inline nlohmann::json StringOrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

template <typename T>
nlohmann::json OptionalJson(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace partalign
