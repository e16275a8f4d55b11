// SPDX-License-Identifier: GPL-3.0-or-later
// The lines the interactive planner draws, for a terminal of a given size: the disk headline
// and topology warnings, a map of the whole disk, the selected start against 1 MiB ticks, the
// partition list with sizes, the change each partition needs and every tool's verdict, the
// message line and the status line with the keys (or the open prompt); and the help and
// placement (`p`) screens. The terminal adapter only puts these lines on the screen.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "partalign/interactive/planner_screen.h"

namespace partalign {

struct PlannerFrame {
  /// Exactly `height` lines of at most `width` characters.
  std::vector<std::string> lines;
  /// The line shown in reverse video (the selected row), or -1.
  int highlight = -1;
  /// Where the terminal cursor goes (the end of an open prompt), or -1.
  int cursor_line = -1;
  int cursor_column = -1;
};

/// The terminal size the planner needs at least.
inline constexpr size_t kPlannerMinWidth = 80;
inline constexpr size_t kPlannerMinHeight = 24;

/// Every line of the frame holds at most `width` - 1 characters of text (wrapped between
/// words; the last column stays empty), padded to `width`.
PlannerFrame DrawPlanner(const PlannerScreen& screen, size_t width, size_t height);

/// What a terminal smaller than kPlannerMinWidth x kPlannerMinHeight shows: the size needed
/// and the key that quits, wrapped to the terminal.
PlannerFrame DrawPlannerTooSmall(size_t width, size_t height);

/// The status line of the list screen: every key (wrapped to the terminal's width).
std::string PlannerKeysLine();

}  // namespace partalign
