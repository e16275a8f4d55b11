// SPDX-License-Identifier: GPL-3.0-or-later
// What every HTML page partalign writes must be (the report, the bench pages): one file that
// loads nothing - the CSP meta tag; no script, link, iframe, img or other loading element; no
// src= or url() in any tag, links only within the page, http:// only as the SVG namespace (a
// name, never fetched); no @import or url() in the style sheet. Text may say anything (a
// partition named "<img src=x>" shows escaped, as text). Header-only:
// the unit tests of the renderer and the end-to-end tests of the command share it.
#pragma once

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace partalign::test {

inline size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Every tag, "<...>": text is escaped, so '<' starts nothing else.
inline std::vector<std::string> Tags(const std::string& html) {
  std::vector<std::string> tags;
  for (size_t pos = html.find('<'); pos != std::string::npos; pos = html.find('<', pos + 1)) {
    tags.push_back(html.substr(pos, html.find('>', pos) - pos + 1));
  }
  return tags;
}

inline void ExpectSelfContainedHtml(const std::string& html) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                      "'none'; style-src 'unsafe-inline'; img-src data:\">"),
            std::string::npos);
  const std::regex forbidden(R"(^<(script|link|iframe|object|embed|img|image|use|base)\b)",
                             std::regex::icase);
  const std::regex href(R"(\b(href|xlink:href)=\"([^\"]*)\")");
  for (const std::string& tag : Tags(html)) {
    EXPECT_FALSE(std::regex_search(tag, forbidden)) << tag;
    EXPECT_EQ(tag.find("src="), std::string::npos) << tag;
    EXPECT_EQ(tag.find("url("), std::string::npos) << tag;
    EXPECT_EQ(tag.find("https:"), std::string::npos) << tag;
    // http: only as the SVG namespace, a name that is never fetched.
    EXPECT_EQ(CountOf(tag, "http:"), CountOf(tag, "xmlns=\"http://www.w3.org/2000/svg\"")) << tag;
    std::smatch m;
    if (std::regex_search(tag, m, href)) {
      EXPECT_EQ(m[2].str().rfind("#", 0), 0u) << tag;
    }
  }
  // The style sheet imports nothing and fetches nothing.
  const std::string style =
      html.substr(html.find("<style>"), html.find("</style>") - html.find("<style>"));
  EXPECT_EQ(style.find("@import"), std::string::npos) << style;
  EXPECT_EQ(style.find("url("), std::string::npos) << style;
}

}  // namespace partalign::test
