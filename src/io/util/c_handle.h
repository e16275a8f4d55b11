// SPDX-License-Identifier: GPL-3.0-or-later
// unique_ptr aliases for the C libraries' handles, freed by their own free functions
// (systemd's DEFINE_TRIVIAL_CLEANUP_FUNC, in C++). Private to src/io.
#pragma once

#include <memory>
#include <type_traits>

namespace partalign {

template <auto Free>
struct CDeleter {
  template <typename T>
  void operator()(T* p) const noexcept {
    if (p) Free(p);
  }
};

/// `CHandle<blkid_free_probe, blkid_probe>`: owns a handle whose type is a pointer typedef.
template <auto Free, typename Pointer>
using CHandle = std::unique_ptr<std::remove_pointer_t<Pointer>, CDeleter<Free>>;

}  // namespace partalign
