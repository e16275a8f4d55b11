// SPDX-License-Identifier: GPL-3.0-or-later
// contrib/systemd: the audit service and its timer pass `systemd-analyze verify` (empty output)
// in a scratch root that holds systemd's own units, the partalign binary where ExecStart says
// and nothing else; without the binary the same check fails.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;

TEST(SystemdUnitsTest, ServiceAndTimerPassSystemdAnalyzeVerify) {
  test::TempDir dir;
  const fs::path root = dir.File("root");
  const fs::path units = root / "etc/systemd/system";
  fs::create_directories(units);
  fs::create_directories(root / "usr/lib/systemd");
  fs::create_directories(root / "usr/sbin");
  fs::create_directories(root / "usr/bin");
  fs::copy("/usr/lib/systemd/system", root / "usr/lib/systemd/system",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::copy_file("/usr/bin/mkdir", root / "usr/bin/mkdir");
  fs::copy_file(PARTALIGN_BINARY, root / "usr/sbin/partalign");
  const fs::path contrib = fs::path(PARTALIGN_SOURCE_DIR) / "contrib/systemd";
  for (const char* unit : {"partalign-audit.service", "partalign-audit.timer"}) {
    fs::copy_file(contrib / unit, units / unit);
  }
  const std::vector<std::string> verify{"systemd-analyze",
                                        "verify",
                                        "--man=no",
                                        "--root=" + root.string(),
                                        (units / "partalign-audit.service").string(),
                                        (units / "partalign-audit.timer").string()};
  CommandResult r = test::RunCommand(verify);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(verify, r);
  EXPECT_EQ(r.out + r.err, "") << test::Describe(verify, r);

  fs::remove(root / "usr/sbin/partalign");
  CommandResult missing = test::RunCommand(verify);
  EXPECT_NE(missing.exit_code, 0) << test::Describe(verify, missing);
  EXPECT_NE(missing.err.find("/usr/sbin/partalign"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace partalign
