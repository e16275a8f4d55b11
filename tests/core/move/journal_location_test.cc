// SPDX-License-Identifier: GPL-3.0-or-later
// Where a journal may live: never on storage the move writes, never on a file system a power
// failure erases, never where nobody can tell.
#include "partalign/move/journal_location.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

using Kind = StorageNode::Kind;

StorageNode Block(uint64_t major_number, uint64_t minor_number, const char* name) {
  return {Kind::kBlockDevice, major_number, minor_number, name};
}
StorageNode File(uint64_t dev, uint64_t ino, const char* name) {
  return {Kind::kFile, dev, ino, name};
}

TEST(JournalLocationTest, Rules) {
  // A loop device over /tmp/x/disk.img, with /tmp on /dev/vda.
  const TargetStorage loop{"/dev/loop0",
                           {Block(7, 0, "/dev/loop0"), File(254, 77, "/tmp/x/disk.img")}};
  // The image file itself as the target.
  const TargetStorage image{"/tmp/x/disk.img", {File(254, 77, "/tmp/x/disk.img")}};
  // A real disk.
  const TargetStorage sdb{"/dev/sdb", {Block(8, 16, "/dev/sdb")}};

  struct Case {
    const char* what;
    JournalPlacement journal;
    const TargetStorage* target;
    const char* problem;  ///< substring, or nullptr when allowed
  };
  const JournalPlacement on_vda{"/tmp/j", "ext4", false, true, false, {Block(254, 0, "/dev/vda")}};
  const JournalPlacement on_sdb2{
      "/mnt/b", "ext4", false, true, false, {Block(8, 18, "/dev/sdb2"), Block(8, 16, "/dev/sdb")}};
  const JournalPlacement in_image{"/mnt/img",
                                  "ext4",
                                  false,
                                  true,
                                  false,
                                  {Block(7, 1, "/dev/loop1p1"), Block(7, 1, "/dev/loop1"),
                                   File(254, 77, "/tmp/x/disk.img"), Block(254, 0, "/dev/vda")}};
  const JournalPlacement on_tmpfs{"/dev/shm", "tmpfs", true, true, false, {}};
  const JournalPlacement on_overlay{"/var/j", "overlay", false, false, false, {}};
  const JournalPlacement on_nfs{"/net/j", "nfs4", false, true, true, {}};
  const Case cases[] = {
      {"next to the loop's image: other blocks of the host file system", on_vda, &loop, nullptr},
      {"next to the image file itself", on_vda, &image, nullptr},
      {"on another disk", on_vda, &sdb, nullptr},
      {"on a partition of the disk being moved", on_sdb2, &sdb, "stored on '/dev/sdb2'"},
      {"inside the file system in the image being moved", in_image, &image, "/tmp/x/disk.img"},
      {"inside the image, through another loop device", in_image, &loop, "/tmp/x/disk.img"},
      {"on tmpfs", on_tmpfs, &sdb, "power failure erases"},
      {"on an untraceable file system", on_overlay, &sdb, "cannot tell"},
      {"on NFS", on_nfs, &sdb, nullptr},
  };
  for (const Case& c : cases) {
    std::optional<std::string> problem = JournalPlacementProblem(c.journal, *c.target);
    if (c.problem == nullptr) {
      EXPECT_EQ(problem, std::nullopt) << c.what;
    } else {
      ASSERT_TRUE(problem) << c.what;
      EXPECT_NE(problem->find(c.problem), std::string::npos) << c.what << ": " << *problem;
    }
  }
}

}  // namespace
}  // namespace partalign
