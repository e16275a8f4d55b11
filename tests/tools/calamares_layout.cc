// SPDX-License-Identifier: GPL-3.0-or-later
// The installer sweep's oracle for Calamares: asks the real Calamares partition module (Debian's
// calamares package: PartitionLayout::createPartitions() and KPMHelpers in
// libcalamares_viewmodule_partition.so) and the real KPMcore (libkpmcore: DiskDevice,
// PartitionTable with its default first and last usable sectors, PartitionNode::insert,
// PartitionTable::updateUnallocated, PartitionAlignment) where an erase-disk install with a
// partitionLayout of these sizes puts each partition, and prints the result as JSON. KPMcore's
// sfdisk backend cannot run here (every external command goes through its D-Bus helper, and
// there is no system bus), so nothing is written: the target is only measured (its size and
// logical sector size). The one rule restated here is doAutopartition()'s range (Calamares >=
// 3.3.10, bee48765): from 2 MiB (UEFI, GPT) or 1 MiB (BIOS, msdos) to the last sector minus 66 on
// GPT; the Debian 12 module (3.2.61) has the same createPartitions().
//
// The module is loaded with dlopen() once a QGuiApplication (offscreen) exists: its static
// initialisers measure a font. Its functions are called through their exported symbols.
//
// Usage: partalign_calamares_layout --target PATH --label gpt|msdos --sizes S1,S2,...
//            [--sector-size N]
//   each S is a Calamares size (5MiB, 1536KiB, 100%); --sector-size for an image file (default
//   512; a block device's own is used). Output: {"first_usable", "last_usable",
//   "sector_alignment", "first_sector", "last_sector", "partitions": [{"first", "last",
//   "aligned", "messages"}]}. Exit 0, or 1 with a message on stderr.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <QGuiApplication>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <kpmcore/core/diskdevice.h>
#include <kpmcore/core/partition.h>
#include <kpmcore/core/partitionalignment.h>
#include <kpmcore/core/partitionrole.h>
#include <kpmcore/core/partitiontable.h>
#include <kpmcore/fs/filesystem.h>

#include "partition/PartitionSize.h"
#include "utils/Units.h"

// Calamares 3.2.61's class PartitionLayout (src/modules/partition/core/PartitionLayout.h): the
// module exports its functions but Debian ships no header, so this declaration states the
// members in the order the module was compiled with, so that objects made here have its layout;
// its functions are the module's, called through dlsym().
class PartitionLayout {
 public:
  struct PartitionEntry {
    QString partLabel;
    QString partUUID;
    QString partType;
    quint64 partAttributes = 0;
    QString partMountPoint;
    FileSystem::Type partFileSystem = FileSystem::Unknown;
    QVariantMap partFeatures;
    CalamaresUtils::Partition::PartitionSize partSize;
    CalamaresUtils::Partition::PartitionSize partMinSize;
    CalamaresUtils::Partition::PartitionSize partMaxSize;
  };

  QList<PartitionEntry> m_partLayout;
  FileSystem::Type m_defaultFsType = FileSystem::Type::Unknown;
};

namespace {

// Where Debian's calamares package installs the partition module.
constexpr const char* kModule =
    "/usr/lib/x86_64-linux-gnu/calamares/modules/partition/libcalamares_viewmodule_partition.so";

// The module's functions (Itanium C++ ABI: `this` first, after the address of a returned
// object).
using EntryCtor = void (*)(PartitionLayout::PartitionEntry*, FileSystem::Type, const QString&,
                           const QString&, const QString&, const QString&);
using AddEntry = bool (*)(PartitionLayout*, const PartitionLayout::PartitionEntry&);
using CreatePartitions = QList<Partition*> (*)(PartitionLayout*, Device*, qint64, qint64, QString,
                                               PartitionNode*, const PartitionRole&);

// doAutopartition(): the last sector the layout may use on GPT leaves 66 for the backup GPT.
constexpr qint64 kGptBackSectors = 67;
// DiskDevice takes heads x sectors x cylinders, each a qint32.
constexpr qint64 kMaxFactor = 0x7FFFFFFF;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "partalign_calamares_layout: %s\n", message.c_str());
  std::exit(1);
}

// (heads, sectors per track, cylinders) whose product is `total`.
bool Geometry(qint64 total, qint32* heads, qint32* sectors, qint32* cylinders) {
  for (qint64 s = 1; s <= kMaxFactor && s <= total; ++s) {
    if (total % s != 0) continue;
    const qint64 rest = total / s;
    for (qint64 h = 1; h <= 255 && h <= rest; ++h) {
      if (rest % h == 0 && rest / h <= kMaxFactor) {
        *heads = static_cast<qint32>(h);
        *sectors = static_cast<qint32>(s);
        *cylinders = static_cast<qint32>(rest / h);
        return true;
      }
    }
  }
  return false;
}

}  // namespace

template <typename F>
F Symbol(void* module, const char* name) {
  void* f = dlsym(module, name);
  if (f == nullptr) Fail(std::string("the Calamares module has no ") + name);
  return reinterpret_cast<F>(f);
}

