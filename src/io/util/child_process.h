// SPDX-License-Identifier: GPL-3.0-or-later
// Runs another program and collects what it prints: the installed tools' versions (explain)
// and the filesystem tools that shrink a scratch copy of a partition (src/io/resize/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

struct ProgramRun {
  /// The exit status; nullopt when the program was killed by a signal or timed out.
  std::optional<int> exit_code;
  /// Standard output and standard error, interleaved as the program wrote them (cut at
  /// ProgramOptions::max_output_bytes).
  std::string output;
  bool timed_out = false;
};

struct ProgramOptions {
  /// 0: wait as long as it takes (a resize of a large filesystem takes minutes).
  int timeout_ms = 0;
  size_t max_output_bytes = 64 * 1024;
  /// Standard error goes to /dev/null instead of into `output`.
  bool discard_stderr = false;
};

/// Runs `argv` (argv[0] looked up in PATH) with standard input from /dev/null and LC_ALL=C, so
/// that what it prints can be read. An error only when it cannot be started.
Result<ProgramRun> RunProgram(const std::vector<std::string>& argv,
                              const ProgramOptions& options = {});

/// "resize2fs 'x?offset=1'": the command line, quoted for the user.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace partalign
