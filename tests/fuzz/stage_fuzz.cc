// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the record of a plan staged for the next boot (stage.json, read by
// `partalign at-boot` inside the initramfs from a filesystem anything may have written). Any
// input: no crash, no sanitizer report; an accepted record survives a round trip, and the
// next-boot.conf made from it holds only plain words a shell cannot read as code
// (docs/at-boot.md, tests/fuzz/, scripts/fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "partalign/at_boot/next_boot_stage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<NextBootStage> stage = NextBootStageFromJson(text);
  if (!stage) {
    FUZZ_CHECK(!stage.error().message.empty());
    FUZZ_CHECK(stage.error().message.find('\n') == std::string::npos);
    return 0;
  }
  Result<NextBootStage> again = NextBootStageFromJson(NextBootStageToJson(*stage));
  FUZZ_CHECK(again);
  FUZZ_CHECK(*again == *stage);
  Result<std::string> conf = NextBootConf(stage->journal);
  FUZZ_CHECK(conf);
  size_t from = 0;
  for (size_t nl; (nl = conf->find('\n', from)) != std::string::npos; from = nl + 1) {
    const std::string_view line = std::string_view(*conf).substr(from, nl - from);
    if (line.empty() || line[0] == '#') continue;
    for (char c : line) {
      FUZZ_CHECK((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 c == '_' || c == '=' || c == '-');
    }
  }
  return 0;
}
