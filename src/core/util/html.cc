// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/html.h"

#include <fmt/format.h>

#include "partalign/util/version.h"

namespace partalign {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlTable(const std::vector<std::string>& columns,
                      const std::vector<std::vector<std::string>>& rows) {
  std::string html = "<table>\n<tr>";
  for (const std::string& c : columns) html += "<th>" + XmlEscape(c) + "</th>";
  html += "</tr>\n";
  for (const auto& row : rows) {
    html += "<tr>";
    for (const std::string& cell : row) html += "<td>" + XmlEscape(cell) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string HtmlPage(const std::string& title, const std::string& body,
                     const std::string& extra_css, const std::string& footer) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{3}\">\n<title>{0}</title>\n"
      "<style>\nbody {{ font-family: sans-serif; margin: 2em; color: #222; }}\n"
      "table {{ border-collapse: collapse; font-size: 0.9em; }}\n"
      "th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}\n"
      "th {{ background: #f0f0f0; }}\n.pictures {{ display: flex; flex-wrap: wrap; gap: 1em; }}\n"
      "p.summary {{ font-size: 1.1em; font-weight: bold; }}\n{4}</style>\n</head>\n<body>\n"
      "<h1>{0}</h1>\n{1}<p><small>partalign {2}.{5}</small></p>\n"
      "</body>\n</html>\n",
      XmlEscape(title), body, kVersion, kHtmlContentSecurityPolicy, extra_css,
      footer.empty() ? "" : " " + footer);
}

}  // namespace partalign
