// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/stack_tools.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace partalign::test {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

std::vector<std::string> LvmArgv(const std::string& command, const std::vector<std::string>& args,
                                 const std::vector<std::string>& devices) {
  std::vector<std::string> argv{"lvm",          command,     "--config",
                                kLvmTestConfig, "--devices", Join(devices)};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::map<std::string, std::string> LvmEnv(std::map<std::string, std::string> env) {
  env["LVM_SUPPRESS_FD_WARNINGS"] = "1";
  env["LC_ALL"] = "C";
  return env;
}

}  // namespace

CommandResult RunLvm(const std::string& command, const std::vector<std::string>& args,
                     const std::vector<std::string>& devices,
                     const std::map<std::string, std::string>& env) {
  return RunCommand(LvmArgv(command, args, devices), "", LvmEnv(env));
}

void RunLvmOrThrow(const std::string& command, const std::vector<std::string>& args,
                   const std::vector<std::string>& devices,
                   const std::map<std::string, std::string>& env) {
  CommandResult r = RunLvm(command, args, devices, env);
  if (r.exit_code != 0) throw std::runtime_error(Describe(LvmArgv(command, args, devices), r));
}

nlohmann::json LvmReport(const std::string& command, const std::string& fields,
                         const std::vector<std::string>& devices, bool segments) {
  std::vector<std::string> args{"-o", fields, "--units", "b", "--reportformat", "json"};
  if (segments) args.push_back("--segments");
  CommandResult r = RunLvm(command, args, devices);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  if (r.exit_code != 0 || j.is_discarded()) {
    throw std::runtime_error(Describe(LvmArgv(command, args, devices), r));
  }
  const nlohmann::json& report = j["report"][0];
  return report.begin().value();
}

uint64_t LvmBytes(const nlohmann::json& value) {
  std::string text = value.get<std::string>();
  if (!text.empty() && text.back() == 'B') text.pop_back();
  return std::stoull(text);
}

std::string UniqueVgName(const std::string& tag) {
  static std::atomic<int> counter{0};
  return "pa" + std::to_string(::getpid()) + tag + std::to_string(counter++);
}

CommandResult LuksFormat(const std::string& target, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{
      "cryptsetup", "luksFormat", "--batch-mode", "--key-file",
      "-",          "--pbkdf",    "pbkdf2",       "--pbkdf-force-iterations",
      "1000"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(target);
  std::map<std::string, std::string> e = env;
  e["LC_ALL"] = "C";
  return RunCommand(argv, "partalign-test-passphrase", e);
}

uint64_t LuksDumpDataOffset(const std::string& target) {
  CommandResult r = RunCommand({"cryptsetup", "luksDump", target}, "", {{"LC_ALL", "C"}});
  if (r.exit_code != 0) throw std::runtime_error(Describe({"cryptsetup", "luksDump", target}, r));
  std::istringstream in(r.out);
  bool in_segments = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Payload offset:", 0) == 0) {
      return std::stoull(line.substr(line.find(':') + 1)) * 512;
    }
    if (line.rfind("Data segments:", 0) == 0) in_segments = true;
    const size_t at = line.find("offset:");
    if (in_segments && at != std::string::npos && line.find("[bytes]") != std::string::npos) {
      return std::stoull(line.substr(at + 7));
    }
  }
  throw std::runtime_error("luksDump printed no data offset:\n" + r.out);
}

std::string MdadmPath() {
  const char* unpacked = "/opt/partalign-test-tools/sbin/mdadm";
  return ::access(unpacked, X_OK) == 0 ? unpacked : "mdadm";
}

void WriteBytesAt(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
  ::fsync(fd);
  ::close(fd);
  if (n != static_cast<ssize_t>(bytes.size())) throw std::runtime_error("short write to " + path);
}

void CopyBytes(const std::string& from, uint64_t from_offset, const std::string& to,
               uint64_t to_offset, uint64_t length) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw std::runtime_error("cannot open " + from);
  std::vector<uint8_t> buffer(1 << 20);
  for (uint64_t done = 0; done < length;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), length - done));
    ssize_t got = ::pread(in, buffer.data(), want, static_cast<off_t>(from_offset + done));
    if (got <= 0) {
      ::close(in);
      throw std::runtime_error("short read from " + from);
    }
    buffer.resize(static_cast<size_t>(got));
    WriteBytesAt(to, to_offset + done, buffer);
    buffer.resize(1 << 20);
    done += static_cast<uint64_t>(got);
  }
  ::close(in);
}

}  // namespace partalign::test
