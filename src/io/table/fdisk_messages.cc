// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/fdisk_messages.h"

#include <cerrno>
#include <string>
#include <vector>

namespace partalign {

int RecordFdiskMessages(fdisk_context* /*cxt*/, fdisk_ask* ask, void* messages) noexcept {
  auto* out = static_cast<std::vector<std::string>*>(messages);
  switch (fdisk_ask_get_type(ask)) {
    case FDISK_ASKTYPE_INFO:
    case FDISK_ASKTYPE_WARN:
    case FDISK_ASKTYPE_WARNX:
      try {
        if (const char* text = fdisk_ask_print_get_mesg(ask); text != nullptr && out != nullptr) {
          out->emplace_back(text);
        }
      } catch (...) {
        // Out of memory while recording a message: drop it rather than unwind through C.
      }
      return 0;
    default:
      return -EINVAL;
  }
}

}  // namespace partalign
