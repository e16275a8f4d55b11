// SPDX-License-Identifier: GPL-3.0-or-later
// "Did you mean ...?": the name a typo was meant to be (a command, an option), by edit distance
// (git's help.c and CLI tools do the same).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partalign {

/// The optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters ("plna" -> "plan") cost 1 each.
size_t EditDistance(std::string_view a, std::string_view b);

/// The name of `names` that `typed` was most likely meant to be: the only name it is a prefix
/// of, or the nearest by EditDistance when that is small for its length (none for up to 2
/// characters, 1 up to 4, 2 up to 8, 3 beyond), the first such in `names` on a tie; nullopt when
/// none is near. A digit that looks like a letter ('0' for 'o', '1' for 'l') counts as that letter.
std::optional<std::string> ClosestName(std::string_view typed,
                                       const std::vector<std::string>& names);

}  // namespace partalign
