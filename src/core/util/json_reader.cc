// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/json_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace partalign {
namespace {

bool IsNonNegativeInteger(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

}  // namespace

FieldReader::FieldReader(const nlohmann::json& object, std::string path)
    : object_(object), path_(std::move(path)) {}

uint64_t FieldReader::Uint(const char* key) {
  const nlohmann::json* v = Get(key);
  if (!v) return 0;
  if (!IsNonNegativeInteger(*v)) {
    Fail(key, "not a non-negative integer");
    return 0;
  }
  return v->get<uint64_t>();
}

std::optional<uint64_t> FieldReader::OptionalUint(const char* key) {
  const nlohmann::json* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!IsNonNegativeInteger(*v)) {
    Fail(key, "not a non-negative integer");
    return std::nullopt;
  }
  return v->get<uint64_t>();
}

std::string FieldReader::String(const char* key, bool required) {
  const nlohmann::json* v = required ? Get(key) : Find(key);
  if (!v || v->is_null()) return {};
  if (!v->is_string()) {
    Fail(key, "not a string");
    return {};
  }
  return v->get<std::string>();
}

bool FieldReader::Bool(const char* key) {
  const nlohmann::json* v = Get(key);
  if (!v) return false;
  if (!v->is_boolean()) {
    Fail(key, "not true or false");
    return false;
  }
  return v->get<bool>();
}

const nlohmann::json* FieldReader::Object(const char* key, bool required) {
  if (!required) {
    const nlohmann::json* v = Find(key);
    if (!v || v->is_null()) return nullptr;  // absent or null: an optional object left out
  }
  const nlohmann::json* v = Get(key);
  if (v && !v->is_object()) {
    Fail(key, "not an object");
    return nullptr;
  }
  return v;
}

const nlohmann::json* FieldReader::Array(const char* key) {
  const nlohmann::json* v = Get(key);
  if (v && !v->is_array()) {
    Fail(key, "not an array");
    return nullptr;
  }
  return v;
}

void FieldReader::Fail(const std::string& key, const std::string& what) {
  if (!error_) error_ = fmt::format("{}{}: {}", path_, key, what);
}

const nlohmann::json* FieldReader::Find(const char* key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

namespace {

void AppendEscaped(std::string& out, char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (c == '\n') {
    out += "\\n";
  } else if (c == '\t') {
    out += "\\t";
  } else if (c == '\r') {
    out += "\\r";
  } else if (byte < 0x20 || byte == 0x7f) {
    out += fmt::format("\\x{:02x}", byte);
  } else {
    out += c;
  }
}

}  // namespace

std::string Printable(std::string_view value, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < value.size() && i < max_chars; ++i) AppendEscaped(out, value[i]);
  if (value.size() > max_chars) out += "...";
  return out;
}

std::string OneLine(std::string_view message) {
  std::string out;
  for (char c : message) AppendEscaped(out, c);
  return out;
}

Result<nlohmann::json> ParseFormatDocument(std::string_view text, std::string_view format,
                                           int version) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return MakeError("not valid JSON (truncated or corrupt?)");
  if (!doc.is_object()) return MakeError("not a JSON object");
  FieldReader root(doc, "");
  std::string name = root.String("format");
  if (root.error()) return MakeError(*root.error());
  if (name != format) {
    return MakeError(fmt::format("format is '{}', not '{}'", Printable(name), format));
  }
  uint64_t found = root.Uint("format_version");
  if (root.error()) return MakeError(*root.error());
  if (found != static_cast<uint64_t>(version)) {
    return MakeError(fmt::format("format_version {} is not supported (this partalign reads {})",
                                 found, version));
  }
  return doc;
}

const nlohmann::json* FieldReader::Get(const char* key) {
  const nlohmann::json* v = Find(key);
  if (!v) Fail(key, "missing");
  return v;
}

}  // namespace partalign
