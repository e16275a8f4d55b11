// SPDX-License-Identifier: GPL-3.0-or-later
// Installed-version detection: the real tools, a tool missing from PATH, and one that hangs.
#include "io/tools/tool_versions.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

// Sets PATH for the scope of a test (posix_spawnp searches the calling process's PATH).
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) : old_(std::getenv("PATH")) {
    ::setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(ToolVersionsTest, InstalledVersionsAreWhatTheToolsSay) {
  for (Tool tool : {Tool::kParted, Tool::kUtilLinux, Tool::kGptfdisk}) {
    test::CommandResult r = test::RunCommand({std::string(CommandName(tool)), "--version"});
    ASSERT_EQ(r.exit_code, 0) << CommandName(tool) << " is a test dependency";
    std::optional<ToolVersion> expected = ParseVersionOutput(tool, r.out);
    ASSERT_TRUE(expected.has_value()) << r.out;
    EXPECT_EQ(InstalledToolVersion(tool), expected) << CommandName(tool);
    EXPECT_EQ(DetectToolVersions().For(tool).source, VersionSource::kInstalled);
  }
}

TEST(ToolVersionsTest, MissingToolFallsBackToTheNewestKnown) {
  test::TempDir dir;
  ScopedPath path(dir.path());
  EXPECT_FALSE(InstalledToolVersion(Tool::kParted).has_value());
  ResolvedVersion v = DetectToolVersions().parted;
  EXPECT_EQ(v.source, VersionSource::kNewestKnown);
  EXPECT_EQ(v.version, NewestKnownVersion(Tool::kParted));
}

TEST(ToolVersionsTest, HangingOrFailingToolCountsAsMissing) {
  test::TempDir dir;
  const std::string sleeper = dir.File("parted");
  std::ofstream(sleeper) << "#!/bin/sh\nexec /bin/sleep 30\n";
  ::chmod(sleeper.c_str(), 0755);
  const std::string failing = dir.File("sgdisk");
  std::ofstream(failing) << "#!/bin/sh\necho 'GPT fdisk (sgdisk) version 1.0.9'\nexit 3\n";
  ::chmod(failing.c_str(), 0755);
  ScopedPath path(dir.path());
  EXPECT_FALSE(InstalledToolVersion(Tool::kParted).has_value());  // killed at the timeout
  EXPECT_FALSE(InstalledToolVersion(Tool::kGptfdisk).has_value());
}

}  // namespace
}  // namespace partalign
