// SPDX-License-Identifier: GPL-3.0-or-later
// The alignment cases recorded by the installers' own test suites (and, where a project records
// none, cases derived from its code with the reasoning), from tests/data/installer-cases/*.json,
// each run against partalign's model of that installer. Every case names its repository, file,
// commit and test.
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "partalign/tools/installers/blivet_model.h"
#include "partalign/tools/installers/curtin_model.h"
#include "partalign/tools/installers/kpmcore_model.h"
#include "partalign/tools/installers/libstorage_model.h"
#include "partalign/tools/parted_model.h"
#include "support/test_topology.h"

namespace partalign {
namespace {

struct InstallerCase {
  std::string file;  ///< "libstorage-ng", ...
  nlohmann::json json;
  std::string source;  ///< "repository path@commit: test"
};

// gtest prints a parameter with PrintTo: the case's source instead of its bytes.
void PrintTo(const InstallerCase& c, std::ostream* os) { *os << c.source; }

// The files and the number of cases each must hold: a case lost from a file fails here.
struct CaseFile {
  const char* name;
  size_t count;
};
constexpr CaseFile kCaseFiles[] = {
    {"libstorage-ng", 52}, {"blivet", 12}, {"kpmcore", 16}, {"curtin", 19}};

std::vector<InstallerCase> LoadCases() {
  std::vector<InstallerCase> out;
  for (const CaseFile& f : kCaseFiles) {
    std::string path =
        std::string(PARTALIGN_SOURCE_DIR) + "/tests/data/installer-cases/" + f.name + ".json";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.contains("cases")) {
      out.push_back({f.name, nlohmann::json{{"name", "unreadable"}, {"kind", "unreadable"}}, path});
      continue;
    }
    for (const nlohmann::json& c : doc["cases"]) {
      std::string repo = c.value("repository", doc.value("repository", ""));
      std::string commit = c.value("commit", doc.value("commit", ""));
      out.push_back({f.name, c,
                     repo + " " + c.value("path", "") + "@" + commit.substr(0, 12) + ": " +
                         c.value("test", "")});
    }
  }
  return out;
}

const std::vector<InstallerCase>& AllCases() {
  static const std::vector<InstallerCase> cases = LoadCases();
  return cases;
}

TEST(InstallerCasesTest, EveryFileHoldsItsCasesWithTheirSources) {
  for (const CaseFile& f : kCaseFiles) {
    size_t n = 0;
    for (const InstallerCase& c : AllCases()) {
      if (c.file != f.name) continue;
      ++n;
      EXPECT_FALSE(c.json.value("path", "").empty()) << c.file << " " << c.json.dump();
      EXPECT_FALSE(c.json.value("test", "").empty()) << c.file << " " << c.json.dump();
      if (c.json.value("derived", false)) {
        EXPECT_FALSE(c.json.value("reasoning", "").empty()) << c.json.dump();
      }
    }
    EXPECT_EQ(n, f.count) << f.name;
  }
}

Result<ToolVersion> Version(const nlohmann::json& c, const char* key, const char* fallback) {
  return ParseToolVersion(c.value(key, std::string(fallback)));
}

// ---- libstorage-ng -------------------------------------------------------------------------

LibstorageAlignment LibstorageAlignmentOf(const nlohmann::json& c) {
  LibstorageAlignment a;
  a.topology.alignment_offset = c.value("alignment_offset", int64_t{0});
  a.topology.optimal_io_size = c.value("optimal_io_size", uint64_t{0});
  a.topology.minimal_grain = c.value("minimal_grain", uint64_t{1024 * 1024});
  a.type = c.value("align_type", "optimal") == "required" ? LibstorageAlignType::kRequired
                                                          : LibstorageAlignType::kOptimal;
  return a;
}

LibstorageAlignPolicy PolicyOf(const std::string& name) {
  if (name == "align_start_and_end") return LibstorageAlignPolicy::kAlignStartAndEnd;
  if (name == "align_start_keep_size") return LibstorageAlignPolicy::kAlignStartKeepSize;
  if (name == "keep_start_align_end") return LibstorageAlignPolicy::kKeepStartAlignEnd;
  return LibstorageAlignPolicy::kAlignStartKeepEnd;
}

void RunLibstorage(const nlohmann::json& c) {
  const std::string kind = c["kind"];
  const LibstorageAlignment a = LibstorageAlignmentOf(c);
  if (kind == "grain") {
    EXPECT_EQ(LibstorageGrain(a), c["expect_grain_bytes"].get<uint64_t>());
  } else if (kind == "align_block") {
    uint64_t block = c["block"];
    bool ok = LibstorageAlignBlock(a, &block, c.value("block_size", uint64_t{512}),
                                   c["location"] == "end");
    ASSERT_EQ(ok, c["expect_ok"].get<bool>());
    if (ok) {
      EXPECT_EQ(block, c["expect_block"].get<uint64_t>());
    }
  } else if (kind == "align_region") {
    LibstorageRegion r{c["region"][0], c["region"][1], c.value("block_size", uint64_t{512})};
    std::optional<LibstorageRegion> got = LibstorageAlignRegion(a, r, PolicyOf(c["policy"]));
    ASSERT_EQ(got.has_value(), c["expect_ok"].get<bool>());
    if (got) {
      EXPECT_EQ(got->start, c["expect_region"][0].get<uint64_t>());
      EXPECT_EQ(got->length, c["expect_region"][1].get<uint64_t>());
    }
  } else if (kind == "slots") {
    LibstorageTable t;
    t.label = c["label"] == "gpt" ? LabelType::kGpt : LabelType::kDos;
    t.disk_blocks = c["disk_blocks"];
    t.block_size = c["block_size"];
    t.minimal_mbr_gap_bytes = c.value("minimal_mbr_gap", uint64_t{1024 * 1024});
    for (const nlohmann::json& p : c["partitions"]) {
      std::string type = p[1];
      t.partitions.push_back({p[0].get<uint32_t>(),
                              type == "extended"  ? LibstoragePartitionType::kExtended
                              : type == "logical" ? LibstoragePartitionType::kLogical
                                                  : LibstoragePartitionType::kPrimary,
                              p[2].get<uint64_t>(), p[3].get<uint64_t>()});
    }
    std::vector<LibstorageSlot> slots = LibstorageUnusedSlots(t, a);
    const nlohmann::json& want = c["expect_slots"];
    const size_t from = c.value("expect_slots_from", size_t{0});
    ASSERT_EQ(slots.size(), c.value("expect_slot_count", want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      const LibstorageSlot& s = slots[from + i];
      const nlohmann::json& w = want[i];
      SCOPED_TRACE("slot " + std::to_string(from + i));
      EXPECT_EQ(s.region.start, w["start"].get<uint64_t>());
      EXPECT_EQ(s.region.length, w["length"].get<uint64_t>());
      EXPECT_EQ(s.number, w["number"].get<uint32_t>());
      EXPECT_EQ(s.primary_slot, w["primary_slot"].get<bool>());
      EXPECT_EQ(s.primary_possible, w["primary_possible"].get<bool>());
      EXPECT_EQ(s.extended_slot, w["extended_slot"].get<bool>());
      EXPECT_EQ(s.extended_possible, w["extended_possible"].get<bool>());
      EXPECT_EQ(s.logical_slot, w["logical_slot"].get<bool>());
      EXPECT_EQ(s.logical_possible, w["logical_possible"].get<bool>());
    }
  } else {
    FAIL() << "unknown kind " << kind;
  }
}

// ---- blivet -----------------------------------------------------------------------------------

SectorAlignment AlignmentOf(const nlohmann::json& pair) { return {pair[0], pair[1]}; }

void ExpectAlignment(const SectorAlignment& got, const nlohmann::json& want) {
  // parted.Alignment normalises offsets modulo the grain (ped_alignment_init).
  SectorAlignment w = AlignmentOf(want);
  w.offset_sectors = ((w.offset_sectors % w.grain_sectors) + w.grain_sectors) % w.grain_sectors;
  EXPECT_EQ(got, w);
}

void RunBlivet(const nlohmann::json& c) {
  const std::string kind = c["kind"];
  Result<ToolVersion> version = Version(c, "version", "3.14.0");
  ASSERT_TRUE(version);
  if (kind == "get_alignment") {
    BlivetAlignments a{AlignmentOf(c["optimal"]), AlignmentOf(c["minimal"]), c["sector_size"]};
    std::optional<uint64_t> size;
    if (c.contains("size_bytes")) size = c["size_bytes"].get<uint64_t>();
    Result<SectorAlignment> got = BlivetGetAlignment(a, *version, size);
    ASSERT_TRUE(got) << got.error().message;
    ExpectAlignment(*got, c["expect_alignment"]);
  } else if (kind == "end_alignment") {
    SectorAlignment start;
    if (c.contains("alignment")) {
      start = AlignmentOf(c["alignment"]);
    } else {
      BlivetAlignments a{AlignmentOf(c["optimal"]), AlignmentOf(c["minimal"]), c["sector_size"]};
      Result<SectorAlignment> got =
          BlivetGetAlignment(a, *version, c["size_bytes"].get<uint64_t>());
      ASSERT_TRUE(got);
      start = *got;
    }
    ExpectAlignment(BlivetEndAlignment(start), c["expect_alignment"]);
  } else if (kind == "add_partition") {
    // A sparse image file: libparted reports no topology.
    Topology t = test::MakeTopology(512, 512, 0, 0, 0, TopologyOrigin::kDefault,
                                    c["disk_bytes"].get<uint64_t>());
    Result<PartedModel> parted = MakePartedModel(t, NewestKnownVersion(Tool::kParted));
    ASSERT_TRUE(parted);
    BlivetAlignments a = BlivetAlignmentsOf(*parted);
    if (c.contains("optimal")) a.optimal = AlignmentOf(c["optimal"]);
    if (c.contains("minimal")) a.minimal = AlignmentOf(c["minimal"]);
    PartedRegion free =
        PartedFreshFreeRegion(*parted, c["label"] == "gpt" ? LabelType::kGpt : LabelType::kDos);
    std::optional<uint64_t> size;
    if (c.contains("size_bytes")) size = c["size_bytes"].get<uint64_t>();
    std::optional<int64_t> start, end;
    if (c.contains("start")) start = c["start"].get<int64_t>();
    if (c.contains("end")) end = c["end"].get<int64_t>();
    Result<BlivetGeometry> g =
        BlivetAddPartition(a, *version, free.first, free.last, size, start, end);
    ASSERT_TRUE(g) << g.error().message;
    if (c.contains("expect_length")) {
      EXPECT_EQ(g->length(), c["expect_length"].get<int64_t>());
    }
    if (c.contains("expect_start")) {
      EXPECT_EQ(g->start, c["expect_start"].get<int64_t>());
    }
    if (c.contains("expect_end")) {
      EXPECT_EQ(g->end, c["expect_end"].get<int64_t>());
    }
    if (c.contains("expect_aligned")) {
      const nlohmann::json& w = c["expect_aligned"];
      auto check = [&](const char* key, const SectorAlignment& al, int64_t sector) {
        if (w.contains(key)) {
          EXPECT_EQ(PedIsAligned(al, free.first, free.last, sector), w[key].get<bool>()) << key;
        }
      };
      check("optimal_start", a.optimal, g->start);
      check("minimal_start", a.minimal, g->start);
      check("optimal_end_plus_1", a.optimal, g->end + 1);
      check("optimal_end", BlivetEndAlignment(a.optimal), g->end);
      check("minimal_end", BlivetEndAlignment(a.minimal), g->end);
    }
  } else if (kind == "free_region_length") {
    EXPECT_EQ(BlivetAlignFreeRegionLength(c["length"], c["grain"], c["align"]),
              c["expect_length"].get<int64_t>());
  } else {
    FAIL() << "unknown kind " << kind;
  }
}

// ---- KPMcore and Calamares
// ------------------------------------------------------------------------

void RunKpmcore(const nlohmann::json& c) {
  const std::string kind = c["kind"];
  const uint64_t lbs = c.value("sector_size", uint64_t{512});
  if (kind == "sector_alignment") {
    Result<ToolVersion> v = Version(c, "version", "26.04");
    ASSERT_TRUE(v);
    EXPECT_EQ(KpmcoreSectorAlignment(*v, lbs), c["expect_sectors"].get<uint64_t>());
  } else if (kind == "is_aligned") {
    Result<ToolVersion> v = Version(c, "version", "26.04");
    ASSERT_TRUE(v);
    LabelType label = c["label"] == "gpt" ? LabelType::kGpt : LabelType::kDos;
    std::vector<KpmcorePartition> parts;
    for (const nlohmann::json& p : c["partitions"]) {
      parts.push_back({p["number"], p["first"], p["last"], p.value("logical", false),
                       p.value("extended", false)});
    }
    bool sector_based = KpmcoreIsSectorBased(*v, label, lbs, parts);
    if (c.contains("expect_sector_based")) {
      EXPECT_EQ(sector_based, c["expect_sector_based"].get<bool>());
    }
    const KpmcorePartition& p = parts.at(c["check"].get<size_t>());
    KpmcoreCheck got =
        KpmcoreIsAligned(*v, lbs, label, sector_based, p, "/dev/sda" + std::to_string(p.number));
    EXPECT_EQ(got.aligned, c["expect_aligned"].get<bool>());
    EXPECT_EQ(got.first_delta, c["expect_first_delta"].get<int64_t>());
    EXPECT_EQ(got.last_delta, c["expect_last_delta"].get<int64_t>());
    if (c.contains("expect_messages")) {
      EXPECT_EQ(got.messages, c["expect_messages"].get<std::vector<std::string>>());
    }
  } else if (kind == "calamares_first_sector") {
    const std::string f = c["firmware"];
    CalamaresFirmware fw = f == "efi"   ? CalamaresFirmware::kEfi
                           : f == "arm" ? CalamaresFirmware::kArm
                                        : CalamaresFirmware::kBios;
    EXPECT_EQ(CalamaresFirstSector(fw, lbs), c["expect_sector"].get<uint64_t>());
  } else if (kind == "calamares_length") {
    EXPECT_EQ(CalamaresSizeSectors(c["size_bytes"], lbs), c["expect_sectors"].get<uint64_t>());
  } else {
    FAIL() << "unknown kind " << kind;
  }
}

// ---- curtin -----------------------------------------------------------------------------------

void RunCurtin(const nlohmann::json& c) {
  ASSERT_EQ(c["kind"], "place");
  const uint64_t lbs = c["sector_size"];
  std::vector<CurtinPartitionAction> actions;
  for (const nlohmann::json& a : c["actions"]) {
    CurtinPartitionAction action;
    action.number = a["number"];
    action.size_bytes = a["size"];
    if (a.contains("offset")) action.offset_bytes = a["offset"].get<uint64_t>();
    action.extended = a.value("flag", "") == "extended";
    action.logical = a.value("flag", "") == "logical";
    actions.push_back(action);
  }
  Result<CurtinLayout> got = PlaceCurtin(
      c["storage_version"], c["label"] == "gpt" ? LabelType::kGpt : LabelType::kDos, lbs, actions);
  ASSERT_TRUE(got) << got.error().message;
  if (c.contains("expect_partitions")) {
    std::vector<std::vector<uint64_t>> bytes;
    for (const CurtinPlaced& p : got->partitions) {
      bytes.push_back({p.number, p.start_sector * lbs, p.size_sectors * lbs});
    }
    EXPECT_EQ(bytes, c["expect_partitions"].get<std::vector<std::vector<uint64_t>>>());
  }
  if (c.contains("expect_first_lba")) {
    ASSERT_TRUE(got->first_lba);
    EXPECT_EQ(*got->first_lba, c["expect_first_lba"].get<uint64_t>());
  }
  if (c.contains("expect_command_contains")) {
    const std::string want = c["expect_command_contains"];
    bool found = false;
    for (const std::string& cmd : got->commands) found |= cmd.find(want) != std::string::npos;
    EXPECT_TRUE(found) << want << " in " << nlohmann::json(got->commands).dump();
  }
}

class UpstreamInstallerCaseTest : public testing::TestWithParam<InstallerCase> {};

TEST_P(UpstreamInstallerCaseTest, MatchesTheModel) {
  const InstallerCase& c = GetParam();
  SCOPED_TRACE(c.source);
  if (c.file == "libstorage-ng") {
    RunLibstorage(c.json);
  } else if (c.file == "blivet") {
    RunBlivet(c.json);
  } else if (c.file == "kpmcore") {
    RunKpmcore(c.json);
  } else if (c.file == "curtin") {
    RunCurtin(c.json);
  } else {
    FAIL() << "cannot read " << c.source;
  }
}

std::string CaseName(const testing::TestParamInfo<InstallerCase>& info) {
  std::string name = info.param.file + "_" + info.param.json.value("name", "unnamed");
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Upstream, UpstreamInstallerCaseTest, testing::ValuesIn(AllCases()),
                         CaseName);

}  // namespace
}  // namespace partalign
