// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/mount_table.h"

#include <libmount.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include <fmt/format.h>

#include "io/util/c_handle.h"

namespace partalign {
namespace {

using MntTable = CHandle<mnt_unref_table, libmnt_table*>;
using MntIter = CHandle<mnt_free_iter, libmnt_iter*>;

std::string OrEmpty(const char* s) { return s ? s : ""; }

}  // namespace

Result<std::vector<MountEntry>> ReadMountTable(const std::string& mountinfo_path) {
  errno = 0;
  MntTable table(mnt_new_table_from_file(mountinfo_path.c_str()));
  if (!table) {
    return ErrnoError(errno ? errno : EINVAL,
                      fmt::format("cannot read the mount table '{}'", mountinfo_path));
  }
  MntIter iter(mnt_new_iter(MNT_ITER_FORWARD));
  if (!iter) return ErrnoError(ENOMEM, "mnt_new_iter");
  std::vector<MountEntry> mounts;
  libmnt_fs* fs = nullptr;
  while (mnt_table_next_fs(table.get(), iter.get(), &fs) == 0) {
    MountEntry m;
    m.source = OrEmpty(mnt_fs_get_srcpath(fs));
    if (m.source.empty()) m.source = OrEmpty(mnt_fs_get_source(fs));
    m.target = OrEmpty(mnt_fs_get_target(fs));
    m.fstype = OrEmpty(mnt_fs_get_fstype(fs));
    dev_t devno = mnt_fs_get_devno(fs);
    m.major = major(devno);
    m.minor = minor(devno);
    const char* vfs_options = mnt_fs_get_vfs_options(fs);
    m.read_only =
        vfs_options != nullptr && mnt_optstr_get_option(vfs_options, "ro", nullptr, nullptr) == 0;
    mounts.push_back(std::move(m));
  }
  return mounts;
}

}  // namespace partalign
