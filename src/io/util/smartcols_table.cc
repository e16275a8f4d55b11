// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/smartcols_table.h"

#include <libsmartcols.h>

#include <cstdlib>

#include "io/util/c_handle.h"

namespace partalign {

TextTable::TextTable(std::vector<Column> columns, bool headings)
    : columns_(std::move(columns)), headings_(headings) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  CHandle<scols_unref_table, libscols_table*> table(scols_new_table());
  if (!table) return {};
  scols_table_set_termforce(table.get(), SCOLS_TERMFORCE_NEVER);
  scols_table_enable_noheadings(table.get(), headings_ ? 0 : 1);
  for (const Column& c : columns_) {
    scols_table_new_column(table.get(), c.name.c_str(), 0, c.right_aligned ? SCOLS_FL_RIGHT : 0);
  }
  for (const std::vector<std::string>& row : rows_) {
    libscols_line* line = scols_table_new_line(table.get(), nullptr);
    if (!line) return {};
    for (size_t i = 0; i < row.size(); ++i) scols_line_set_data(line, i, row[i].c_str());
  }
  char* data = nullptr;
  if (scols_print_table_to_string(table.get(), &data) != 0 || data == nullptr) return {};
  std::string text(data);
  std::free(data);
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

}  // namespace partalign
