// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/terminal/curses_terminal.h"

#include <unistd.h>

#include <clocale>

#include <curses.h>

namespace partalign {
namespace {

// How long ncurses waits after ESC for the rest of an escape sequence (ms): short, so that a
// lone Escape cancels a prompt at once.
constexpr int kEscapeDelayMs = 25;
constexpr int kDelete = 127;
constexpr int kEscape = 27;
// Ctrl-C: in raw mode the terminal sends it as this byte instead of raising SIGINT, so that the
// planner can say what it leaves behind (and ask first when edits are not written).
constexpr int kControlC = 3;

}  // namespace

Result<std::unique_ptr<CursesTerminal>> CursesTerminal::Open() {
  if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
    return MakeError("standard input and output are not a terminal");
  }
  std::setlocale(LC_ALL, "");
  if (initscr() == nullptr) return MakeError("cannot initialise the terminal (initscr)");
  raw();
  noecho();
  keypad(stdscr, TRUE);
  set_escdelay(kEscapeDelayMs);
  return std::unique_ptr<CursesTerminal>(new CursesTerminal());
}

CursesTerminal::~CursesTerminal() { endwin(); }

std::pair<size_t, size_t> CursesTerminal::Size() const {
  int lines = 0, columns = 0;
  getmaxyx(stdscr, lines, columns);
  return {static_cast<size_t>(columns > 0 ? columns : 0),
          static_cast<size_t>(lines > 0 ? lines : 0)};
}

void CursesTerminal::Draw(const PlannerFrame& frame) {
  erase();
  auto [columns, lines] = Size();
  for (size_t i = 0; i < frame.lines.size() && i < lines; ++i) {
    const bool highlight = static_cast<int>(i) == frame.highlight;
    if (highlight) attron(A_REVERSE);
    // The last column of the last line would scroll the screen: stop one short there.
    const size_t width = i + 1 == lines ? columns - 1 : columns;
    mvaddnstr(static_cast<int>(i), 0, frame.lines[i].c_str(), static_cast<int>(width));
    if (highlight) attroff(A_REVERSE);
  }
  if (frame.cursor_line >= 0) {
    curs_set(1);
    move(frame.cursor_line, frame.cursor_column);
  } else {
    curs_set(0);
  }
  refresh();
}

Key CursesTerminal::ReadKey() {
  const int c = getch();
  switch (c) {
    case KEY_UP:
      return Key::Of(KeyCode::kUp);
    case KEY_DOWN:
      return Key::Of(KeyCode::kDown);
    case KEY_ENTER:
    case '\n':
    case '\r':
      return Key::Of(KeyCode::kEnter);
    case KEY_BACKSPACE:
    case kDelete:
    case '\b':
      return Key::Of(KeyCode::kBackspace);
    case kEscape:
      return Key::Of(KeyCode::kEscape);
    case kControlC:
      return Key::Of(KeyCode::kInterrupt);
    default:
      if (c > 0 && c < 128) return Key::Char(static_cast<char>(c));
      return Key::Of(KeyCode::kOther);  // KEY_RESIZE and keys the planner does not use
  }
}

void CursesTerminal::Suspend() {
  def_prog_mode();
  endwin();
}

void CursesTerminal::Resume() {
  reset_prog_mode();
  refresh();
}

}  // namespace partalign