int main(int argc, char** argv) {
  setenv("QT_QPA_PLATFORM", "offscreen", 1);
  int app_argc = 1;
  QGuiApplication app(app_argc, argv);
  void* module = dlopen(kModule, RTLD_NOW | RTLD_GLOBAL);
  if (module == nullptr) Fail(std::string("cannot load the Calamares module: ") + dlerror());
  auto entry_ctor = Symbol<EntryCtor>(
      module, "_ZN15PartitionLayout14PartitionEntryC1EN10FileSystem4TypeERK7QStringS5_S5_S5_");
  auto add_entry = Symbol<AddEntry>(module, "_ZN15PartitionLayout8addEntryERKNS_14PartitionEntryE");
  auto create_partitions = Symbol<CreatePartitions>(
      module,
      "_ZN15PartitionLayout16createPartitionsEP6Devicexx7QStringP13PartitionNodeRK13PartitionRole");
  std::string target, label, sizes;
  qint64 sector_size = 512;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--target") {
      target = value;
    } else if (key == "--label") {
      label = value;
    } else if (key == "--sizes") {
      sizes = value;
    } else if (key == "--sector-size") {
      sector_size = std::atoll(value.c_str());
    } else {
      Fail("unknown option '" + key + "'");
    }
  }
  if (target.empty() || (label != "gpt" && label != "msdos") || sizes.empty()) {
    Fail("usage: --target PATH --label gpt|msdos --sizes S1,S2,... [--sector-size N]");
  }
  const int fd = open(target.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail("cannot open '" + target + "'");
  struct stat st {};
  fstat(fd, &st);
  qint64 bytes = st.st_size;
  if (S_ISBLK(st.st_mode)) {
    uint64_t size = 0;
    int ssz = 0;
    if (ioctl(fd, BLKGETSIZE64, &size) != 0 || ioctl(fd, BLKSSZGET, &ssz) != 0) {
      Fail("cannot read the size of '" + target + "'");
    }
    bytes = static_cast<qint64>(size);
    sector_size = ssz;
  }
  close(fd);
  const qint64 total = bytes / sector_size;
  qint32 heads = 0, track = 0, cylinders = 0;
  if (!Geometry(total, &heads, &track, &cylinders)) Fail("no geometry for the disk's sectors");
  DiskDevice device(QStringLiteral("disk"), QString::fromStdString(target), heads, track, cylinders,
                    sector_size);
  if (device.totalLogical() != total) Fail("the device's sector count is wrong");
  const bool gpt = label == "gpt";
  const PartitionTable::TableType type = gpt ? PartitionTable::gpt : PartitionTable::msdos;
  // What Calamares' CreatePartitionTableJob makes.
  auto* table = new PartitionTable(type, PartitionTable::defaultFirstUsable(device, type),
                                   PartitionTable::defaultLastUsable(device, type));
  device.setPartitionTable(table);
  table->updateUnallocated(device);
  const qint64 first =
      CalamaresUtils::bytesToSectors(gpt ? 2 * 1024 * 1024 : 1024 * 1024, sector_size);
  const qint64 last = total - (gpt ? kGptBackSectors : 1);
  // PartitionLayout() only initialises its members; its destructor only destroys them.
  PartitionLayout layout;
  int n = 0;
  for (const QString& size : QString::fromStdString(sizes).split(QLatin1Char(','))) {
    alignas(
        PartitionLayout::PartitionEntry) unsigned char raw[sizeof(PartitionLayout::PartitionEntry)];
    auto* entry = reinterpret_cast<PartitionLayout::PartitionEntry*>(raw);
    entry_ctor(entry, FileSystem::Ext4, QStringLiteral("/p%1").arg(++n), size, QString(),
               QString());
    const bool added = add_entry(&layout, *entry);
    entry->~PartitionEntry();
    if (!added) Fail("Calamares refuses the size '" + size.toStdString() + "'");
  }
  QList<Partition*> made = create_partitions(&layout, &device, first, last, QString(), table,
                                             PartitionRole(PartitionRole::Primary));
  std::string json =
      "{\"first_usable\": " + std::to_string(table->firstUsable()) +
      ", \"last_usable\": " + std::to_string(table->lastUsable()) +
      ", \"sector_alignment\": " + std::to_string(PartitionAlignment::sectorAlignment(device)) +
      ", \"first_sector\": " + std::to_string(first) +
      ", \"last_sector\": " + std::to_string(last) + ", \"partitions\": [";
  bool comma = false;
  for (Partition* p : made) {
    // What CreatePartitionJob::updatePreview() does with each.
    table->removeUnallocated();
    p->parent()->insert(p);
    table->updateUnallocated(device);
    const qint64 fd_first = PartitionAlignment::firstDelta(device, *p, p->firstSector());
    const qint64 fd_last = PartitionAlignment::lastDelta(device, *p, p->lastSector());
    json += std::string(comma ? ", " : "") + "{\"first\": " + std::to_string(p->firstSector()) +
            ", \"last\": " + std::to_string(p->lastSector()) + ", \"aligned\": " +
            (PartitionAlignment::isAligned(device, *p, /*quiet=*/true) ? "true" : "false") +
            ", \"first_delta\": " + std::to_string(fd_first) +
            ", \"last_delta\": " + std::to_string(fd_last) + "}";
    comma = true;
  }
  json += "]}";
  std::printf("%s\n", json.c_str());
  return 0;
}
