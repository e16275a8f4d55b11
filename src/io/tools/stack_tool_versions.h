// SPDX-License-Identifier: GPL-3.0-or-later
// The installed lvm2 and cryptsetup (`pvcreate --version`, `cryptsetup --version`), for the
// pvcreate and luksFormat models of explain and the pvcreate comparison of audit. Never fails:
// a missing tool counts as the newest known version.
#pragma once

#include "partalign/tools/stack_tool_version.h"

namespace partalign {

StackToolVersions DetectStackToolVersions();

}  // namespace partalign
