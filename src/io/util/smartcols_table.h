// SPDX-License-Identifier: GPL-3.0-or-later
// Human tables through libsmartcols, the library behind lsblk and fdisk's listings, so that
// partalign's tables look like util-linux's. The only file that includes <libsmartcols.h>.
#pragma once

#include <string>
#include <vector>

namespace partalign {

class TextTable {
 public:
  struct Column {
    std::string name;
    bool right_aligned = false;
  };

  explicit TextTable(std::vector<Column> columns, bool headings = true);

  /// Adds a row; missing trailing cells are empty, extra cells are an error in the caller.
  void AddRow(std::vector<std::string> cells);

  /// The table as text, one line per row, ending in a newline. Independent of the terminal
  /// width, so output on a terminal and in a pipe is the same.
  std::string Render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
  bool headings_;
};

}  // namespace partalign
