// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/hibernation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "partalign/used/swap_signature.h"

namespace partalign {
namespace {

std::vector<uint8_t> Bytes(const std::string& s) { return {s.begin(), s.end()}; }

TEST(HibernationTest, AnActiveHiberfilStartsWithItsSignature) {
  for (const char* magic : {"HIBR", "hibr", "wake", "RSTR"}) {
    std::vector<uint8_t> head = Bytes(std::string(magic) + std::string(4092, '\0'));
    EXPECT_EQ(ActiveHiberfilSignature(head), std::string(magic));
  }
  // Windows zeroes the signature once it has resumed; anything else is not a sleeping Windows.
  EXPECT_FALSE(ActiveHiberfilSignature(std::vector<uint8_t>(4096, 0)));
  EXPECT_FALSE(ActiveHiberfilSignature(Bytes("HIB")));
  EXPECT_FALSE(ActiveHiberfilSignature({}));
  EXPECT_FALSE(ActiveHiberfilSignature(Bytes("HiBr....")));
  EXPECT_FALSE(ActiveHiberfilSignature(Bytes("\0HIBR")));
}

TEST(HibernationTest, FstabSwapFilesAreAbsolutePathsOutsideDev) {
  const std::string fstab =
      "# /etc/fstab\n"
      "UUID=1234 / ext4 errors=remount-ro 0 1\n"
      "/dev/sda2 none swap sw 0 0\n"
      "UUID=abcd none swap sw 0 0\n"
      "/data/my.swap\tnone\tswap\tsw,pri=1 0 0\n"
      "  /swapfile none swap defaults 0 0\n"
      "/swapfile none swap defaults 0 0\n"
      "#/commented none swap sw 0 0\n"
      "/home /home ext4 defaults 0 2\n"
      "/short swap\n"
      "/ none swap sw 0 0";
  EXPECT_EQ(SwapFilesOfFstab(fstab), (std::vector<std::string>{"/data/my.swap", "/swapfile"}));
  EXPECT_EQ(SwapFilesOfFstab(fstab, 1), (std::vector<std::string>{"/data/my.swap"}));
  EXPECT_TRUE(SwapFilesOfFstab("").empty());
}

TEST(HibernationTest, OneLineSaysWhatWasFoundAndWhatToDo) {
  const SleepingPartition linux_swap{2, 1048576, SleepingOs::kLinux,
                                     "a hibernation image (S1SUSPEND) in its swap area"};
  const SleepingPartition windows{3, 2097152, SleepingOs::kWindows,
                                  "its hiberfil.sys starts with HIBR"};
  const std::string one = SleepingRefusal("/dev/sdb", {linux_swap});
  EXPECT_EQ(one.find('\n'), std::string::npos);
  EXPECT_NE(one.find("partition 2: a hibernation image (S1SUSPEND) in its swap area"),
            std::string::npos)
      << one;
  EXPECT_NE(one.find("resume the hibernated system and shut it down fully"), std::string::npos);
  EXPECT_EQ(one.find("Fast Startup"), std::string::npos);
  EXPECT_NE(one.find("nothing was written"), std::string::npos);

  const std::string both = SleepingRefusal("/dev/sdb", {linux_swap, windows});
  EXPECT_EQ(both.find('\n'), std::string::npos);
  EXPECT_NE(both.find("partition 3: its hiberfil.sys starts with HIBR"), std::string::npos);
  EXPECT_NE(both.find("resume the hibernated system and shut it down fully"), std::string::npos);
  EXPECT_NE(both.find("for Windows, turn Fast Startup off or shut down while holding Shift"),
            std::string::npos);

  const std::string line = SleepingLine(windows);
  EXPECT_NE(line.find("partition 3 holds a hibernated Windows"), std::string::npos) << line;
  EXPECT_NE(line.find("apply, move and translate refuse"), std::string::npos);
  EXPECT_NE(SleepingLine({0, 4096, SleepingOs::kLinux, "x"}).find("the range at byte 4096"),
            std::string::npos);
  EXPECT_EQ(ToString(SleepingOs::kWindows), "windows");
  EXPECT_EQ(ToString(SleepingOs::kLinux), "linux");
}

TEST(HibernationTest, OnlyAHeadWithAnExtNtfsOrSwapSignatureIsWorthAskingLibblkid) {
  const std::vector<uint8_t> zeros(kSwapSignatureHeadBytes, 0);
  EXPECT_FALSE(HeadMayHoldSleepingSystem(zeros));
  EXPECT_FALSE(HeadMayHoldSleepingSystem({}));
  std::vector<uint8_t> data = zeros;
  const std::string text = "partalign bench data 4\n";
  std::copy(text.begin(), text.end(), data.begin());
  EXPECT_FALSE(HeadMayHoldSleepingSystem(data));
  std::vector<uint8_t> ext = zeros;
  ext[1080] = 0x53;
  ext[1081] = 0xEF;
  EXPECT_TRUE(HeadMayHoldSleepingSystem(ext));
  ext.resize(1081);  // too short to hold the magic
  EXPECT_FALSE(HeadMayHoldSleepingSystem(ext));
  std::vector<uint8_t> ntfs = zeros;
  const std::string oem = "\xeb\x52\x90NTFS    ";
  std::copy(oem.begin(), oem.end(), ntfs.begin());
  EXPECT_TRUE(HeadMayHoldSleepingSystem(ntfs));
  // Swap and every hibernation signature, at every page size (ReadSwapSignature's).
  for (uint64_t page : kSwapPageSizes) {
    for (const std::string magic : {"SWAPSPACE2", "S1SUSPEND\0", "LINHIB0001"}) {
      std::vector<uint8_t> swap = zeros;
      std::copy(magic.begin(), magic.end(), swap.begin() + static_cast<long>(page - 10));
      EXPECT_TRUE(HeadMayHoldSleepingSystem(swap)) << magic << " at page " << page;
    }
  }
}
}  // namespace
}  // namespace partalign
