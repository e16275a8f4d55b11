// SPDX-License-Identifier: GPL-3.0-or-later
// After a plan's shrinks are written, apply's refusals of the rest say so instead of "nothing
// was written" (seed 47, case 818 of the apply sweep said "nothing was written" after the
// shrink of partition 1 was written).
#include "cli/apply/written_before.h"

#include <gtest/gtest.h>

#include <sstream>

namespace partalign {
namespace {

TEST(WrittenBeforeTest, RefusalsAfterTheShrinksSayWhatWasWritten) {
  std::ostringstream err;
  const std::string written =
      ShrinksWrittenText("partition 1 (ext4, 23.50 MiB -> 21.50 MiB by resize2fs)", 1);
  EXPECT_EQ(written,
            "the shrink of partition 1 (ext4, 23.50 MiB -> 21.50 MiB by resize2fs) is written, "
            "with its table entry; the rest of the plan was not started ('partalign plan' plans "
            "it on the disk as it is now), nothing else was written");
  {
    WrittenBefore guard(err, written);
    err << "partalign: cannot apply 'plan.json': no order of the data moves keeps every "
           "partition's data; the moves need each other's place; nothing was written\n";
    // A move's own account names its disk: left as the mover said it.
    err << "partalign: refused; nothing was written to 'disk.img'\n";
    err << "partalign: "
        << "nothing was" << std::flush << " written";  // no newline yet
  }
  EXPECT_EQ(err.str(),
            "partalign: cannot apply 'plan.json': no order of the data moves keeps every "
            "partition's data; the moves need each other's place; " +
                written +
                "\npartalign: refused; nothing was written to 'disk.img'\npartalign: " + written);
  // The stream has its own buffer back.
  err << "; nothing was written\n";
  EXPECT_NE(err.str().find("; nothing was written\n"), std::string::npos);
}

TEST(WrittenBeforeTest, SeveralShrinks) {
  EXPECT_EQ(ShrinksWrittenText("partition 5 (swap, 1 GiB -> 1020 MiB by mkswap), partition 1 "
                               "(ext4, 10 GiB -> 9 GiB by resize2fs)",
                               2)
                .substr(0, 31),
            "the shrinks of partition 5 (swa");
  EXPECT_NE(ShrinksWrittenText("x", 2).find("are written, with their table entries"),
            std::string::npos);
}

}  // namespace
}  // namespace partalign
