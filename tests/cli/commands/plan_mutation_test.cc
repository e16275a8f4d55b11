// SPDX-License-Identifier: GPL-3.0-or-later
// A plan file is a claim, never an instruction (issue 37), for real: plans made by `partalign
// plan` on image files - GPT with an empty partition to move by the table, an ext4 with files
// to move and raw data; DOS with logical partitions, a partition given up with --discard; a
// 4096-byte-sector GPT - mutated (support/plan_mutations.h: every number +-1, +-grain, 0, max,
// every enum value, keys removed and written twice), a sample of the mutations run through
// `partalign apply --yes` (support/plan_mutation_run.h): each refused with the image
// byte-identical and no backup, or equal to plan's own plan for its layout and applied with
// the disk invariant holding. tests/core/table/plan_mutation_test.cc checks thousands without
// writing; scripts/plan-mutation-sweep runs every mutation of random plans.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/ext4_image.h"
#include "support/partitioned_loop.h"
#include "support/plan_mutation_run.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;

struct MutatedDisk {
  const char* name;
  const char* script;
  unsigned sector_size;
  uint64_t ext4_start;  ///< in 512-byte sectors; 0: none
  uint64_t ext4_sectors;
  uint64_t raw_at;      ///< bytes of random data written there; 0: none
  const char* discard;  ///< plan --discard N; "" for none
  size_t offset;        ///< where the sample of mutations starts
};

const MutatedDisk kDisks[] = {
    {"gpt_512",
     "label: gpt\nfirst-lba: 34\nstart=2049, size=8191, type=linux\n"
     "start=12289, size=24000, type=linux\nstart=40960, size=8192, type=linux\n",
     512, 12289, 16000, 40960ull * 512 + 4096, "", 0},
    {"dos_logical",
     "label: dos\nstart=63, size=20417, type=83\nstart=22528, size=40960, type=5\n"
     "start=22591, size=8129, type=83\nstart=30783, size=16384, type=83\n",
     512, 63, 16384, 30783ull * 512 + 70000, "6", 3},
    {"gpt_4096",
     "label: gpt\nstart=257, size=1791, type=linux\nstart=2049, size=2047, type=linux\n", 4096, 0,
     0, 2049ull * 4096 + 8192, "", 5},
};

class PlanMutationTest : public ::testing::TestWithParam<MutatedDisk> {};

TEST_P(PlanMutationTest, ASampleOfMutationsIsRefusedOrAppliedAsPlanWouldHaveIt) {
  PARTALIGN_REQUIRE_DEVICES();
  const MutatedDisk& d = GetParam();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, d.script, d.sector_size);
  if (d.ext4_start != 0) {
    test::MakeExt4At(image, d.ext4_start, d.ext4_sectors, test::MakeFiles(d.name), dir, "files");
  }
  if (d.raw_at != 0) {
    test::RunOrThrow({"dd", "if=/dev/urandom", "of=" + image, "bs=4096", "count=3",
                      fmt::format("seek={}", d.raw_at), "oflag=seek_bytes", "conv=notrunc",
                      "status=none"});
  }
  std::vector<std::string> plan = {"plan", "-o", dir.File("plan.json"), image};
  if (d.sector_size != 512) plan.insert(plan.end(), {"--sector-size", "4096"});
  if (*d.discard) plan.insert(plan.end(), {"--discard", d.discard});
  CommandResult made = test::RunPartalign(plan);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;

  test::MutationRun run;
  run.image = image;
  run.sector_size = d.sector_size;
  run.plan_file = dir.File("plan.json");
  run.scratch = dir.File("mutations");
  run.stride = 11;
  run.offset = d.offset;
  run.always = "new_end_sector";
  const test::MutationTally tally = test::RunPlanMutations(run);
  std::printf("%s: mutations %d, refused %d, applied %d, differ %d, violations %d\n", d.name,
              tally.mutations, tally.refused, tally.applied, tally.differ, tally.violations);
  for (const std::string& f : tally.failures) ADD_FAILURE() << f;
  EXPECT_GE(tally.mutations, 20);
  EXPECT_GT(tally.refused, 0);
  EXPECT_GT(tally.applied, 0);
  EXPECT_EQ(tally.differ, 0);
  EXPECT_EQ(tally.violations, 0);
}

INSTANTIATE_TEST_SUITE_P(Disks, PlanMutationTest, ::testing::ValuesIn(kDisks),
                         [](const ::testing::TestParamInfo<MutatedDisk>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace partalign
