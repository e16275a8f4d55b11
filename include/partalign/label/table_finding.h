// SPDX-License-Identifier: GPL-3.0-or-later
// What the validation gate (partalign/label/table_scan.h) found in a partition table, and how
// serious it is: what partalign still does with the table. Audit and plan report the findings
// (docs/output.md: table_status, table_findings); plan and apply refuse read-only tables, every
// command refuses unreadable ones.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace partalign {

/// How serious a finding about a partition table is: what partalign still does with the table.
enum class TableSeverity {
  kNote,        ///< worth saying; every command goes on
  kReadOnly,    ///< audit reads it and says so; plan and apply refuse to change it
  kUnreadable,  ///< nothing in it is trusted: every command that reads the table refuses
};

/// "note", "read-only", "unreadable".
std::string_view ToString(TableSeverity severity);

/// One thing the validation gate found in a table (src/core/table/table_scan.cc): a damaged GPT
/// copy, a hybrid MBR, a partition past the end of the disk, a loop in the EBR chain, ...
struct TableFinding {
  std::string code;  ///< stable, kebab-case ("gpt-backup-invalid"); docs/audit-plan.md lists them
  TableSeverity severity = TableSeverity::kNote;
  std::string message;  ///< one sentence naming what is wrong and where
  bool operator==(const TableFinding&) const = default;
};

/// The worst severity among `findings` (kNote when there are none).
TableSeverity WorstSeverity(const std::vector<TableFinding>& findings);

/// The table's read status as audit and plan report it: "ok" (nothing worse than notes),
/// "read-only" or "unreadable".
std::string_view TableStatus(const std::vector<TableFinding>& findings);

/// One line for the error a command prints when the table is unreadable, or when it refuses to
/// change a read-only one: the first finding of `severity` or worse, and how many more there
/// are ("... (and 2 more problems)"). Empty when there is none.
std::string DescribeFindings(const std::vector<TableFinding>& findings, TableSeverity severity);

/// The first finding of severity `severity` or worse, or nullptr.
const TableFinding* FirstFinding(const std::vector<TableFinding>& findings, TableSeverity severity);

}  // namespace partalign
