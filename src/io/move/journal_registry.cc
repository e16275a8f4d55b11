// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/journal_registry.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "io/move/journal_file.h"
#include "io/util/state_dir.h"
#include "io/util/text_file.h"
#include "io/util/unique_fd.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEntrySuffix = ".journal.json";

std::string EntryPath(const JournalUuid& uuid) {
  return JournalRegistryDir() + "/" + ToHex(uuid) + kEntrySuffix;
}

}  // namespace

std::string JournalRegistryDir() { return StateDir() + "/journals"; }

std::string DefaultJournalDir() { return JournalRegistryDir(); }

Status RegisterJournal(const RegistryEntry& entry) {
  const std::string dir = JournalRegistryDir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ErrnoError(ec.value(), fmt::format("cannot create '{}'", dir));
  const std::string path = EntryPath(entry.uuid);
  const std::string temporary = path + ".tmp";
  const std::string text = EncodeRegistryEntry(entry);
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot create '{}'", temporary));
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::fsync(fd.get()) != 0) {
    int err = errno;
    ::unlink(temporary.c_str());
    return ErrnoError(err, fmt::format("cannot write '{}'", temporary));
  }
  fd.reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temporary.c_str());
    return ErrnoError(err, fmt::format("cannot create '{}'", path));
  }
  return SyncParentDirectory(path);
}

Status UnregisterJournal(const JournalUuid& uuid) {
  const std::string path = EntryPath(uuid);
  // A registration killed between its write and its rename leaves its temporary file (the
  // listing skips it): it goes with the entry, or the registry keeps litter forever.
  const std::string temporary = path + ".tmp";
  if (::unlink(temporary.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, fmt::format("cannot remove '{}'", temporary));
  }
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return {};
    return ErrnoError(errno, fmt::format("cannot remove '{}'", path));
  }
  return SyncParentDirectory(path);
}

Result<std::vector<RegisteredJournal>> ListRegisteredJournals() {
  std::vector<RegisteredJournal> journals;
  const std::string dir = JournalRegistryDir();
  std::error_code ec;
  if (!fs::exists(dir, ec)) return journals;
  for (const fs::directory_entry& file : fs::directory_iterator(dir, ec)) {
    const std::string name = file.path().filename().string();
    if (name.size() <= std::string(kEntrySuffix).size() ||
        name.compare(name.size() - std::string(kEntrySuffix).size(), std::string::npos,
                     kEntrySuffix) != 0) {
      continue;
    }
    Result<std::string> text = ReadWholeFile(file.path().string(), "journal registration");
    if (!text) return text.error();
    Result<RegistryEntry> entry = DecodeRegistryEntry(*text);
    if (!entry) {
      return MakeError(fmt::format("cannot read the journal registration '{}': {}",
                                   file.path().string(), entry.error().message));
    }
    journals.push_back({file.path().string(), std::move(*entry)});
  }
  if (ec) return ErrnoError(ec.value(), fmt::format("cannot list '{}'", dir));
  return journals;
}

Result<std::vector<RegisteredJournal>> FindRegisteredJournals(const JournalDevice& device) {
  Result<std::vector<RegisteredJournal>> all = ListRegisteredJournals();
  if (!all) return all;
  std::vector<RegisteredJournal> matching;
  for (RegisteredJournal& journal : *all) {
    if (!DeviceMismatch(journal.entry.device, device)) matching.push_back(std::move(journal));
  }
  return matching;
}

}  // namespace partalign
