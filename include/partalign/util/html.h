// SPDX-License-Identifier: GPL-3.0-or-later
// The pieces every HTML page partalign writes shares (the bench reports, `partalign report`):
// escaping, tables, and a self-contained page shell whose Content-Security-Policy forbids
// every external load - inline CSS and SVG only, no scripts, images only as data: URLs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace partalign {

/// The Content-Security-Policy of every page: nothing is loaded from anywhere, styles are
/// inline, images only data: URLs, and no script runs.
inline constexpr std::string_view kHtmlContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// Escapes &, <, >, " and ' for HTML and SVG text and attribute values.
std::string XmlEscape(std::string_view text);

/// A <table> with one header row; every cell escaped.
std::string HtmlTable(const std::vector<std::string>& columns,
                      const std::vector<std::vector<std::string>>& rows);

/// A whole page: doctype, charset, the CSP meta tag, `title` (escaped) as <title> and <h1>,
/// the base style plus `extra_css`, `body` (HTML, as it is) and a footer naming partalign's
/// version followed by `footer` (HTML, as it is).
std::string HtmlPage(const std::string& title, const std::string& body,
                     const std::string& extra_css = "", const std::string& footer = "");

}  // namespace partalign
