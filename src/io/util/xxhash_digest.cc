// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/xxhash_digest.h"

#include <xxhash.h>

#include <fmt/format.h>

namespace partalign {

struct Xxh64Digest::State {
  XXH64_state_t* state = XXH64_createState();
  ~State() { XXH64_freeState(state); }
};

Xxh64Digest::Xxh64Digest() : state_(std::make_unique<State>()) { XXH64_reset(state_->state, 0); }

Xxh64Digest::~Xxh64Digest() = default;

void Xxh64Digest::Update(const void* data, size_t length) {
  XXH64_update(state_->state, data, length);
}

uint64_t Xxh64Digest::Value() const { return XXH64_digest(state_->state); }

std::string Xxh64Digest::Hex() const { return fmt::format("xxh64:{:016x}", Value()); }

uint64_t Xxh64(const void* data, size_t length) { return XXH64(data, length, 0); }

std::string Xxh64Hex(const void* data, size_t length) {
  return fmt::format("xxh64:{:016x}", Xxh64(data, length));
}

}  // namespace partalign
