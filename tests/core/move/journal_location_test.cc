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

// A one-disk machine (issue #29): the journal in partition 1 of the disk whose partition 2
// moves. Allowed when the move writes none of partition 1's bytes, with a note saying what it
// costs; refused when it writes any of them, when the move's bytes are not known (any byte),
// and for a file system on the whole disk.
TEST(JournalLocationTest, OnAPartitionTheMoveDoesNotWrite) {
  StorageNode sda1 = Block(8, 1, "/dev/sda1");
  sda1.partition = 1;
  sda1.extent = {1 << 20, 100 << 20};  // 1 MiB .. 101 MiB
  const JournalPlacement on_sda1{"/var/lib/partalign/journals",  "ext4", false, true, false,
                                 {sda1, Block(8, 0, "/dev/sda")}};
  TargetStorage sda{"/dev/sda", {Block(8, 0, "/dev/sda")}};
  // The move: partition 2 from 101 MiB + 63 sectors down to 101 MiB, and the MBR.
  const uint64_t p2 = (101ull << 20) + 63 * 512;
  sda.written = {{p2, 50 << 20}, {101ull << 20, 50 << 20}, {0, 512}};
  EXPECT_EQ(JournalPlacementProblem(on_sda1, sda), std::nullopt);
  const std::optional<std::string> note = JournalPlacementNote(on_sda1, sda);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("on the disk being changed (partition 1, '/dev/sda1', which this move "
                       "neither reads nor writes): a failure of this disk loses both"),
            std::string::npos)
      << *note;

  // The move writes one sector of partition 1 (it moves into it): refused.
  TargetStorage into = sda;
  into.written.push_back({(101ull << 20) - 512, 512});
  std::optional<std::string> problem = JournalPlacementProblem(on_sda1, into);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("or on a partition the move does not write (partition 1 lies where it "
                          "writes)"),
            std::string::npos)
      << *problem;
  EXPECT_EQ(JournalPlacementNote(on_sda1, into), std::nullopt);
  // Bytes not known: any byte may be written.
  TargetStorage unknown = sda;
  unknown.written.clear();
  EXPECT_TRUE(JournalPlacementProblem(on_sda1, unknown));
  // A file system on the whole disk: nothing to stand outside the move.
  const JournalPlacement on_sda{"/mnt", "ext4", false, true, false, {Block(8, 0, "/dev/sda")}};
  EXPECT_TRUE(JournalPlacementProblem(on_sda, sda));
  // A partition of another disk that happens to lie at the same bytes: another disk.
  StorageNode sdb1 = Block(8, 17, "/dev/sdb1");
  sdb1.partition = 1;
  sdb1.extent = {p2, 50 << 20};
  const JournalPlacement on_sdb1{"/mnt", "ext4", false,
                                 true,   false,  {sdb1, Block(8, 16, "/dev/sdb")}};
  EXPECT_EQ(JournalPlacementProblem(on_sdb1, sda), std::nullopt);
  EXPECT_EQ(JournalPlacementNote(on_sdb1, sda), std::nullopt);
}

}  // namespace
}  // namespace partalign
