// SPDX-License-Identifier: GPL-3.0-or-later
// contrib/systemd: each unit passes `systemd-analyze verify` (empty output) in a scratch root
// that holds systemd's own units, what its ExecStart lines run and nothing else; without the
// program ExecStart names the same check fails.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;

// A scratch root with systemd's units, the files `programs` (source -> path in the root), and
// the units of contrib/systemd named in `units`, copied to `unit_dir` in the root.
class UnitRoot {
 public:
  UnitRoot(const std::vector<std::pair<fs::path, std::string>>& programs,
           const std::string& unit_dir, const std::vector<std::string>& units)
      : root_(dir_.File("root")) {
    fs::create_directories(root_ / "usr/lib/systemd");
    fs::copy("/usr/lib/systemd/system", root_ / "usr/lib/systemd/system",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    for (const auto& [source, path] : programs) {
      fs::create_directories((root_ / path).parent_path());
      fs::copy_file(source, root_ / path);
    }
    fs::create_directories(root_ / unit_dir);
    const fs::path contrib = fs::path(PARTALIGN_SOURCE_DIR) / "contrib/systemd";
    for (const std::string& unit : units) {
      fs::copy_file(contrib / unit, root_ / unit_dir / unit);
      unit_paths_.push_back((root_ / unit_dir / unit).string());
    }
  }

  const fs::path& root() const { return root_; }
  const std::string& unit(size_t i) const { return unit_paths_.at(i); }

  // Passes with no output; then, without `program`, fails naming it.
  void ExpectVerifiedAndNeeding(const std::string& program) const {
    std::vector<std::string> verify{"systemd-analyze", "verify", "--man=no",
                                    "--root=" + root_.string()};
    verify.insert(verify.end(), unit_paths_.begin(), unit_paths_.end());
    CommandResult r = test::RunCommand(verify);
    EXPECT_EQ(r.exit_code, 0) << test::Describe(verify, r);
    EXPECT_EQ(r.out + r.err, "") << test::Describe(verify, r);

    fs::remove(root_ / program);
    CommandResult missing = test::RunCommand(verify);
    EXPECT_NE(missing.exit_code, 0) << test::Describe(verify, missing);
    EXPECT_NE(missing.err.find("/" + program), std::string::npos) << missing.err;
  }

 private:
  test::TempDir dir_;
  fs::path root_;
  std::vector<std::string> unit_paths_;
};

TEST(SystemdUnitsTest, ServiceAndTimerPassSystemdAnalyzeVerify) {
  UnitRoot root({{"/usr/bin/mkdir", "usr/bin/mkdir"}, {PARTALIGN_BINARY, "usr/sbin/partalign"}},
                "etc/systemd/system", {"partalign-audit.service", "partalign-audit.timer"});
  root.ExpectVerifiedAndNeeding("usr/sbin/partalign");
}

// The service that takes partalign out of the initramfs after a realign at boot: static (no
// [Install]: the package's wants link pulls it in, and dpkg -r takes the link away), a no-op
// without a stage, and its script where ExecStart says.
TEST(SystemdUnitsTest, AtBootFinishedServicePassesSystemdAnalyzeVerify) {
  UnitRoot root({{fs::path(PARTALIGN_SOURCE_DIR) / "contrib/at-boot/at-boot-finished.sh",
                  "usr/share/partalign/at-boot-finished.sh"}},
                "usr/lib/systemd/system", {"partalign-at-boot-finished.service"});
  const std::string text = test::ReadFile(root.unit(0));
  EXPECT_EQ(text.find("[Install]"), std::string::npos) << text;
  EXPECT_NE(text.find("ConditionPathExists=/var/lib/partalign/next-boot.conf\n"), std::string::npos)
      << text;
  root.ExpectVerifiedAndNeeding("usr/share/partalign/at-boot-finished.sh");
}

}  // namespace
}  // namespace partalign
