// SPDX-License-Identifier: GPL-3.0-or-later
// What a benchmark measures and how long is left, on stderr while it runs (`bench`, `apply
// --bench`, `report --bench`): one plain line once the first round is measured ("partalign:
// measuring 'disk.img' (66 cells, reads) for about 10 s"), on a terminal redrawn after every
// round with the rounds done and the time left, and ended when the measurement is.
#pragma once

#include <iosfwd>
#include <string>

#include "partalign/bench/bench_runner.h"

namespace partalign {

class BenchProgressLine {
 public:
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
  double seconds_ = 0;
  bool terminal_ = false;
  bool started_ = false;
  size_t width_ = 0;  ///< of the line drawn last, to blank what a shorter one leaves
};

}  // namespace partalign
