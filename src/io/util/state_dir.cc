// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/state_dir.h"

#include <cstdlib>

namespace partalign {

std::string StateDir() {
  const char* dir = std::getenv("PARTALIGN_STATE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/var/lib/partalign";
}

}  // namespace partalign
