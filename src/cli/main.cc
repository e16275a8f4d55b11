// SPDX-License-Identifier: GPL-3.0-or-later
// partalign: parse, run one command, flush. Everything else lives in app.cc and command_*.cc.
#include <cstdio>
#include <iostream>

#include "cli/app.h"
#include "cli/exit_code.h"

int main(int argc, char** argv) {
  int rc = partalign::RunApp(argc, argv, std::cout, std::cerr);
  // util-linux close_stdout_atexit(): a report that did not reach its reader is a failure.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "partalign: write error on standard output\n";
    return static_cast<int>(partalign::ExitCode::kFailure);
  }
  return rc;
}
