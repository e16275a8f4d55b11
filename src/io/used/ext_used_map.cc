// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/used/ext_used_map.h"

#include <ext2fs/ext2fs.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

namespace partalign {
namespace {

struct FsCloser {
  void operator()(ext2_filsys fs) const noexcept { ext2fs_close_free(&fs); }
};
using Ext2Fs = std::unique_ptr<struct struct_ext2_filsys, FsCloser>;

std::string Message(errcode_t code) {
  // com_err's table for libext2fs codes; registering it is idempotent but not thread-safe.
  static std::once_flag once;
  std::call_once(once, [] { initialize_ext2_error_table(); });
  return error_message(code);
}

// Adds the blocks [block, block + count) of the filesystem.
struct Mapper {
  UsedMap& map;
  uint64_t block_bytes;
  uint64_t fs_blocks;
  void AddBlocks(uint64_t block, uint64_t count, UsedReason reason) const {
    if (block >= fs_blocks) return;
    map.Add(block * block_bytes, std::min(count, fs_blocks - block) * block_bytes, reason);
  }
};

struct JournalWalk {
  const Mapper* mapper;
  uint64_t visited = 0;
};

int AddJournalBlock(ext2_filsys, blk64_t* block, e2_blkcnt_t, blk64_t, int, void* data) {
  auto* walk = static_cast<JournalWalk*>(data);
  // A corrupt extent tree could loop: never visit more blocks than the filesystem has.
  if (++walk->visited > walk->mapper->fs_blocks) return BLOCK_ABORT;
  walk->mapper->AddBlocks(*block, 1, UsedReason::kJournal);
  return 0;
}

}  // namespace

UsedMap ReadExtUsedMap(const std::string& path, uint64_t offset_bytes, uint64_t length_bytes) {
  const std::string options = fmt::format("offset={}", offset_bytes);
  ext2_filsys raw = nullptr;
  // Read-only, never exclusive (apply holds the disk with O_EXCL itself), bitmaps checked
  // against their checksums (a mismatch is an error, and the partition is copied whole).
  const errcode_t opened =
      ext2fs_open2(path.c_str(), options.c_str(), EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &raw);
  Ext2Fs fs(raw);
  if (opened != 0)
    return UsedMap::WholeBecause(length_bytes, "ext",
                                 "libext2fs cannot open it (" + Message(opened) + ")");
  ext2_super_block* sb = fs->super;
  if (ext2fs_has_feature_journal_needs_recovery(sb)) {
    return UsedMap::WholeBecause(length_bytes, "ext",
                                 "the journal needs recovery (mount it once, or run e2fsck)");
  }
  if ((sb->s_state & EXT2_VALID_FS) == 0 || (sb->s_state & EXT2_ERROR_FS) != 0) {
    return UsedMap::WholeBecause(length_bytes, "ext",
                                 "it was not cleanly unmounted or has errors (run e2fsck)");
  }
  if (ext2fs_has_feature_journal_dev(sb)) {
    return UsedMap::WholeBecause(length_bytes, "ext", "it is an external journal device");
  }
  const uint64_t block_bytes = fs->blocksize;
  const uint64_t fs_blocks = ext2fs_blocks_count(sb);
  if (block_bytes == 0 || fs_blocks > length_bytes / block_bytes) {
    return UsedMap::WholeBecause(length_bytes, "ext",
                                 fmt::format("it claims {} blocks of {} bytes, more than the "
                                             "partition's {} bytes",
                                             fs_blocks, block_bytes, length_bytes));
  }
  // What e2fsck checks first: every group's bitmaps and inode table inside the filesystem, in
  // its group (flex_bg: anywhere), not on another's. ext2fs_open2 does not; a descriptor that
  // names another place would make the bitmaps of an uninitialised group up from it, and leave
  // the group's real inode table (which e2fsck finds again from the backup descriptors) out.
  if (const errcode_t checked = ext2fs_check_desc(fs.get()); checked != 0) {
    return UsedMap::WholeBecause(
        length_bytes, "ext",
        "its group descriptors are corrupt (" + Message(checked) + "; run e2fsck)");
  }
  if (const errcode_t read = ext2fs_read_block_bitmap(fs.get()); read != 0) {
    return UsedMap::WholeBecause(length_bytes, "ext",
                                 "its block bitmaps cannot be read (" + Message(read) + ")");
  }

  UsedMap map(length_bytes);
  map.source = "ext: libext2fs block bitmaps";
  const Mapper mapper{map, block_bytes, fs_blocks};
  map.Add(0, kUsedHeadBytes, UsedReason::kHead);
  map.Add(fs_blocks * block_bytes, length_bytes - fs_blocks * block_bytes,
          UsedReason::kBeyondFilesystem);

  // Allocated blocks: runs of set bits.
  const blk64_t last = fs_blocks - 1;
  blk64_t at = sb->s_first_data_block;
  while (at <= last) {
    blk64_t set = 0;
    if (ext2fs_find_first_set_block_bitmap2(fs->block_map, at, last, &set) != 0) break;
    blk64_t clear = 0;
    const blk64_t end = ext2fs_find_first_zero_block_bitmap2(fs->block_map, set, last, &clear) == 0
                            ? clear
                            : last + 1;
    mapper.AddBlocks(set, end - set, UsedReason::kAllocated);
    at = end;
  }

  // Every group's metadata, whatever the bitmaps say (for BLOCK_UNINIT groups libext2fs made
  // their bitmap up; the reasons say which blocks these are).
  for (dgrp_t group = 0; group < fs->group_desc_count; ++group) {
    blk64_t super = 0;
    blk64_t old_desc = 0;
    blk64_t new_desc = 0;
    blk_t used = 0;
    if (ext2fs_super_and_bgd_loc2(fs.get(), group, &super, &old_desc, &new_desc, &used) == 0) {
      const bool has_super = ext2fs_bg_has_super(fs.get(), group) != 0;
      if (has_super) mapper.AddBlocks(super, 1, UsedReason::kSuperblock);
      // The old-style descriptors and the reserved GDT blocks follow the superblock.
      if (old_desc != 0 && used > (has_super ? 1u : 0u)) {
        mapper.AddBlocks(old_desc, used - (has_super ? 1 : 0), UsedReason::kSuperblock);
      }
      if (new_desc != 0) mapper.AddBlocks(new_desc, 1, UsedReason::kSuperblock);
    }
    const UsedReason reason = ext2fs_bg_flags_test(fs.get(), group, EXT2_BG_BLOCK_UNINIT)
                                  ? UsedReason::kUninitGroup
                                  : UsedReason::kAllocated;
    mapper.AddBlocks(ext2fs_block_bitmap_loc(fs.get(), group), 1, reason);
    mapper.AddBlocks(ext2fs_inode_bitmap_loc(fs.get(), group), 1, reason);
    mapper.AddBlocks(ext2fs_inode_table_loc(fs.get(), group), fs->inode_blocks_per_group, reason);
  }

  // The internal journal: allocated anyway, but named.
  if (ext2fs_has_feature_journal(sb) && sb->s_journal_inum != 0) {
    JournalWalk walk{&mapper};
    const errcode_t walked = ext2fs_block_iterate3(
        fs.get(), sb->s_journal_inum, BLOCK_FLAG_READ_ONLY, nullptr, AddJournalBlock, &walk);
    if (walked != 0) {
      return UsedMap::WholeBecause(
          length_bytes, "ext", "its journal's blocks cannot be listed (" + Message(walked) + ")");
    }
  }
  return map;
}

Result<std::vector<std::optional<std::vector<uint8_t>>>> ReadExtFileHeads(
    const std::string& path, uint64_t offset_bytes, uint64_t length_bytes,
    const std::vector<std::string>& files, uint64_t head_bytes) {
  const std::string options = fmt::format("offset={}", offset_bytes);
  ext2_filsys raw = nullptr;
  const errcode_t opened =
      ext2fs_open2(path.c_str(), options.c_str(), EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &raw);
  Ext2Fs fs(raw);
  if (opened != 0) {
    return MakeError(fmt::format("libext2fs cannot open the filesystem at byte {} of '{}' ({})",
                                 offset_bytes, path, Message(opened)));
  }
  if (fs->blocksize == 0 || ext2fs_blocks_count(fs->super) > length_bytes / fs->blocksize) {
    return MakeError(fmt::format("the filesystem at byte {} of '{}' is larger than its partition",
                                 offset_bytes, path));
  }
  std::vector<std::optional<std::vector<uint8_t>>> heads;
  for (const std::string& name : files) {
    heads.emplace_back();
    ext2_ino_t ino = 0;
    if (ext2fs_namei(fs.get(), EXT2_ROOT_INO, EXT2_ROOT_INO, name.c_str(), &ino) != 0) continue;
    ext2_inode inode{};
    if (ext2fs_read_inode(fs.get(), ino, &inode) != 0 || !LINUX_S_ISREG(inode.i_mode)) continue;
    ext2_file_t file = nullptr;
    if (ext2fs_file_open(fs.get(), ino, 0, &file) != 0) continue;
    std::vector<uint8_t> head(std::min<uint64_t>(head_bytes, EXT2_I_SIZE(&inode)));
    unsigned int got = 0;
    const errcode_t read =
        head.empty()
            ? 0
            : ext2fs_file_read(file, head.data(), static_cast<unsigned int>(head.size()), &got);
    ext2fs_file_close(file);
    if (read != 0) {
      return MakeError(
          fmt::format("libext2fs cannot read '{}' in the filesystem at byte {} of "
                      "'{}' ({})",
                      name, offset_bytes, path, Message(read)));
    }
    head.resize(got);
    heads.back() = std::move(head);
  }
  return heads;
}

}  // namespace partalign
