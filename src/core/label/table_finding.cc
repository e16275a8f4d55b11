// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/label/table_finding.h"

#include <algorithm>

#include <fmt/format.h>

namespace partalign {

std::string_view ToString(TableSeverity severity) {
  switch (severity) {
    case TableSeverity::kNote:
      return "note";
    case TableSeverity::kReadOnly:
      return "read-only";
    case TableSeverity::kUnreadable:
      return "unreadable";
  }
  return "note";
}

TableSeverity WorstSeverity(const std::vector<TableFinding>& findings) {
  TableSeverity worst = TableSeverity::kNote;
  for (const TableFinding& f : findings) worst = std::max(worst, f.severity);
  return worst;
}

std::string_view TableStatus(const std::vector<TableFinding>& findings) {
  switch (WorstSeverity(findings)) {
    case TableSeverity::kNote:
      return "ok";
    case TableSeverity::kReadOnly:
      return "read-only";
    case TableSeverity::kUnreadable:
      return "unreadable";
  }
  return "ok";
}

const TableFinding* FirstFinding(const std::vector<TableFinding>& findings,
                                 TableSeverity severity) {
  for (const TableFinding& f : findings) {
    if (f.severity >= severity) return &f;
  }
  return nullptr;
}

std::string DescribeFindings(const std::vector<TableFinding>& findings, TableSeverity severity) {
  const TableFinding* first = FirstFinding(findings, severity);
  if (!first) return "";
  const auto count = std::count_if(findings.begin(), findings.end(),
                                   [&](const TableFinding& f) { return f.severity >= severity; });
  if (count <= 1) return first->message;
  return fmt::format("{} (and {} more problem{})", first->message, count - 1, count > 2 ? "s" : "");
}

}  // namespace partalign
