#include "io/fdisk_write.h"

#include <libfdisk.h>
#include <stdio.h>
#include <stdlib.h>

#include <cerrno>

#include <fmt/format.h>

#include "io/c_handle.h"

namespace partalign {
namespace {

using FdiskContext = CHandle<fdisk_unref_context, fdisk_context*>;
using FdiskScript = CHandle<fdisk_unref_script, fdisk_script*>;

struct AskLog {
  std::vector<std::string> messages;
};

// Records libfdisk's messages; answers no question (a script never needs one).
int RecordAsk(fdisk_context* /*cxt*/, fdisk_ask* ask, void* data) noexcept {
  auto* log = static_cast<AskLog*>(data);
  switch (fdisk_ask_get_type(ask)) {
    case FDISK_ASKTYPE_WARN:
    case FDISK_ASKTYPE_WARNX:
    case FDISK_ASKTYPE_INFO:
      try {
        if (const char* text = fdisk_ask_print_get_mesg(ask)) log->messages.emplace_back(text);
      } catch (...) {
        // Dropping a message is better than unwinding through C frames.
      }
      return 0;
    default:
      return -EINVAL;
  }
}

Result<FdiskContext> OpenContext(const std::string& path, const WriteScriptOptions& options,
                                 bool read_only, AskLog* log) {
  FdiskContext cxt(fdisk_new_context());
  if (!cxt) return ErrnoError(ENOMEM, "fdisk_new_context");
  fdisk_set_ask(cxt.get(), RecordAsk, log);
  if (options.sector_size) {
    auto ss = static_cast<unsigned>(*options.sector_size);
    if (int rc = fdisk_save_user_sector_size(cxt.get(), ss, ss); rc < 0) {
      return ErrnoError(rc, fmt::format("cannot use sector size {}", ss));
    }
  }
  if (int rc = fdisk_assign_device(cxt.get(), path.c_str(), read_only ? 1 : 0); rc < 0) {
    return ErrnoError(rc, fmt::format("libfdisk cannot open '{}'", path));
  }
  return cxt;
}

std::string LastMessage(const AskLog& log) {
  return log.messages.empty() ? std::string() : ": " + log.messages.back();
}

}  // namespace

Result<std::vector<std::string>> WriteSfdiskScript(const std::string& path, std::string_view script,
                                                   const WriteScriptOptions& options) {
  AskLog log;
  Result<FdiskContext> cxt = OpenContext(path, options, /*read_only=*/false, &log);
  if (!cxt) return cxt.error();
  FdiskScript dp(fdisk_new_script(cxt->get()));
  if (!dp) return ErrnoError(ENOMEM, "fdisk_new_script");

  // libfdisk reads scripts from a FILE*; fmemopen gives it the string without a temp file.
  std::string text(script);
  FILE* in = ::fmemopen(text.data(), text.size(), "r");
  if (!in) return ErrnoError(errno, "fmemopen");
  int rc = fdisk_script_read_file(dp.get(), in);
  std::fclose(in);
  if (rc < 0) return ErrnoError(rc, fmt::format("invalid sfdisk script{}", LastMessage(log)));
  if (rc = fdisk_apply_script(cxt->get(), dp.get()); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot apply the script to '{}'{}", path, LastMessage(log)));
  }
  if (rc = fdisk_write_disklabel(cxt->get()); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot write the table of '{}'", path));
  }
  if (rc = fdisk_deassign_device(cxt->get(), /*nosync=*/0); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot sync '{}'", path));
  }
  return log.messages;
}

Result<std::string> DumpSfdiskScript(const std::string& path, const WriteScriptOptions& options) {
  AskLog log;
  Result<FdiskContext> cxt = OpenContext(path, options, /*read_only=*/true, &log);
  if (!cxt) return cxt.error();
  FdiskScript dp(fdisk_new_script(cxt->get()));
  if (!dp) return ErrnoError(ENOMEM, "fdisk_new_script");
  if (int rc = fdisk_script_read_context(dp.get(), cxt->get()); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot read the table of '{}'{}", path, LastMessage(log)));
  }
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = ::open_memstream(&buffer, &size);
  if (!out) return ErrnoError(errno, "open_memstream");
  int rc = fdisk_script_write_file(dp.get(), out);
  std::fclose(out);
  std::string text(buffer ? buffer : "", size);
  std::free(buffer);
  if (rc < 0) return ErrnoError(rc, "cannot format the sfdisk script");
  return text;
}

}  // namespace partalign
