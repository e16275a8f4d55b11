// SPDX-License-Identifier: GPL-3.0-or-later
// A scratch directory removed with everything in it when the test ends, even on failure.
// Its name carries the owning PID (partalign-test.<pid>.XXXXXX) so that
// scripts/cleanup-test-loops.sh can tell leftovers of a killed run from a live run's files.
#pragma once

#include <string>
#include <vector>

namespace partalign::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Creates a sparse file of `size` bytes.
void CreateSparseFile(const std::string& path, unsigned long long size);

/// Writes `content` to `path`, replacing the file.
void WriteFile(const std::string& path, const std::string& content);

/// Reads a whole file (binary).
std::string ReadFile(const std::string& path);

/// The paths of the files in `dir` whose names end with `suffix` (".partalign-backup"); none
/// when `dir` does not exist.
std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix);

}  // namespace partalign::test
