// SPDX-License-Identifier: GPL-3.0-or-later
// Strict reading of the JSON documents partalign reads back (plan files, table backups): typed
// fields, and the first error remembered with its key path ("actions[1].new_start_sector:
// missing"), so that a broken file gets a one-line error naming what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "partalign/util/result.h"

namespace partalign {

/// Reads the fields of one JSON object. After the first failure every getter returns a default
/// value; check error() once after a group of reads.
class FieldReader {
 public:
  /// `path` prefixes every key in messages ("disk.", "ranges[2].").
  FieldReader(const nlohmann::json& object, std::string path);

  uint64_t Uint(const char* key);
  /// A non-negative integer, or nullopt when the key is missing or null.
  std::optional<uint64_t> OptionalUint(const char* key);
  /// A string; with `required` false a missing key or null reads as "".
  std::string String(const char* key, bool required = true);
  bool Bool(const char* key);
  /// An object; with `required` false a missing key reads as nullptr without an error.
  const nlohmann::json* Object(const char* key, bool required = true);
  const nlohmann::json* Array(const char* key);

  /// Records "<path><key>: <what>" unless an error is already recorded.
  void Fail(const std::string& key, const std::string& what);
  const std::optional<std::string>& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json* Find(const char* key) const;
  const nlohmann::json* Get(const char* key);

  const nlohmann::json& object_;
  std::string path_;
  std::optional<std::string> error_;
};

/// A value read from a file, fit to quote in a one-line message: control characters escaped
/// ("\n", "\x1b"), and at most `max_chars` characters kept (then "..."). A file's strings are
/// untrusted: quoted raw, a newline in one would make an error message two lines.
std::string Printable(std::string_view value, size_t max_chars = 64);

/// `message` as one line: control characters escaped (the other checks of a document's reader
/// quote values with Printable; this is the last guard).
std::string OneLine(std::string_view message);

/// Parses `text` as one of partalign's file formats: a JSON object whose "format" is `format`
/// and whose "format_version" is `version`. Errors say what is wrong ("not valid JSON
/// (truncated or corrupt?)", "format is 'x', not 'partalign-plan'", "format_version 2 is not
/// supported (this partalign reads 1)"). A key twice in one object is an error in every format
/// read here (a plan, a backup, a snapshot): JSON parsers disagree on which value counts, and
/// nlohmann keeps the last without a word ("actions[0].bytes_to_move: appears twice ...").
Result<nlohmann::json> ParseFormatDocument(std::string_view text, std::string_view format,
                                           int version);

/// The path of the first key that appears twice in one object of `text` ("disk.size_bytes",
/// "actions[1].kind"); nullopt when there is none (or `text` is not JSON: the parser says so).
std::optional<std::string> FindDuplicateKey(std::string_view text);

}  // namespace partalign
