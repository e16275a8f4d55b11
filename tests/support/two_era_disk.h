// SPDX-License-Identifier: GPL-3.0-or-later
// The disk of the audit/plan acceptance tests: a 4 GiB GPT (FirstUsableLBA 34) with the
// classic 63-sector first partition (ext4) and partitions parted placed on multiples of 65535
// sectors behind a JMicron bridge: 65535 (vfat), 589815 (ext4), 2686935 (empty, to the end of
// the last 65535 multiple). Real filesystems, made by mkfs at each partition's offset.
#pragma once

#include <string>

namespace partalign::test {

inline constexpr unsigned long long kTwoEraDiskBytes = 4ull << 30;
inline constexpr unsigned long long kTwoEraStarts[] = {63, 65535, 589815, 2686935};
inline constexpr unsigned long long kTwoEraSizes[] = {65472, 524280, 2097120, 5701545};

/// Creates the image at `path` (throws on failure, which fails the test).
void MakeTwoEraDisk(const std::string& path);

}  // namespace partalign::test
