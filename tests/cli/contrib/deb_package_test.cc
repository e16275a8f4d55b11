// SPDX-License-Identifier: GPL-3.0-or-later
// The Debian package: scripts/package-deb.sh builds it from debian/ with dpkg-buildpackage (in a
// copy of the source tree, without the tests: the same binary) into a scratch directory. It has
// the control fields and files Debian policy asks for and no test tool; lintian reports no
// error and no warning on it. As root, it installs with dpkg, runs, its man page and bash
// completion are found, and dpkg -r removes it leaving nothing behind (also when a check
// fails).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "partalign/util/version.h"
#include "support/device_test.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// dpkg and apt take the same lock: another install on the machine makes dpkg exit 2 at once.
CommandResult Dpkg(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"dpkg"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r;
  for (int attempt = 0; attempt < 60; ++attempt) {
    r = test::RunCommand(argv, "", {{"DEBIAN_FRONTEND", "noninteractive"}});
    if (r.exit_code != 2 || r.err.find("lock") == std::string::npos) break;
    ::sleep(5);
  }
  return r;
}

// Installs the package and removes it when the test ends, whatever happened in between. One
// test process at a time on the machine holds the lock file (two build dirs' test runs would
// remove each other's installation).
class InstalledPackage {
 public:
  explicit InstalledPackage(const std::string& deb) {
    lock_ = ::open("/run/lock/partalign-deb-test.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_ < 0 || ::flock(lock_, LOCK_EX) != 0) throw std::runtime_error("cannot lock");
    CommandResult query = test::RunCommand({"dpkg-query", "-W", "-f=${Status}", "partalign"});
    if (query.out.find("ok installed") != std::string::npos || fs::exists("/usr/sbin/partalign")) {
      preexisting_ = true;
      return;
    }
    install_ = Dpkg({"-i", deb});
    installed_ = true;
  }
  ~InstalledPackage() {
    Remove();
    if (lock_ >= 0) ::close(lock_);
  }
  CommandResult Remove() {
    if (!installed_) return {};
    installed_ = false;
    return Dpkg({"-r", "partalign"});
  }
  InstalledPackage(const InstalledPackage&) = delete;
  InstalledPackage& operator=(const InstalledPackage&) = delete;

  bool preexisting() const { return preexisting_; }
  const CommandResult& install() const { return install_; }

 private:
  int lock_ = -1;
  bool preexisting_ = false;
  bool installed_ = false;
  CommandResult install_;
};

TEST(DebPackageTest, DebianPackageIsLintianCleanInstallsRunsAndRemovesWithoutTrace) {
  test::TempDir dir;
  // One compile at a time, as every other test takes one core.
  const std::vector<std::string> build{
      std::string(PARTALIGN_SOURCE_DIR) + "/scripts/package-deb.sh", "--out", dir.File("out"),
      "--jobs", "1"};
  CommandResult built = test::RunCommand(build);
  ASSERT_EQ(built.exit_code, 0) << test::Describe(build, built);
  // The first line is partalign's package, then its -dbgsym.
  const std::vector<std::string> debs = Lines(built.out);
  ASSERT_EQ(debs.size(), 2u) << built.out;
  const std::string& deb = debs[0];
  CommandResult arch = test::RunCommand({"dpkg", "--print-architecture"});
  ASSERT_EQ(arch.exit_code, 0);
  EXPECT_EQ(fs::path(deb).filename(),
            std::string("partalign_") + kVersion + "_" + Lines(arch.out).at(0) + ".deb");
  EXPECT_EQ(fs::path(debs[1]).filename(),
            std::string("partalign-dbgsym_") + kVersion + "_" + Lines(arch.out).at(0) + ".deb");

  // Control fields: Depends from dpkg-shlibdeps (the C libraries partalign links).
  auto field = [&](const std::string& name) {
    CommandResult r = test::RunCommand({"dpkg-deb", "-f", deb, name});
    return r.out.empty() ? r.out : r.out.substr(0, r.out.size() - 1);
  };
  EXPECT_EQ(field("Package"), "partalign");
  EXPECT_EQ(field("Version"), kVersion);
  EXPECT_EQ(field("Section"), "admin");
  EXPECT_EQ(field("Priority"), "optional");
  EXPECT_NE(field("Maintainer"), "");
  for (const char* lib : {"libc6", "libstdc++6", "libblkid1", "libfdisk1", "libparted2"}) {
    EXPECT_NE(field("Depends").find(lib), std::string::npos) << field("Depends");
  }
  // A summary line and a long description.
  EXPECT_GT(Lines(field("Description")).size(), 3u) << field("Description");

  // Contents: under /usr, owned by root, no test tool, and what policy asks for.
  CommandResult listing = test::RunCommand({"dpkg-deb", "-c", deb});
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  std::vector<std::string> paths;
  for (const std::string& line : Lines(listing.out)) {
    std::istringstream fields(line);
    std::string mode, owner, size, date, time, path;
    fields >> mode >> owner >> size >> date >> time >> path;
    EXPECT_EQ(owner, "root/root") << line;
    EXPECT_TRUE(path == "./" || path.rfind("./usr/", 0) == 0) << line;
    if (mode[0] == 'd') {
      EXPECT_EQ(mode, "drwxr-xr-x") << line;
    }
    EXPECT_EQ(path.find("ssd-sim"), std::string::npos) << line;
    EXPECT_EQ(path.find("test"), std::string::npos) << line;
    paths.push_back(path);
  }
  for (const char* file :
       {"./usr/sbin/partalign", "./usr/share/man/man8/partalign.8.gz",
        "./usr/share/bash-completion/completions/partalign",
        "./usr/share/zsh/vendor-completions/_partalign", "./usr/share/doc/partalign/copyright",
        "./usr/share/doc/partalign/changelog.gz",
        // the realign at the next boot (docs/at-boot.md)
        "./usr/share/initramfs-tools/hooks/partalign",
        "./usr/share/initramfs-tools/scripts/local-premount/partalign",
        "./usr/share/initramfs-tools/scripts/local-top/partalign",
        "./usr/share/partalign/at-boot.sh", "./usr/share/partalign/at-boot-finished.sh",
        "./usr/lib/systemd/system/partalign-at-boot-finished.service",
        "./usr/lib/systemd/system/multi-user.target.wants/partalign-at-boot-finished.service",
        "./usr/lib/dracut/modules.d/90partalign/module-setup.sh",
        "./usr/lib/dracut/modules.d/90partalign/partalign-at-boot.sh",
        "./usr/lib/dracut/modules.d/90partalign/partalign-at-boot-early.sh"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), file), paths.end()) << file << listing.out;
  }
  // The initramfs holds partalign while a realign is staged: a new package rebuilds it.
  CommandResult triggers = test::RunCommand({"dpkg-deb", "-I", deb, "triggers"});
  EXPECT_EQ(triggers.exit_code, 0) << triggers.err;
  EXPECT_NE(triggers.out.find("activate-noawait update-initramfs\n"), std::string::npos)
      << triggers.out;
  // The binary is stripped: no symbol table, no debug information.
  const std::string root = dir.File("root");
  ASSERT_EQ(test::RunCommand({"dpkg-deb", "-x", deb, root}).exit_code, 0);
  // The service that rebuilds the initramfs after a realign at boot is pulled in by the link
  // the package ships (a static unit: nothing to enable, nothing left after dpkg -r).
  EXPECT_EQ(fs::read_symlink(root + "/usr/lib/systemd/system/multi-user.target.wants/"
                                    "partalign-at-boot-finished.service"),
            "../partalign-at-boot-finished.service");
  CommandResult sections = test::RunCommand({"readelf", "-S", root + "/usr/sbin/partalign"});
  ASSERT_EQ(sections.exit_code, 0) << sections.err;
  EXPECT_EQ(sections.out.find(".symtab"), std::string::npos);
  EXPECT_EQ(sections.out.find(".debug_info"), std::string::npos);

  // lintian on both packages: no error (E:) and no warning (W:); the info tags left are
  // explained in docs/packaging.md.
  std::vector<std::string> lintian{"lintian", "--no-cfg", "--fail-on", "error,warning"};
  lintian.insert(lintian.end(), debs.begin(), debs.end());
  CommandResult lint = test::RunCommand(lintian);
  for (const std::string& line : Lines(lint.out)) {
    EXPECT_NE(line.rfind("E: ", 0), 0u) << line;
    EXPECT_NE(line.rfind("W: ", 0), 0u) << line;
  }
  EXPECT_EQ(lint.exit_code, 0) << test::Describe(lintian, lint);

  if (::geteuid() != 0) {
    const std::string why = "package install skipped: dpkg -i needs root";
    if (test::DeviceTestsRequired()) FAIL() << why << " (PARTALIGN_REQUIRE_DEVICE_TESTS=1)";
    GTEST_SKIP() << why;
  }
  // What of the package's paths exists before it is installed (directories it shares with
  // other packages): after dpkg -r, exactly that must exist again.
  std::vector<std::pair<std::string, bool>> existed;
  for (const std::string& path : paths) {
    if (path == "./") continue;
    std::string absolute = path.substr(1);
    if (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
    existed.emplace_back(absolute, fs::exists(fs::symlink_status(absolute)));
  }
  InstalledPackage installed(deb);
  ASSERT_FALSE(installed.preexisting())
      << "partalign is already installed here (dpkg -l partalign, /usr/sbin/partalign): this "
         "test installs and removes it, and does not replace one it did not install";
  ASSERT_EQ(installed.install().exit_code, 0) << installed.install().out << installed.install().err;
  CommandResult version = test::RunCommand({"/usr/sbin/partalign", "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(Lines(version.out).at(0), std::string("partalign ") + kVersion);
  // -a: every page found (a `cmake --install` into /usr/local would come first).
  CommandResult man = test::RunCommand({"man", "-aw", "partalign"});
  EXPECT_EQ(man.exit_code, 0) << man.err;
  const std::vector<std::string> pages = Lines(man.out);
  EXPECT_NE(std::find(pages.begin(), pages.end(), "/usr/share/man/man8/partalign.8.gz"),
            pages.end())
      << man.out;
  // bash-completion loads the file on demand from where the package put it, and it completes
  // `partalign au<TAB>`.
  CommandResult bash = test::RunCommand(
      {"bash", "-c",
       "source /usr/share/bash-completion/bash_completion && _completion_loader partalign; "
       "complete -p partalign && COMP_WORDS=(partalign au) COMP_CWORD=1 COMP_LINE='partalign au' "
       "COMP_POINT=12 && _partalign && printf 'reply %s\\n' \"${COMPREPLY[@]}\""});
  EXPECT_EQ(bash.exit_code, 0) << bash.out << bash.err;
  EXPECT_NE(bash.out.find("-F _partalign partalign"), std::string::npos) << bash.out;
  EXPECT_NE(bash.out.find("reply audit\n"), std::string::npos) << bash.out;
  EXPECT_TRUE(fs::is_regular_file("/usr/share/zsh/vendor-completions/_partalign"));

  // dpkg -r leaves nothing behind: the package is gone from dpkg's database (no conffiles,
  // so not even "config-files"), and each of its paths is back to what it was before.
  CommandResult removed = installed.Remove();
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  CommandResult status =
      test::RunCommand({"dpkg-query", "-W", "-f=${db:Status-Abbrev}", "partalign"});
  EXPECT_TRUE(status.out.empty() || status.out.rfind("un", 0) == 0) << status.out;
  for (const auto& [path, before] : existed) {
    EXPECT_EQ(fs::exists(fs::symlink_status(path)), before)
        << path
        << (before ? " was there before the package and is gone" : " is left behind by dpkg -r");
  }
}

}  // namespace
}  // namespace partalign
