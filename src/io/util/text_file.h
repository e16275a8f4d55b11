// Reading a whole file (plan files, backups) with an error that names it.
#pragma once

#include <string>
#include <string_view>

#include "partalign/util/result.h"

namespace partalign {

/// The whole content of `path`. `what` names the file in the error ("cannot read plan 'p.json':
/// No such file or directory").
Result<std::string> ReadWholeFile(const std::string& path, std::string_view what);

}  // namespace partalign
