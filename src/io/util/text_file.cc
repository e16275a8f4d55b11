#include "io/util/text_file.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace partalign {

Result<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, fmt::format("cannot read {} '{}'", what, path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return ErrnoError(errno ? errno : EIO, fmt::format("cannot read {} '{}'", what, path));
  return buffer.str();
}

}  // namespace partalign
