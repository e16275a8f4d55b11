// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/text_wrap.h"

#include <algorithm>

namespace partalign {

std::vector<std::string> WrapWords(std::string_view text, size_t width,
                                   size_t continuation_indent) {
  width = std::max<size_t>(width, 1);
  continuation_indent = std::min(continuation_indent, width - 1);
  std::vector<std::string> lines;
  size_t lead = 0;
  while (lead < text.size() && text[lead] == ' ') ++lead;
  std::string line(std::min(lead, width - 1), ' ');
  bool line_has_word = false;
  auto new_line = [&] {
    lines.push_back(line);
    line.assign(continuation_indent, ' ');
    line_has_word = false;
  };
  size_t pos = lead;
  while (pos < text.size()) {
    // The spaces before the next word (kept inside a line, dropped at a break), then the word.
    size_t gap = 0;
    while (pos + gap < text.size() && text[pos + gap] == ' ') ++gap;
    if (pos + gap == text.size()) break;
    size_t end = text.find(' ', pos + gap);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos + gap, end - pos - gap);
    pos = end;
    if (line_has_word && line.size() + gap + word.size() > width) new_line();
    if (line_has_word) line.append(gap, ' ');
    while (line.size() + word.size() > width) {
      // A word wider than what is left of a fresh line: the only break inside a word.
      const size_t room = width - line.size();
      line += word.substr(0, room);
      word.remove_prefix(room);
      line_has_word = true;
      new_line();
    }
    if (word.empty()) continue;
    line += word;
    line_has_word = true;
  }
  lines.push_back(line);
  return lines;
}

std::vector<std::string> WrapWordsAtMost(std::string_view text, size_t width, size_t max_lines,
                                         std::string_view more, size_t continuation_indent) {
  std::vector<std::string> lines = WrapWords(text, width, continuation_indent);
  max_lines = std::max<size_t>(max_lines, 1);
  if (lines.size() <= max_lines) return lines;
  lines.resize(max_lines);
  std::string& last = lines.back();
  // Drop whole words from the end of the last line until `more` fits after it.
  while (!last.empty() && last.size() + more.size() > width) {
    const size_t space = last.find_last_of(' ');
    const size_t indent = last.find_first_not_of(' ');
    if (space == std::string::npos || indent == std::string::npos || space < indent) {
      last.clear();
      break;
    }
    last.resize(space);
    while (!last.empty() && last.back() == ' ') last.pop_back();
  }
  last += more;
  if (last.size() > width) last.resize(width);
  return lines;
}

}  // namespace partalign
