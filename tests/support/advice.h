// SPDX-License-Identifier: GPL-3.0-or-later
// Finding the advice a command printed, to run it word for word with RunAdvice (issue #30:
// every command partalign prints as advice is run by a test in the situation that printed it).
#pragma once

#include <string>

namespace partalign::test {

/// The advice in `text`: group 1 of the first match of `pattern` (a std::regex), or "" after a
/// test failure that shows the text.
std::string AdviceIn(const std::string& text, const std::string& pattern);

}  // namespace partalign::test
