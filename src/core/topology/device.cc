// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/device.h"

namespace partalign {

std::string_view ToString(Transport transport) {
  switch (transport) {
    case Transport::kUnknown:
      return "unknown";
    case Transport::kFile:
      return "file";
    case Transport::kLoop:
      return "loop";
    case Transport::kUsb:
      return "usb";
    case Transport::kSata:
      return "sata";
    case Transport::kScsi:
      return "scsi";
    case Transport::kNvme:
      return "nvme";
    case Transport::kVirtio:
      return "virtio";
    case Transport::kMmc:
      return "mmc";
  }
  return "unknown";
}

std::string_view ToString(LabelType label) {
  switch (label) {
    case LabelType::kNone:
      return "none";
    case LabelType::kDos:
      return "dos";
    case LabelType::kGpt:
      return "gpt";
    case LabelType::kOther:
      return "other";
  }
  return "other";
}

std::optional<LabelType> LabelTypeFromString(std::string_view text) {
  for (LabelType l : {LabelType::kNone, LabelType::kDos, LabelType::kGpt, LabelType::kOther}) {
    if (ToString(l) == text) return l;
  }
  return std::nullopt;
}

}  // namespace partalign
