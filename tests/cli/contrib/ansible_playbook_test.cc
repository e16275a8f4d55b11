// SPDX-License-Identifier: GPL-3.0-or-later
// contrib/ansible/partalign-audit.yml run by the real ansible-playbook (ansible-core), connection
// local, against image files partitioned by the real sfdisk: an aligned image passes the play, a
// partition at sector 63 fails it with a message naming the disk and that partition (and not the
// aligned one next to it), a target partalign cannot open fails it with partalign's error, and
// with no targets the play audits every disk (`audit --all`). No root needed: images only.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;

const fs::path kPlaybook = fs::path(PARTALIGN_SOURCE_DIR) / "contrib/ansible/partalign-audit.yml";

class AnsiblePlaybookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Only what this test says: no ansible.cfg of the build dir or of the user, no colour, no
    // interpreter discovery, scratch files in the test's own directory.
    test::WriteFile(dir_.File("ansible.cfg"), "[defaults]\n");
    env_ = {{"ANSIBLE_CONFIG", dir_.File("ansible.cfg")},
            {"HOME", dir_.path()},
            {"ANSIBLE_LOCAL_TEMP", dir_.File("ansible-local")},
            {"ANSIBLE_REMOTE_TMP", dir_.File("ansible-remote")},
            {"ANSIBLE_NOCOLOR", "1"},
            {"ANSIBLE_RETRY_FILES_ENABLED", "0"},
            {"ANSIBLE_PYTHON_INTERPRETER", "/usr/bin/python3"},
            {"LC_ALL", "C.UTF-8"}};
  }

  // A 64 MiB image with a DOS table whose partitions start at `starts` (sectors), 16 MiB each.
  std::string Image(const std::string& name, const std::vector<int>& starts) {
    const std::string image = dir_.File(name);
    test::CreateSparseFile(image, 64ull << 20);
    std::string script = "label: dos\n";
    for (int start : starts) script += "start=" + std::to_string(start) + ", size=32768\n";
    CommandResult r = test::WriteWithSfdisk(image, script);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return image;
  }

  // ansible-playbook on localhost; `extra_vars` is a JSON object's members ("\"a\": 1").
  CommandResult Play(const std::string& extra_vars,
                     const std::string& partalign = PARTALIGN_BINARY) {
    const std::string vars = "{\"partalign_bin\": \"" + partalign +
                             "\", \"partalign_become\": false" +
                             (extra_vars.empty() ? "" : ", " + extra_vars) + "}";
    argv_ = {"ansible-playbook", "-i", "localhost,", "-c", "local", "-e", vars, kPlaybook.string()};
    return test::RunCommand(argv_, "", env_);
  }

  std::string Describe(const CommandResult& r) const { return test::Describe(argv_, r); }

  test::TempDir dir_;
  std::map<std::string, std::string> env_;
  std::vector<std::string> argv_;
};

TEST_F(AnsiblePlaybookTest, SyntaxCheckPasses) {
  std::vector<std::string> argv{"ansible-playbook", "--syntax-check", "-i", "localhost,",
                                kPlaybook.string()};
  CommandResult r = test::RunCommand(argv, "", env_);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(argv, r);
  EXPECT_EQ(r.err.find("WARNING"), std::string::npos) << r.err;
}

TEST_F(AnsiblePlaybookTest, AlignedImagePassesThePlayWithItsSummary) {
  const std::string image = Image("aligned.img", {2048, 34816});
  CommandResult r = Play("\"partalign_targets\": [\"" + image + "\"]");
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  // The per-disk summary: the image's path and audit's own summary text.
  CommandResult audit = test::RunPartalign({"audit", "--json", image});
  ASSERT_EQ(audit.exit_code, 0) << audit.out << audit.err;
  const std::string summary = nlohmann::json::parse(audit.out)["summary"]["text"];
  EXPECT_NE(r.out.find("\"msg\": \"" + image + ": " + summary + "\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok=3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed=0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("is misaligned"), std::string::npos) << r.out;
}

TEST_F(AnsiblePlaybookTest, PartitionAtSector63FailsThePlayNamingDiskAndPartition) {
  const std::string bad = Image("misaligned.img", {63, 34816});
  const std::string good = Image("aligned.img", {2048});
  CommandResult r = Play("\"partalign_targets\": [\"" + good + "\", \"" + bad + "\"]");
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("failed=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("partalign: " + bad +
                       " on localhost is misaligned: partition 1 (start "
                       "sector 63; grain: start 63 x 512 = 32256 bytes"),
            std::string::npos)
      << r.out;
  // Partition 2 of the same disk and the other disk are aligned: not named as misaligned.
  EXPECT_EQ(r.out.find("partition 2 (start sector"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("partalign: " + good + " on localhost is misaligned"), std::string::npos)
      << r.out;
  // Both disks are summarised before the play fails.
  EXPECT_NE(r.out.find("\"msg\": \"" + good + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"msg\": \"" + bad + ": "), std::string::npos) << r.out;
}

TEST_F(AnsiblePlaybookTest, TargetPartalignCannotOpenFailsWithItsError) {
  const std::string missing = dir_.File("no-such.img");
  CommandResult r = Play("\"partalign_targets\": [\"" + missing + "\"]");
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("failed=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"rc\": 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("partalign: cannot open '" + missing + "'"), std::string::npos) << r.out;
}

TEST_F(AnsiblePlaybookTest, NoTargetsAuditsEveryDiskWithTheExtraArguments) {
  // A stand-in binary records its arguments and reports no disk (audit --all on this machine
  // would audit other people's loop devices).
  const std::string fake = dir_.File("fake-partalign");
  test::WriteFile(fake, "#!/bin/sh\necho \"$@\" > \"$0.args\"\necho '[]'\n");
  fs::permissions(fake, fs::perms::owner_all);
  CommandResult r = Play("\"partalign_audit_args\": [\"--grain\", \"4MiB\"]", fake);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(test::ReadFile(fake + ".args"), "audit --json --all --grain 4MiB\n");
}

}  // namespace
}  // namespace partalign
