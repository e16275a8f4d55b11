// SPDX-License-Identifier: GPL-3.0-or-later
// Both benchmark engines against image files (no root) and loop devices with direct I/O (root):
// they count what they complete, record one latency per I/O, write the data they say they
// write, rewrite without changing a byte, interleave the streams of a trial in its order, and
// report O_DIRECT errors with the offset.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "io/bench/bench_setup.h"
#include "io/bench/psync_engine.h"
#include "io/bench/uring_engine.h"
#include "io/block/mapped_buffer.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

constexpr uint64_t kImageBytes = 16 << 20;
constexpr uint64_t kTrialNs = 20'000'000;

using EngineFactory = Result<std::unique_ptr<BenchEngine>> (*)(const Target&, uint32_t, uint64_t);

template <typename Engine>
Result<std::unique_ptr<BenchEngine>> Make(const Target& t, uint32_t depth, uint64_t pool) {
  Result<std::unique_ptr<Engine>> e = Engine::Create(t.fd.get(), t.path, depth, pool);
  if (!e) return e.error();
  return std::unique_ptr<BenchEngine>(std::move(*e));
}

class BenchEngineTest : public ::testing::TestWithParam<EngineFactory> {
 protected:
  void SetUp() override { test::CreateSparseFile(image_, kImageBytes); }
  Target Open(const std::string& path, bool write = false) {
    Result<Target> t = OpenTarget(path, {.write = write, .direct = true});
    EXPECT_TRUE(t) << t.error().message;
    return std::move(*t);
  }
  OffsetGenerator Offsets(AccessOrder order, uint64_t block, uint64_t align) {
    return *OffsetGenerator::Make({order, 0, kImageBytes, block, align}, 1);
  }

  test::TempDir dir_;
  std::string image_ = dir_.File("disk.img");
};

TEST_P(BenchEngineTest, ReadTrialCountsEveryCompletedIo) {
  Target t = Open(image_);
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 8, 8 * 65536);
  for (uint32_t depth : {1u, 8u}) {
    OffsetGenerator offsets = Offsets(AccessOrder::kRandom, 4096, 512);
    LatencyHistogram latency;
    Result<TrialResult> r =
        RunSingleTrial(*engine, IoPattern::kRandRead, 4096, depth, kTrialNs, offsets, latency);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_GT(r->ios(), 0u);
    EXPECT_EQ(r->bytes(), r->ios() * 4096);
    EXPECT_EQ(latency.count(), r->ios());
    EXPECT_GE(r->measured_ns, kTrialNs);
    EXPECT_GE(r->wall_ns, r->measured_ns);
    EXPECT_GT(latency.min(), 0u);
  }
}

TEST_P(BenchEngineTest, SequentialWritesLandWithTheBufferData) {
  Target t = Open(image_, /*write=*/true);
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 1, 65536);
  OffsetGenerator offsets = Offsets(AccessOrder::kSequential, 65536, 65536);
  LatencyHistogram latency;
  Result<TrialResult> r =
      RunSingleTrial(*engine, IoPattern::kSeqWrite, 65536, 1, kTrialNs, offsets, latency);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_GT(r->ios(), 0u);
  // At QD1 every write comes from slot 0: the first 64 KiB of the pseudo-random pool.
  MappedBuffer expected(65536);
  expected.FillPseudoRandom();
  const std::string data = test::ReadFile(image_);
  const uint64_t written = std::min<uint64_t>(r->ios(), kImageBytes / 65536);
  for (uint64_t block = 0; block < written; ++block) {
    ASSERT_EQ(std::memcmp(data.data() + block * 65536, expected.data(), 65536), 0) << block;
  }
  if (written < kImageBytes / 65536) {
    EXPECT_EQ(data.substr(written * 65536, 65536), std::string(65536, '\0'));
  }
}

TEST_P(BenchEngineTest, RewritesLeaveEveryByteAsItWas) {
  // Pseudo-random contents, unlike the pool's: a write of the pool would change them.
  {
    MappedBuffer data(kImageBytes);
    data.FillPseudoRandom(99);
    int fd = ::open(image_.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, data.data(), kImageBytes, 0), static_cast<ssize_t>(kImageBytes));
    ::close(fd);
  }
  const std::string before = test::ReadFile(image_);
  Target t = Open(image_, /*write=*/true);
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 32, 32 * 4096);
  for (uint32_t depth : {1u, 32u}) {
    // 512-byte offsets: at QD32 in-flight rewrites overlap each other.
    OffsetGenerator offsets = Offsets(AccessOrder::kRandom, 4096, 512);
    LatencyHistogram latency;
    Result<TrialResult> r =
        RunSingleTrial(*engine, IoPattern::kRandRewrite, 4096, depth, kTrialNs, offsets, latency);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_GT(r->ios(), 0u);
    EXPECT_EQ(r->bytes(), r->ios() * 4096);
    EXPECT_EQ(latency.count(), r->ios());
    EXPECT_GE(r->streams[0].latency_ios, r->ios());
  }
  OffsetGenerator sequential = Offsets(AccessOrder::kSequential, 65536, 65536);
  LatencyHistogram latency;
  ASSERT_TRUE(
      RunSingleTrial(*engine, IoPattern::kSeqRewrite, 65536, 2, kTrialNs, sequential, latency));
  EXPECT_TRUE(test::ReadFile(image_) == before) << "a rewrite changed the image";
}

