// SPDX-License-Identifier: GPL-3.0-or-later
// Words for a POSIX shell: the commands partalign prints as advice are pasted as they are
// (issue #30), so every path or value in them is quoted as sh reads it.
#pragma once

#include <string>
#include <string_view>

namespace partalign {

/// `text` as one word for a POSIX shell: as it is when it holds only characters no shell
/// treats specially, else in single quotes.
std::string ShellQuote(std::string_view text);

}  // namespace partalign
