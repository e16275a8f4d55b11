// The Debian package: `cpack -G DEB` in the test build dir (its objects, no second build) makes
// partalign_VERSION_ARCH.deb with the control fields and files Debian policy asks for and no
// test tool; lintian reports no error on it. As root, it installs with dpkg, runs, its man page
// and bash completion are found, and it is removed again (also when a check fails).
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

TEST(DebPackageTest, CpackBuildsALintianCleanPackageThatInstallsAndRuns) {
  test::TempDir dir;
  const fs::path build = fs::path(PARTALIGN_BINARY).parent_path();
  const std::vector<std::string> cpack{
      "cpack", "-G", "DEB", "--config", (build / "CPackConfig.cmake").string(), "-B", dir.path()};
  CommandResult packed = test::RunCommand(cpack);
  ASSERT_EQ(packed.exit_code, 0) << test::Describe(cpack, packed);
  CommandResult arch = test::RunCommand({"dpkg", "--print-architecture"});
  ASSERT_EQ(arch.exit_code, 0);
  const std::string deb =
      dir.File(std::string("partalign_") + kVersion + "_" + Lines(arch.out).at(0) + ".deb");
  ASSERT_TRUE(fs::is_regular_file(deb)) << packed.out;

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
        "./usr/share/doc/partalign/changelog.gz"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), file), paths.end()) << file << listing.out;
  }
  // The binary is stripped: no symbol table, no debug information.
  const std::string root = dir.File("root");
  ASSERT_EQ(test::RunCommand({"dpkg-deb", "-x", deb, root}).exit_code, 0);
  CommandResult sections = test::RunCommand({"readelf", "-S", root + "/usr/sbin/partalign"});
  ASSERT_EQ(sections.exit_code, 0) << sections.err;
  EXPECT_EQ(sections.out.find(".symtab"), std::string::npos);
  EXPECT_EQ(sections.out.find(".debug_info"), std::string::npos);

  // lintian: no error (E:) at all; its warnings are listed in the README's install section.
  const std::vector<std::string> lintian{"lintian", "--no-cfg", deb};
  CommandResult lint = test::RunCommand(lintian);
  for (const std::string& line : Lines(lint.out)) {
    EXPECT_NE(line.rfind("E: ", 0), 0u) << line;
  }
  EXPECT_EQ(lint.exit_code, 0) << test::Describe(lintian, lint);

  if (::geteuid() != 0) {
    const std::string why = "package install skipped: dpkg -i needs root";
    if (test::DeviceTestsRequired()) FAIL() << why << " (PARTALIGN_REQUIRE_DEVICE_TESTS=1)";
    GTEST_SKIP() << why;
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
  // bash-completion loads the file on demand from where the package put it.
  CommandResult bash = test::RunCommand(
      {"bash", "-c",
       "source /usr/share/bash-completion/bash_completion && _completion_loader partalign; "
       "complete -p partalign"});
  EXPECT_EQ(bash.exit_code, 0) << bash.out << bash.err;
  EXPECT_NE(bash.out.find(" partalign"), std::string::npos) << bash.out;
  EXPECT_TRUE(fs::is_regular_file("/usr/share/zsh/vendor-completions/_partalign"));

  CommandResult removed = installed.Remove();
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  EXPECT_FALSE(fs::exists("/usr/sbin/partalign"));
  EXPECT_FALSE(fs::exists("/usr/share/man/man8/partalign.8.gz"));
}

}  // namespace
}  // namespace partalign
