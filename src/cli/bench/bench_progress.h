// SPDX-License-Identifier: GPL-3.0-or-later
// What a benchmark measures and how long is left, on stderr while it runs (`bench`, `apply
// --bench`): on a terminal one line redrawn after every round and ended when the measurement
// is; elsewhere one plain line when it starts.
#pragma once

#include <iosfwd>
#include <string>

#include "partalign/bench/bench_runner.h"

namespace partalign {

class BenchProgressLine {
 public:
  /// Prints "partalign: measuring WHAT for about N s" at once.
  BenchProgressLine(std::ostream& err, std::string what, double seconds);
  /// Ends the redrawn line.
  ~BenchProgressLine();
  BenchProgressLine(const BenchProgressLine&) = delete;
  BenchProgressLine& operator=(const BenchProgressLine&) = delete;

  /// For BenchSession::progress; valid while this object lives.
  BenchProgressFn Callback();

 private:
  std::ostream& err_;
  std::string what_;
  bool terminal_ = false;
  size_t width_ = 0;  ///< of the line drawn last, to blank what a shorter one leaves
};

}  // namespace partalign
