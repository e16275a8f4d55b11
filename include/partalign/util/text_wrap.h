// SPDX-License-Identifier: GPL-3.0-or-later
// Word wrapping for text shown on a terminal of a given width (the interactive planner's
// screens): lines break between words, never inside one unless a single word is wider than
// the line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace partalign {

/// `text` in lines of at most `width` characters, broken at spaces; the first line keeps the
/// text's leading spaces, the others start with `continuation_indent` spaces. A word longer
/// than a line is split where the line ends (the only break inside a word). An empty text is
/// one empty line.
std::vector<std::string> WrapWords(std::string_view text, size_t width,
                                   size_t continuation_indent = 0);

/// WrapWords, at most `max_lines` lines: when the text needs more, the last line ends, at a
/// word boundary, with `more` (" (x: all)") instead of what does not fit.
std::vector<std::string> WrapWordsAtMost(std::string_view text, size_t width, size_t max_lines,
                                         std::string_view more, size_t continuation_indent = 0);

}  // namespace partalign