TEST_P(BenchEngineTest, StreamsOfATrialFollowItsOrder) {
  Target t = Open(image_);
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 1, 4096);
  // Three streams, the second twice per block: at QD1 the counts follow the order to within
  // one block.
  std::vector<OffsetGenerator> offsets;
  std::vector<LatencyHistogram> latency(3);
  for (uint64_t align : {512u, 1024u, 4096u})
    offsets.push_back(Offsets(AccessOrder::kRandom, 4096, align));
  std::vector<TrialStream> streams;
  for (size_t i = 0; i < 3; ++i) {
    streams.push_back({IoPattern::kRandRead, 4096, &offsets[i], &latency[i]});
  }
  const std::vector<uint8_t> order{1, 0, 1, 2, 2, 1, 0, 1};
  Result<TrialResult> r = engine->RunTrial({streams, 1, kTrialNs, order});
  ASSERT_TRUE(r) << r.error().message;
  const uint64_t blocks = r->ios() / 4;
  ASSERT_GT(blocks, 10u);
  EXPECT_NEAR(static_cast<double>(r->streams[0].ios), static_cast<double>(blocks), 1.5);
  EXPECT_NEAR(static_cast<double>(r->streams[1].ios), 2.0 * blocks, 2.5);
  EXPECT_NEAR(static_cast<double>(r->streams[2].ios), static_cast<double>(blocks), 1.5);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(latency[i].count(), r->streams[i].ios) << i;
    EXPECT_EQ(r->streams[i].latency_ios, r->streams[i].ios) << "QD1 drains nothing";
    EXPECT_GT(r->streams[i].latency_ns, 0u);
  }
  // An order that leaves a stream out is refused.
  const std::vector<uint8_t> partial{0, 1};
  EXPECT_FALSE(engine->RunTrial({streams, 1, kTrialNs, partial}));
}

TEST_P(BenchEngineTest, TrialsBeyondTheSetUpAreRefused) {
  Target t = Open(image_);
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 4, 4 * 4096);
  OffsetGenerator offsets = Offsets(AccessOrder::kRandom, 4096, 4096);
  LatencyHistogram latency;
  Result<TrialResult> r =
      RunSingleTrial(*engine, IoPattern::kRandRead, 4096, 8, kTrialNs, offsets, latency);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("set up for QD4 and 16384 bytes"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(RunSingleTrial(*engine, IoPattern::kRandRead, 8192, 4, kTrialNs, offsets, latency));
}

TEST_P(BenchEngineTest, MisalignedDirectIoOnAFourKDeviceIsAnErrorWithItsOffset) {
  PARTALIGN_REQUIRE_DEVICES();
  test::LoopDevice loop(image_, 4096, /*direct_io=*/true);
  Target t = Open(loop.path());
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 1, 4096);
  OffsetGenerator offsets = Offsets(AccessOrder::kRandom, 512, 512);
  LatencyHistogram latency;
  Result<TrialResult> r =
      RunSingleTrial(*engine, IoPattern::kRandRead, 512, 1, kTrialNs, offsets, latency);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot read '" + loop.path() + "' at byte "), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("Invalid argument"), std::string::npos) << r.error().message;
}

TEST_P(BenchEngineTest, LoopDeviceWithDirectIo) {
  PARTALIGN_REQUIRE_DEVICES();
  test::LoopDevice loop(image_, 512, /*direct_io=*/true);
  Target t = Open(loop.path());
  std::unique_ptr<BenchEngine> engine = *GetParam()(t, 32, 32 * 4096);
  OffsetGenerator offsets = Offsets(AccessOrder::kRandom, 4096, 4096);
  LatencyHistogram latency;
  Result<TrialResult> r =
      RunSingleTrial(*engine, IoPattern::kRandRead, 4096, 32, kTrialNs, offsets, latency);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GT(r->ios(), 32u);
  EXPECT_EQ(latency.count(), r->ios());
}

INSTANTIATE_TEST_SUITE_P(Engines, BenchEngineTest,
                         ::testing::Values(&Make<UringEngine>, &Make<PsyncEngine>),
                         [](const ::testing::TestParamInfo<EngineFactory>& param_info) {
                           return param_info.param == &Make<UringEngine> ? std::string("io_uring")
                                                                         : std::string("psync");
                         });

TEST(MakeBenchEngineTest, AutoPicksIoUringAndPsyncOnRequest) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  Result<Target> t = OpenTarget(image, {.direct = true});
  ASSERT_TRUE(t);
  Result<BenchEngineSetup> automatic = MakeBenchEngine(EngineChoice::kAuto, *t, 4, 16384);
  ASSERT_TRUE(automatic) << automatic.error().message;
  EXPECT_EQ(automatic->engine->name(), "io_uring");
  EXPECT_TRUE(automatic->fallback_reason.empty());
  Result<BenchEngineSetup> psync = MakeBenchEngine(EngineChoice::kPsync, *t, 4, 16384);
  ASSERT_TRUE(psync);
  EXPECT_EQ(psync->engine->name(), "psync");
  EXPECT_EQ(ParseEngineChoice("io_uring"), EngineChoice::kUring);
  EXPECT_FALSE(ParseEngineChoice("libaio"));
}

}  // namespace
}  // namespace partalign
