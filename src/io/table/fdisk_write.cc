// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/fdisk_write.h"

#include <libfdisk.h>
#include <stdio.h>
#include <stdlib.h>

#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "io/table/fdisk_messages.h"
#include "io/util/c_handle.h"

namespace partalign {
namespace {

using FdiskScript = CHandle<fdisk_unref_script, fdisk_script*>;
using FdiskIter = CHandle<fdisk_free_iter, fdisk_iter*>;

struct AskLog {
  std::vector<std::string> messages;
};

Result<FdiskContext> OpenContext(const std::string& path, const WriteScriptOptions& options,
                                 bool read_only, AskLog* log) {
  FdiskContext cxt(fdisk_new_context());
  if (!cxt) return ErrnoError(ENOMEM, "fdisk_new_context");
  fdisk_set_ask(cxt.get(), RecordFdiskMessages, &log->messages);
  if (options.sector_size) {
    auto ss = static_cast<unsigned>(*options.sector_size);
    if (int rc = fdisk_save_user_sector_size(cxt.get(), ss, ss); rc < 0) {
      return ErrnoError(rc, fmt::format("cannot use sector size {}", ss));
    }
  }
  if (int rc = fdisk_assign_device(cxt.get(), path.c_str(), read_only ? 1 : 0); rc < 0) {
    return ErrnoError(rc, fmt::format("libfdisk cannot open '{}'", path));
  }
  // sfdisk does the same unless --wipe always (disk-utils/sfdisk.c): a new label keeps the
  // boot code that shares the first sector with it.
  if (int rc = fdisk_enable_bootbits_protection(cxt.get(), 1); rc < 0) {
    return ErrnoError(rc, "cannot protect the boot code");
  }
  return cxt;
}

// Moves the partitions of the script's table (read from a disk) to their new places.
Status ApplyEdits(fdisk_script* dp, const std::vector<ScriptEdit>& edits, const std::string& path) {
  fdisk_table* table = fdisk_script_get_table(dp);
  for (const ScriptEdit& edit : edits) {
    FdiskIter iter(fdisk_new_iter(FDISK_ITER_FORWARD));
    if (!iter) return ErrnoError(ENOMEM, "fdisk_new_iter");
    fdisk_partition* pa = nullptr;
    bool found = false;
    while (table && fdisk_table_next_partition(table, iter.get(), &pa) == 0) {
      if (fdisk_partition_get_partno(pa) + 1 != edit.partition) continue;
      if (fdisk_partition_set_start(pa, edit.start_sector) < 0 ||
          fdisk_partition_set_size(pa, edit.size_sectors) < 0) {
        return MakeError(fmt::format("partition {}: cannot set start {} and size {}",
                                     edit.partition, edit.start_sector, edit.size_sectors));
      }
      found = true;
      break;
    }
    if (!found) {
      return MakeError(fmt::format("'{}' has no partition {}", path, edit.partition));
    }
  }
  return {};
}

using FdiskTableHandle = CHandle<fdisk_unref_table, fdisk_table*>;

// The first sector of a DOS extended partition without logical partitions, on a disk whose
// sectors are larger than 512 bytes: libfdisk (2.38, and upstream since) writes it an empty EBR
// from a 512-byte buffer on its own stack but writes a whole sector, so the rest of the sector
// gets whatever lay on the stack above that buffer (dos_write_disklabel, found by ASan).
std::optional<uint64_t> EmptyExtendedOnLargeSectors(fdisk_context* cxt) {
  if (!fdisk_is_label(cxt, DOS) || fdisk_get_sector_size(cxt) <= 512) return std::nullopt;
  fdisk_table* raw = nullptr;
  if (fdisk_get_partitions(cxt, &raw) < 0) return std::nullopt;
  FdiskTableHandle table(raw);
  FdiskIter iter(fdisk_new_iter(FDISK_ITER_FORWARD));
  if (!iter) return std::nullopt;
  std::optional<uint64_t> extended;
  bool logical = false;
  fdisk_partition* pa = nullptr;
  while (fdisk_table_next_partition(table.get(), iter.get(), &pa) == 0) {
    if (fdisk_partition_is_container(pa)) extended = fdisk_partition_get_start(pa);
    logical |= fdisk_partition_get_partno(pa) >= 4;
  }
  return logical ? std::nullopt : extended;
}

// Gives the sector at `sector` of the device libfdisk wrote the bytes libfdisk means it to have
// past its first 512: zeros, where the stack bytes it wrote lie (EmptyExtendedOnLargeSectors).
// Only when libfdisk wrote that sector: `before` is what the sector's tail held until then.
Status ZeroStackBytesOfEmptyEbr(fdisk_context* cxt, uint64_t sector, const std::string& before,
                                const std::string& path) {
  const uint64_t ss = fdisk_get_sector_size(cxt);
  const int fd = fdisk_get_devfd(cxt);
  const auto at = static_cast<off_t>(sector * ss + 512);
  std::string tail(ss - 512, '\0');
  if (::pread(fd, tail.data(), tail.size(), at) != static_cast<ssize_t>(tail.size())) {
    return ErrnoError(errno, fmt::format("cannot read back sector {} of '{}'", sector, path));
  }
  if (tail == before) return {};
  const std::string zeros(ss - 512, '\0');
  if (::pwrite(fd, zeros.data(), zeros.size(), at) != static_cast<ssize_t>(zeros.size())) {
    return ErrnoError(errno, fmt::format("cannot write sector {} of '{}'", sector, path));
  }
  return {};
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
  // What the sector an empty EBR goes to holds past its first 512 bytes before the write.
  const std::optional<uint64_t> empty_ebr = EmptyExtendedOnLargeSectors(cxt->get());
  std::string before;
  if (empty_ebr) {
    const uint64_t ss = fdisk_get_sector_size(cxt->get());
    before.assign(ss - 512, '\0');
    if (::pread(fdisk_get_devfd(cxt->get()), before.data(), before.size(),
                static_cast<off_t>(*empty_ebr * ss + 512)) != static_cast<ssize_t>(before.size())) {
      return ErrnoError(errno, fmt::format("cannot read sector {} of '{}'", *empty_ebr, path));
    }
  }
  if (rc = fdisk_write_disklabel(cxt->get()); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot write the table of '{}'", path));
  }
  if (empty_ebr) {
    if (Status s = ZeroStackBytesOfEmptyEbr(cxt->get(), *empty_ebr, before, path); !s) {
      return s.error();
    }
  }
  if (rc = fdisk_deassign_device(cxt->get(), /*nosync=*/0); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot sync '{}'", path));
  }
  return log.messages;
}

Result<std::string> DumpSfdiskScript(const std::string& path, const WriteScriptOptions& options,
                                     const std::vector<ScriptEdit>& edits,
                                     const std::vector<ScriptHeader>& headers) {
  AskLog log;
  Result<FdiskContext> cxt = OpenContext(path, options, /*read_only=*/true, &log);
  if (!cxt) return cxt.error();
  FdiskScript dp(fdisk_new_script(cxt->get()));
  if (!dp) return ErrnoError(ENOMEM, "fdisk_new_script");
  if (int rc = fdisk_script_read_context(dp.get(), cxt->get()); rc < 0) {
    return ErrnoError(rc, fmt::format("cannot read the table of '{}'{}", path, LastMessage(log)));
  }
  if (Status s = ApplyEdits(dp.get(), edits, path); !s) return s.error();
  for (const ScriptHeader& h : headers) {
    // A null value removes the header (libfdisk/src/script.c, fdisk_script_set_header()).
    if (int rc =
            fdisk_script_set_header(dp.get(), h.name.c_str(), h.value ? h.value->c_str() : nullptr);
        rc < 0) {
      return ErrnoError(rc, fmt::format("cannot set the script header '{}'", h.name));
    }
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
