// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/json_reader.h"

#include <set>
#include <vector>

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

namespace {

// Walks a JSON text as nlohmann's SAX parser reads it and remembers the first key that appears
// twice in one object, with its path ("actions[0].bytes_to_move"). nlohmann keeps the last
// value of a duplicated key without a word; JSON (RFC 8259 section 4) leaves the meaning open.
class DuplicateKeyFinder : public nlohmann::json_sax<nlohmann::json> {
 public:
  const std::optional<std::string>& duplicate() const { return duplicate_; }

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(/*object=*/true); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(/*object=*/false); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    Frame& f = stack_.back();
    f.key = key;
    if (f.keys.insert(key).second) return true;
    duplicate_ = Path();
    return false;  // stops the parse: one duplicate is enough to refuse the file
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;        ///< objects: the key whose value is being read
    size_t next_index = 0;  ///< arrays: the index of the next element
    size_t index = 0;       ///< arrays: the element being read
  };

  // A value starts: in an array it is the next element.
  void Element() {
    if (!stack_.empty() && !stack_.back().object) stack_.back().index = stack_.back().next_index++;
  }
  bool Value() {
    Element();
    return true;
  }
  bool Open(bool object) {
    Element();
    stack_.push_back({object, {}, {}, 0, 0});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  // "actions[0].bytes_to_move": the frames' keys and indexes, outermost first.
  std::string Path() const {
    std::string out;
    for (const Frame& f : stack_) {
      if (f.object) {
        if (!out.empty()) out += '.';
        out += Printable(f.key);
      } else {
        out += fmt::format("[{}]", f.index);
      }
    }
    return out;
  }

  std::vector<Frame> stack_;
  std::optional<std::string> duplicate_;
};

}  // namespace

std::optional<std::string> FindDuplicateKey(std::string_view text) {
  DuplicateKeyFinder finder;
  nlohmann::json::sax_parse(text, &finder, nlohmann::json::input_format_t::json,
                            /*strict=*/false);
  return finder.duplicate();
}

Result<nlohmann::json> ParseFormatDocument(std::string_view text, std::string_view format,
                                           int version) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return MakeError("not valid JSON (truncated or corrupt?)");
  if (std::optional<std::string> key = FindDuplicateKey(text)) {
    return MakeError(
        fmt::format("{}: appears twice (which one counts is not for partalign to "
                    "guess)",
                    *key));
  }
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
