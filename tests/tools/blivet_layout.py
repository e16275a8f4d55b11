#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The installer sweep's oracle for Anaconda: asks blivet itself (PyPI blivet 3.7.1 on Debian's
# libblockdev 2.28 and pyparted) where custom partitioning puts a layout on a fresh label of a
# block device: one new partition request per size (the rest: 1 MiB that grows), then
# blivet.partitioning.do_partitioning(), exactly what Anaconda's custom spoke and blivet-gui
# call. Nothing is written to the device (no action is executed); libparted reads the device's
# topology through libblkid, so the topology simulator (LD_PRELOAD) decides what blivet sees.
# There is no udev here: blivet's udev.settle() (which runs udevadm) is replaced by a no-op, and
# the disk is put into blivet's device tree by hand instead of by a udev scan.
#
# Usage: blivet_layout.py DEVICE gpt|msdos SIZE[,SIZE...]   (SIZE in bytes, or "rest")
# Output: {"partitions": [{"number", "start", "end"}], "error": null|"..."}
import json
import os
import sys

import blivet
import blivet.udev

blivet.udev.settle = lambda *args, **kwargs: None

from blivet.devices import DiskDevice  # noqa: E402
from blivet.errors import StorageError  # noqa: E402
from blivet.formats import get_format  # noqa: E402
from blivet.partitioning import do_partitioning  # noqa: E402
from blivet.size import Size  # noqa: E402


def main():
    path, label, sizes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    name = os.path.basename(path)
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
    storage = blivet.Blivet()
    disk = DiskDevice(name, size=Size(size), exists=True, sysfs_path="/sys/class/block/" + name)
    disk.format = get_format("disklabel", device=disk.path, label_type=label, exists=False)
    if not disk.format.supported:
        print(json.dumps({"partitions": [], "error": "blivet cannot set up the disklabel"}))
        return 1
    storage.devicetree._add_device(disk)
    requests = []
    for s in sizes:
        if s == "rest":
            part = storage.new_partition(size=Size("1 MiB"), grow=True, parents=[disk])
        else:
            part = storage.new_partition(size=Size(int(s)), parents=[disk])
        storage.create_device(part)
        requests.append(part)
    out = {"partitions": [], "error": None}
    try:
        do_partitioning(storage)
    except (StorageError, ArithmeticError) as e:
        out["error"] = str(e)
    else:
        for part in requests:
            geometry = part.parted_partition.geometry
            out["partitions"].append({"number": part.parted_partition.number,
                                      "start": geometry.start, "end": geometry.end})
        out["partitions"].sort(key=lambda p: p["start"])
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
