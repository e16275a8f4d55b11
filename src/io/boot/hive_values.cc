// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/boot/hive_values.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <hivex.h>

#include "io/util/unique_fd.h"

namespace partalign {
namespace {

using Hive = std::unique_ptr<hive_h, int (*)(hive_h*)>;

// libhivex opens files only: the hive's bytes go to a memfd it opens by its /proc path.
Result<Hive> OpenHive(std::span<const uint8_t> bytes) {
  UniqueFd fd(memfd_create("partalign-hive", MFD_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, "memfd_create for a registry hive");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, "writing a registry hive to a memfd");
    done += static_cast<size_t>(n);
  }
  const std::string path = fmt::format("/proc/self/fd/{}", fd.get());
  hive_h* h = hivex_open(path.c_str(), 0);
  if (h == nullptr) return ErrnoError(errno, "libhivex cannot read the hive");
  return Hive(h, hivex_close);
}

template <typename T>
struct FreeHivex {
  void operator()(T* p) const { std::free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, FreeHivex<T>>;

std::vector<hive_node_h> Children(hive_h* h, hive_node_h node) {
  std::vector<hive_node_h> out;
  Owned<hive_node_h> list(hivex_node_children(h, node));
  for (hive_node_h* c = list.get(); c != nullptr && *c != 0; ++c) out.push_back(*c);
  return out;
}

std::string NodeName(hive_h* h, hive_node_h node) {
  Owned<char> name(hivex_node_name(h, node));
  return name ? std::string(name.get()) : std::string();
}

// The value's data, and where it sits in the file when it has a cell of its own that holds
// exactly these bytes (libhivex gives the cell's offset; the data follows its 4-byte size).
Result<HiveValue> ReadValue(hive_h* h, hive_value_h value, std::span<const uint8_t> file,
                            std::string path) {
  HiveValue out;
  out.path = std::move(path);
  hive_type type{};
  size_t length = 0;
  Owned<char> data(hivex_value_value(h, value, &type, &length));
  if (!data) return ErrnoError(errno, fmt::format("libhivex cannot read '{}'", out.path));
  out.data.assign(data.get(), data.get() + length);
  size_t cell_length = 0;
  const hive_value_h cell = hivex_value_data_cell_offset(h, value, &cell_length);
  if (cell != 0 && cell_length == length + 4 && cell + 4 + length <= file.size() &&
      std::equal(out.data.begin(), out.data.end(),
                 file.begin() + static_cast<ptrdiff_t>(cell + 4))) {
    out.data_file_offset = cell + 4;
  }
  return out;
}

}  // namespace

Result<std::vector<HiveValue>> ReadBcdDeviceElements(std::span<const uint8_t> hive) {
  Result<Hive> h = OpenHive(hive);
  if (!h) return h.error();
  std::vector<HiveValue> out;
  const hive_node_h objects = hivex_node_get_child(h->get(), hivex_root(h->get()), "Objects");
  if (objects == 0) return out;
  for (hive_node_h object : Children(h->get(), objects)) {
    const hive_node_h elements = hivex_node_get_child(h->get(), object, "Elements");
    if (elements == 0) continue;
    for (hive_node_h element : Children(h->get(), elements)) {
      const std::string name = NodeName(h->get(), element);
      uint32_t type = 0;
      auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), type, 16);
      if (ec != std::errc() || end != name.data() + name.size() || !IsBcdDeviceElement(type)) {
        continue;
      }
      const hive_value_h value = hivex_node_get_value(h->get(), element, "Element");
      if (value == 0) continue;
      Result<HiveValue> v = ReadValue(
          h->get(), value, hive,
          fmt::format("Objects\\{}\\Elements\\{}\\Element", NodeName(h->get(), object), name));
      if (!v) return v.error();
      v->element_type = type;
      out.push_back(std::move(*v));
    }
  }
  return out;
}

Result<std::vector<HiveValue>> ReadMountedDevices(std::span<const uint8_t> hive) {
  Result<Hive> h = OpenHive(hive);
  if (!h) return h.error();
  std::vector<HiveValue> out;
  const hive_node_h key = hivex_node_get_child(h->get(), hivex_root(h->get()), "MountedDevices");
  if (key == 0) return out;
  Owned<hive_value_h> values(hivex_node_values(h->get(), key));
  for (hive_value_h* v = values.get(); v != nullptr && *v != 0; ++v) {
    Owned<char> name(hivex_value_key(h->get(), *v));
    Result<HiveValue> value =
        ReadValue(h->get(), *v, hive, fmt::format("MountedDevices\\{}", name ? name.get() : ""));
    if (!value) return value.error();
    out.push_back(std::move(*value));
  }
  return out;
}

}  // namespace partalign
