// SPDX-License-Identifier: GPL-3.0-or-later
// Writing the boot domain's byte edits on an image file: the old bytes checked first, an edit
// already written skipped (a repeated call completes an interrupted one), anything else
// refused before the first write; the state of each edit read back for resume and restore.
#include "io/boot/boot_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "io/util/unique_fd.h"
#include "support/boot_disks.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

struct EditFile {
  test::TempDir dir;
  std::string image = dir.File("disk.img");
  UniqueFd fd;
  EditFile() {
    test::CreateSparseFile(image, 1 << 20);
    test::WriteBytesAt(image, 4096 + 0x1C, {63, 0, 0, 0});       // partition 1 at 4096
    test::WriteBytesAt(image, 0x5C, {34, 0, 0, 0, 0, 0, 0, 0});  // an absolute one
    fd.reset(::open(image.c_str(), O_RDWR | O_CLOEXEC));
  }
};

const std::vector<ByteEdit> kEdits = {
    {1, 0x1C, {63, 0, 0, 0}, {0, 8, 0, 0}},
    {0, 0x5C, {34, 0, 0, 0, 0, 0, 0, 0}, {0, 8, 0, 0, 0, 0, 0, 0}}};

TEST(BootRecordsTest, EditsAreWrittenWhereTheirPartitionIsAndStatesReadBack) {
  EditFile f;
  ASSERT_TRUE(f.fd.valid());
  EXPECT_EQ(*ReadEditState(f.fd.get(), f.image, kEdits[0], 4096), EditState::kOld);
  ASSERT_TRUE(WriteByteEdits(f.fd.get(), f.image, kEdits, {{1, 4096}}));
  EXPECT_EQ(test::ReadBytes(f.image, 4096 + 0x1C, 4), (std::vector<uint8_t>{0, 8, 0, 0}));
  EXPECT_EQ(test::ReadBytes(f.image, 0x5C, 2), (std::vector<uint8_t>{0, 8}));
  EXPECT_EQ(*ReadEditState(f.fd.get(), f.image, kEdits[0], 4096), EditState::kNew);
  EXPECT_EQ(*ReadEditState(f.fd.get(), f.image, kEdits[1], 0), EditState::kNew);
  // Again: nothing left to write, no error.
  EXPECT_TRUE(WriteByteEdits(f.fd.get(), f.image, kEdits, {{1, 4096}}));
}

TEST(BootRecordsTest, HalfWrittenEditsAreCompletedOthersRefuseEverything) {
  EditFile f;
  // The first edit already written (an interrupted apply): the call completes the second.
  test::WriteBytesAt(f.image, 4096 + 0x1C, {0, 8, 0, 0});
  ASSERT_TRUE(WriteByteEdits(f.fd.get(), f.image, kEdits, {{1, 4096}}));
  EXPECT_EQ(test::ReadBytes(f.image, 0x5C, 2), (std::vector<uint8_t>{0, 8}));

  // Bytes that are neither: refused, and the other edit not written either.
  EditFile g;
  test::WriteBytesAt(g.image, 4096 + 0x1C, {9, 9, 9, 9});
  Status s = WriteByteEdits(g.fd.get(), g.image, kEdits, {{1, 4096}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("neither the record's old nor its new ones"), std::string::npos);
  EXPECT_EQ(test::ReadBytes(g.image, 0x5C, 1), (std::vector<uint8_t>{34}));
  // A partition without a place, and edits of unequal length, are errors.
  EXPECT_FALSE(WriteByteEdits(g.fd.get(), g.image, kEdits, {}));
  const std::vector<ByteEdit> uneven = {{0, 0x5C, {34}, {0, 8}}};
  EXPECT_FALSE(WriteByteEdits(g.fd.get(), g.image, uneven, {}));
}

}  // namespace
}  // namespace partalign
