// SPDX-License-Identifier: GPL-3.0-or-later
// The partalign command line: parse argv, run the chosen command, map errors to exit codes.
#pragma once

#include <iosfwd>

namespace partalign {

/// Everything main() does, testable with string streams.
int RunApp(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace partalign
