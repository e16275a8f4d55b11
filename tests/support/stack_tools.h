// SPDX-License-Identifier: GPL-3.0-or-later
// The real lvm2, cryptsetup and mdadm as fixtures and oracles of the stack tests, run so that
// they work on this machine and never touch anything but the test's own devices: lvm2 with
// activation off (no device-mapper here), no metadata backups in /etc/lvm, and only the given
// devices scanned (--devices); cryptsetup with a fast PBKDF; mdadm from where install-deps.sh
// unpacks it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_command.h"

namespace partalign::test {

/// lvm.conf settings every test run uses.
inline constexpr const char* kLvmTestConfig =
    "global{activation=0} backup{backup=0 archive=0} devices{use_devicesfile=0}";

/// `lvm COMMAND --config ... --devices D1,D2 ARGS...`; `env` is added (the topology shim).
CommandResult RunLvm(const std::string& command, const std::vector<std::string>& args,
                     const std::vector<std::string>& devices,
                     const std::map<std::string, std::string>& env = {});

/// RunLvm that throws (failing the test) unless it exits 0.
void RunLvmOrThrow(const std::string& command, const std::vector<std::string>& args,
                   const std::vector<std::string>& devices,
                   const std::map<std::string, std::string>& env = {});

/// The rows of `pvs`/`lvs` --reportformat json --units b with `fields` ("pv"/"lv"/"seg"
/// arrays of the first report).
nlohmann::json LvmReport(const std::string& command, const std::string& fields,
                         const std::vector<std::string>& devices, bool segments = false);

/// "123456B" -> 123456.
uint64_t LvmBytes(const nlohmann::json& value);

/// A VG name no other test (or engineer) uses at the same time.
std::string UniqueVgName(const std::string& tag);

/// `cryptsetup luksFormat --batch-mode` with a fast PBKDF and a fixed passphrase on stdin.
CommandResult LuksFormat(const std::string& target, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {});

/// The payload offset `cryptsetup luksDump TARGET` prints, in bytes (LUKS1 "Payload offset:"
/// in sectors, LUKS2 the first data segment's "offset: N [bytes]"); throws when absent.
uint64_t LuksDumpDataOffset(const std::string& target);

/// mdadm (unpacked by scripts/install-deps.sh), or "mdadm" from PATH.
std::string MdadmPath();

/// Writes `bytes` at `offset` of the file or device `path`.
void WriteBytesAt(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes);

/// Copies `length` bytes from `from` at `from_offset` to `to` at `to_offset` (sparse-safe).
void CopyBytes(const std::string& from, uint64_t from_offset, const std::string& to,
               uint64_t to_offset, uint64_t length);

}  // namespace partalign::test
