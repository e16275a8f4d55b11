// SPDX-License-Identifier: GPL-3.0-or-later
// The terminal of `plan --interactive`, through ncursesw (Debian's libncurses-dev, as cfdisk):
// it puts the lines the planner core drew on the screen (reverse video on the selected row,
// the cursor at the end of a prompt) and turns key presses into planner keys. Raw mode, as
// cfdisk: Ctrl-C is a key the planner answers (KeyCode::kInterrupt), not a signal that kills it
// without a word. Nothing else:
// what is drawn and what a key does is the core's (include/partalign/interactive/).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "partalign/interactive/planner_render.h"
#include "partalign/interactive/planner_screen.h"
#include "partalign/util/result.h"

namespace partalign {

class CursesTerminal {
 public:
  /// Takes over the terminal (initscr); fails when standard input or output is no terminal.
  static Result<std::unique_ptr<CursesTerminal>> Open();
  CursesTerminal(const CursesTerminal&) = delete;
  CursesTerminal& operator=(const CursesTerminal&) = delete;
  ~CursesTerminal();  ///< gives the terminal back (endwin)

  /// Columns and lines.
  std::pair<size_t, size_t> Size() const;
  void Draw(const PlannerFrame& frame);
  /// Waits for a key.
  Key ReadKey();
  /// Leaves full-screen mode for plain output (apply's), and comes back.
  void Suspend();
  void Resume();

 private:
  CursesTerminal() = default;
};

}  // namespace partalign
