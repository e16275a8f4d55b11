// partalign demo: builds a disk image that reproduces the USB-bridge scenario and runs the
// pipeline on it, printing each command line before its output so that a person can type the
// same commands on a real disk. Writes only inside its own directory.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "io/fdisk_write.h"
#include "io/unique_fd.h"
#include "partalign/units.h"

namespace partalign {
namespace {

// Large enough for a realistic layout, small enough to be a sparse file anywhere.
constexpr uint64_t kDemoImageBytes = 4 * kGiB;

struct DemoCommand {
  std::string dir;
  bool keep = false;
};

Status CreateSparseImage(const std::string& path, uint64_t size) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot create '{}'", path));
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    return ErrnoError(errno, fmt::format("cannot size '{}'", path));
  }
  return {};
}

// The disk as it looks after two eras: a partition at sector 63 (the DOS-era fdisk default)
// and partitions that parted placed on multiples of 65535 sectors behind the JMicron bridge
// (its optimal I/O size 33553920 = 65535 sectors taken as the grain), FirstUsableLBA 34 as
// parted writes it. Partitions 1 and 3 hold data (a recognisable payload; the demo runs no
// mkfs), 2 and 4 are empty.
constexpr std::string_view kDemoLayout =
    "label: gpt\n"
    "first-lba: 34\n"
    "start=63, size=65472, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=\"legacy\"\n"
    "start=65535, size=524280, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=\"esp\"\n"
    "start=589815, size=2097120, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=\"root\"\n"
    "start=2686935, size=5701545, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=\"home\"\n";
constexpr uint64_t kDemoPayloadBytes = 256 * kKiB;

Status WriteDemoLayout(const std::string& image) {
  Result<std::vector<std::string>> written = WriteSfdiskScript(image, kDemoLayout);
  if (!written) return written.error();
  UniqueFd fd(::open(image.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", image));
  for (uint64_t start_sector : {uint64_t{63}, uint64_t{589815}}) {
    std::string payload;
    while (payload.size() < kDemoPayloadBytes) {
      payload += fmt::format("partalign demo data of the partition at sector {}\n", start_sector);
    }
    payload.resize(kDemoPayloadBytes);
    const off_t at = static_cast<off_t>(start_sector * 512);
    if (::pwrite(fd.get(), payload.data(), payload.size(), at) !=
        static_cast<ssize_t>(payload.size())) {
      return ErrnoError(errno, fmt::format("cannot write the demo data into '{}'", image));
    }
  }
  return {};
}

// Runs one partalign command in-process, echoing it like a shell transcript.
int Step(Streams io, const std::vector<std::string>& args) {
  std::vector<const char*> argv{"partalign"};
  std::string line = "$ partalign";
  for (const std::string& a : args) {
    argv.push_back(a.c_str());
    line += " " + a;
  }
  io.out << '\n' << line << '\n';
  return RunApp(static_cast<int>(argv.size()), argv.data(), io.out, io.err);
}

ExitCode RunDemo(const DemoCommand& command, Streams io) {
  std::string dir = command.dir;
  bool made_dir = false;
  if (dir.empty()) {
    std::string templ = (std::filesystem::temp_directory_path() / "partalign-demo.XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) {
      PrintError(io.err, ErrnoError(errno, "cannot create a demo directory").message);
      return ExitCode::kFailure;
    }
    dir = templ;
    made_dir = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      PrintError(io.err, fmt::format("cannot create '{}': {}", dir, ec.message()));
      return ExitCode::kFailure;
    }
  }
  const std::string image = dir + "/demo.img";
  io.out << fmt::format(
      "partalign demo: a {} disk image behind a JMicron-style USB bridge that reports an optimal "
      "I/O size of 33553920 bytes (0xFFFF x 512).\nIts GPT has a partition at sector 63 (the "
      "DOS-era fdisk default) and partitions parted put on multiples of 65535 sectors behind "
      "the bridge.\nImage: {}\n",
      FormatSize(kDemoImageBytes), image);
  if (Status s = CreateSparseImage(image, kDemoImageBytes); !s) {
    PrintError(io.err, s.error().message);
    return ExitCode::kFailure;
  }
  if (Status s = WriteDemoLayout(image); !s) {
    PrintError(io.err, s.error().message);
    return ExitCode::kFailure;
  }

  const std::string bridge = "usb-jmicron-0xffff";
  int rc = Step(io, {"probe", "--assume", bridge, image});
  if (rc == 0) rc = Step(io, {"explain", "--assume", bridge, image});
  // audit exits 2 when it finds misaligned partitions, which this disk has by design.
  if (rc == 0 && Step(io, {"audit", "--assume", bridge, image}) == 1) rc = 1;
  if (rc == 0) rc = Step(io, {"plan", "--assume", bridge, "-o", dir + "/plan.json", image});

  // Last: a short read-only benchmark of the image; the heatmap and report go next to it.
  if (rc == 0) rc = Step(io, {"bench", "--budget", "2", "--report", dir, image});

  if (!command.keep && made_dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } else {
    io.out << fmt::format("\nThe demo files are kept in {}\n", dir);
  }
  return rc == 0 ? ExitCode::kOk : ExitCode::kFailure;
}

}  // namespace

void AddDemoCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<DemoCommand>();
  CLI::App* sub = app.add_subcommand(
      "demo", "build a demo disk image with the USB-bridge problem and run the pipeline on it");
  sub->add_option("--dir", command->dir, "directory for the demo files (default: a new temp dir)");
  sub->add_flag("--keep", command->keep, "keep the demo files");
  runners[sub] = [command](Streams io) { return RunDemo(*command, io); };
}

}  // namespace partalign
