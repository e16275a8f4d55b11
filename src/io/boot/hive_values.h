// SPDX-License-Identifier: GPL-3.0-or-later
// The registry values that name partitions, read through libhivex from a hive's bytes: the
// device elements of a BCD store (Objects\{id}\Elements\<type>\Element) and the values of a
// SYSTEM hive's MountedDevices key, each with where its data sits in the hive file (checked
// against the file's bytes).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "partalign/boot/windows_store.h"
#include "partalign/util/result.h"

namespace partalign {

/// Every device element of the BCD hive `hive` (element types whose format is "device").
Result<std::vector<HiveValue>> ReadBcdDeviceElements(std::span<const uint8_t> hive);

/// Every value of the SYSTEM hive's MountedDevices key (none when the key is missing).
Result<std::vector<HiveValue>> ReadMountedDevices(std::span<const uint8_t> hive);

}  // namespace partalign
