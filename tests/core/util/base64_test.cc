// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/base64.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

std::vector<uint8_t> Bytes(std::string_view s) { return {s.begin(), s.end()}; }

TEST(Base64Test, Rfc4648Vectors) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(Bytes(plain)), encoded);
    EXPECT_EQ(Base64Decode(encoded), Bytes(plain)) << encoded;
  }
}

TEST(Base64Test, AllByteValuesRoundTrip) {
  std::vector<uint8_t> all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<uint8_t>(i));
  EXPECT_EQ(Base64Decode(Base64Encode(all)), all);
}

TEST(Base64Test, RejectsMalformedText) {
  for (const char* bad : {"Zg=", "Zm9", "Zm9v!A==", "Z===", "Zg==Zg==", "====", "Zm 9v"}) {
    EXPECT_FALSE(Base64Decode(bad)) << bad;
  }
}

}  // namespace
}  // namespace partalign
