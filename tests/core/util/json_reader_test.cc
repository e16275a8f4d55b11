// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/json_reader.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace partalign {
namespace {

TEST(JsonReaderTest, ReadsTypedFieldsAndNamesTheFirstBadKey) {
  nlohmann::json j = {{"n", 5}, {"s", "x"}, {"b", true}, {"o", {{"k", 1}}}, {"null", nullptr}};
  FieldReader r(j, "root.");
  EXPECT_EQ(r.Uint("n"), 5u);
  EXPECT_EQ(r.String("s"), "x");
  EXPECT_TRUE(r.Bool("b"));
  EXPECT_NE(r.Object("o"), nullptr);
  EXPECT_EQ(r.Object("absent", /*required=*/false), nullptr);
  EXPECT_EQ(r.OptionalUint("null"), std::nullopt);
  EXPECT_EQ(r.String("absent", /*required=*/false), "");
  EXPECT_FALSE(r.error());
  r.Bool("n");
  r.Uint("s");  // a second failure does not replace the first
  ASSERT_TRUE(r.error());
  EXPECT_EQ(*r.error(), "root.n: not true or false");
  FieldReader missing(j, "");
  missing.Object("absent");
  EXPECT_EQ(*missing.error(), "absent: missing");
}

TEST(JsonReaderTest, FormatDocumentHeader) {
  EXPECT_TRUE(ParseFormatDocument(R"({"format":"f","format_version":1})", "f", 1));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"format":"f")", "not valid JSON (truncated or corrupt?)"},
      {"[1]", "not a JSON object"},
      {R"({"format_version":1})", "format: missing"},
      {R"({"format":"g","format_version":1})", "format is 'g', not 'f'"},
      {R"({"format":"f","format_version":-1})", "format_version: not a non-negative integer"},
      {R"({"format":"f","format_version":2})",
       "format_version 2 is not supported (this partalign reads 1)"},
  };
  for (const auto& [text, message] : cases) {
    Result<nlohmann::json> doc = ParseFormatDocument(text, "f", 1);
    ASSERT_FALSE(doc) << text;
    EXPECT_EQ(doc.error().message, message);
  }
}

// A key twice in one object: nlohmann keeps the last without a word, other parsers the first;
// which one a person meant is not for partalign to guess (issue 37).
TEST(JsonReaderTest, AKeyTwiceIsAnErrorNamingItsPath) {
  EXPECT_EQ(FindDuplicateKey(R"({"a":1,"b":{"c":[1,{"d":2,"e":3}]}})"), std::nullopt);
  EXPECT_EQ(FindDuplicateKey(R"({"a":1,"a":2})"), "a");
  EXPECT_EQ(
      FindDuplicateKey(R"({"actions":[{"k":1},{"k":1,"bytes_to_move":4,"bytes_to_move":5}]})"),
      "actions[1].bytes_to_move");
  EXPECT_EQ(FindDuplicateKey(R"({"disk":{"size_bytes":1},"x":[[],[{"y":{"z":1,"z":1}}]]})"),
            "x[1][0].y.z");
  // The same key in different objects is no duplicate.
  EXPECT_EQ(FindDuplicateKey(R"({"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]})"), std::nullopt);
  // A key's text is quoted as any value from a file: on one line.
  EXPECT_EQ(FindDuplicateKey("{\"a\\nb\":1,\"a\\nb\":2}"), "a\\nb");
  Result<nlohmann::json> doc = ParseFormatDocument(
      R"({"format":"f","format_version":1,"disk":{"size_bytes":1,"size_bytes":2}})", "f", 1);
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message,
            "disk.size_bytes: appears twice (which one counts is not for partalign to guess)");
  doc = ParseFormatDocument(R"({"format":"f","format_version":1,"format_version":1})", "f", 1);
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message,
            "format_version: appears twice (which one counts is not for partalign to guess)");
}

TEST(JsonReaderTest, ValuesFromAFileAreQuotedOnOneLine) {
  EXPECT_EQ(Printable("gpt"), "gpt");
  EXPECT_EQ(Printable("a\nb\tc\x1b"), "a\\nb\\tc\\x1b");
  EXPECT_EQ(Printable(std::string(100, 'x'), 8), "xxxxxxxx...");
  EXPECT_EQ(OneLine("line 1\nline 2"), "line 1\\nline 2");
  // A fuzzer-found backup: its "format" held an sfdisk dump, newlines and all, and the error
  // quoting it came out as three lines.
  Result<nlohmann::json> doc = ParseFormatDocument(
      R"({"format": "partalign-table-bac\nkup: start=2048\n", "format_version": 2})",
      "partalign-table-backup", 2);
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message.find('\n'), std::string::npos) << doc.error().message;
  EXPECT_NE(doc.error().message.find("partalign-table-bac\\nkup"), std::string::npos)
      << doc.error().message;
}

}  // namespace
}  // namespace partalign
