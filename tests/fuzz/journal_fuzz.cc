// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the move journal reader (resume JOURNAL, partalign's own registry). The
// input is a journal file, held in a memfd and read by MoveJournal::Load as resume reads it,
// then its digest table and table updates; and the registry entry format. Any input: no
// crash, no sanitizer report, no allocation beyond the file's own size.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "io/block/block_io.h"
#include "io/move/move_journal.h"
#include "io/util/unique_fd.h"
#include "io/util/xxhash_hasher.h"
#include "partalign/move/journal_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  (void)DecodeRegistryEntry(std::string_view(reinterpret_cast<const char*>(data), size));

  UniqueFd fd(::memfd_create("journal", MFD_CLOEXEC));
  FUZZ_CHECK(fd.valid());
  // The header region is 64 KiB: inputs shorter than that are still journals (too short ones),
  // and the fuzzer's input can fill it in any case.
  FUZZ_CHECK(::write(fd.get(), data, size) == static_cast<ssize_t>(size));
  FdBlockIo io(std::move(fd), "journal", size);
  static const XxHasher hasher;
  Result<MoveJournal> journal = MoveJournal::Load(io, hasher);
  if (!journal) {
    FUZZ_CHECK(!journal.error().message.empty());
    return 0;
  }
  (void)journal->ReadDigests();
  (void)journal->ReadTableUpdates();
  return 0;
}
