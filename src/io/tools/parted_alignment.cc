// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/tools/parted_alignment.h"

#include <parted/parted.h>

#include <fmt/format.h>

namespace partalign {
namespace {

// libparted reports problems through one process-wide exception handler that takes no user
// data, so the recorder it writes to is a file-level pointer, set only while a query runs.
std::vector<std::string>* g_parted_messages = nullptr;

// Records instead of printing (libparted's default handler writes to stderr and may prompt).
// noexcept: it is called from C frames.
PedExceptionOption RecordPartedException(PedException* ex) noexcept {
  if (g_parted_messages != nullptr && ex != nullptr && ex->message != nullptr) {
    try {
      g_parted_messages->push_back(
          fmt::format("{}: {}", ped_exception_get_type_string(ex->type), ex->message));
    } catch (...) {
      // Out of memory while recording: the message is lost, the query goes on.
    }
  }
  // Never RETRY (that would loop) and never FIX or YES (that could change something): the
  // caller treats "unhandled" as "cancel" for errors and ignores it for warnings.
  return PED_EXCEPTION_UNHANDLED;
}

// Installs the recorder for one query and restores the previous handler; releases libparted's
// device cache at the end (PedDevice is owned by that cache, not by us: style-by-example.md).
class PartedQueryScope {
 public:
  explicit PartedQueryScope(std::vector<std::string>* messages)
      : previous_(ped_exception_get_handler()) {
    g_parted_messages = messages;
    ped_exception_set_handler(RecordPartedException);
  }
  ~PartedQueryScope() {
    ped_device_free_all();
    ped_exception_set_handler(previous_);
    g_parted_messages = nullptr;
  }
  PartedQueryScope(const PartedQueryScope&) = delete;
  PartedQueryScope& operator=(const PartedQueryScope&) = delete;

 private:
  PedExceptionHandler* previous_;
};

std::optional<SectorAlignment> TakeAlignment(PedAlignment* a) {
  if (a == nullptr) return std::nullopt;
  SectorAlignment s{a->offset, a->grain_size};
  ped_alignment_destroy(a);
  return s;
}

}  // namespace

void QueryPartedAlignment(const std::string& path, LiveAlignment* live) {
  if (const char* v = ped_get_version(); v != nullptr) {
    if (Result<ToolVersion> parsed = ParseToolVersion(v)) live->libparted_version = *parsed;
  }
  std::vector<std::string> messages;
  PartedQueryScope scope(&messages);
  PedDevice* dev = ped_device_get(path.c_str());
  if (dev == nullptr) {
    live->parted_error =
        messages.empty() ? fmt::format("libparted cannot open '{}'", path) : messages.back();
    return;
  }
  live->parted_minimum = TakeAlignment(ped_device_get_minimum_alignment(dev));
  live->parted_optimum = TakeAlignment(ped_device_get_optimum_alignment(dev));
  if (!live->parted_minimum || !live->parted_optimum) {
    live->parted_error = "libparted returned no alignment";
  }
}

}  // namespace partalign
