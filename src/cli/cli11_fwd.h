// SPDX-License-Identifier: GPL-3.0-or-later
// CLI11's App, declared only. The CLI's headers name it; only the files that register options
// include <CLI/CLI.hpp>, which costs several seconds of compile time in every file that
// includes it (its validators are objects built in each translation unit).
#pragma once

namespace CLI {
class App;
}  // namespace CLI
