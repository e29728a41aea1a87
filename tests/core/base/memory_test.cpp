#include <spindle/base/memory.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/base/build_config.h>

#if SPINDLE_THREADS
#include <thread>
#endif

namespace spindle::core {
namespace {

bool aligned(const void* p, std::size_t align) {
  return reinterpret_cast<std::uintptr_t>(p) % align == 0;
}

TEST(Memory, TaggedAllocBooksCurrentPeakAndCount) {
  const MemStats start = mem_stats(MemTag::Physics);
  void* a = tagged_alloc(MemTag::Physics, 1000);
  void* b = tagged_alloc(MemTag::Physics, 500, 64);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(aligned(b, 64));
  std::memset(a, 1, 1000);
  std::memset(b, 2, 500);

  MemStats s = mem_stats(MemTag::Physics);
  EXPECT_EQ(s.current_bytes, start.current_bytes + 1500);
  EXPECT_GE(s.peak_bytes, start.current_bytes + 1500);
  EXPECT_EQ(s.allocations, start.allocations + 2);

  tagged_free(MemTag::Physics, a, 1000);
  s = mem_stats(MemTag::Physics);
  EXPECT_EQ(s.current_bytes, start.current_bytes + 500);
  EXPECT_GE(s.peak_bytes, start.current_bytes + 1500);  // peak remembers
  tagged_free(MemTag::Physics, b, 500);
  EXPECT_EQ(mem_stats(MemTag::Physics).current_bytes, start.current_bytes);

  mem_reset_peak(MemTag::Physics);
  EXPECT_EQ(mem_stats(MemTag::Physics).peak_bytes, start.current_bytes);
}

TEST(Memory, LargeAlignmentsAndZeroSize) {
  for (std::size_t align : {1u, 2u, 8u, 16u, 64u, 256u, 4096u}) {
    void* p = tagged_alloc(MemTag::Core, 3, align);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, align)) << align;
    tagged_free(MemTag::Core, p, 3);
  }
  void* z = tagged_alloc(MemTag::Core, 0);
  EXPECT_NE(z, nullptr);
  tagged_free(MemTag::Core, z, 0);
  tagged_free(MemTag::Core, nullptr, 10);  // ignored, not booked
}

TEST(Memory, ExhaustedHeapReturnsNull) {
  const MemStats start = mem_stats(MemTag::Audio);
  EXPECT_EQ(tagged_alloc(MemTag::Audio, static_cast<std::size_t>(-1) - 8, 64), nullptr);
  EXPECT_EQ(mem_stats(MemTag::Audio).allocations, start.allocations);
}

TEST(Memory, TagsAreSeparateAndTotalsAdd) {
  const MemStats anim = mem_stats(MemTag::Anim);
  const MemStats total = mem_stats_total();
  void* p = tagged_alloc(MemTag::Render, 256);
  EXPECT_EQ(mem_stats(MemTag::Anim).current_bytes, anim.current_bytes);
  EXPECT_EQ(mem_stats_total().current_bytes, total.current_bytes + 256);
  EXPECT_EQ(mem_stats_total().allocations, total.allocations + 1);
  tagged_free(MemTag::Render, p, 256);
}

#if SPINDLE_THREADS
TEST(Memory, ConcurrentBookingAddsUp) {
  const MemStats start = mem_stats(MemTag::Jobs);
  constexpr int kThreads = 4;
  constexpr int kRounds = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kRounds; ++i) {
        void* p = tagged_alloc(MemTag::Jobs, 32);
        tagged_free(MemTag::Jobs, p, 32);
      }
    });
  }
  for (auto& th : threads) th.join();
  const MemStats end = mem_stats(MemTag::Jobs);
  EXPECT_EQ(end.current_bytes, start.current_bytes);
  EXPECT_EQ(end.allocations, start.allocations + kThreads * kRounds);
  EXPECT_GE(end.peak_bytes, start.current_bytes + 32);
  EXPECT_LE(end.peak_bytes, std::max(start.peak_bytes, start.current_bytes + kThreads * 32));
}
#endif

TEST(Memory, TagNames) {
  EXPECT_STREQ(to_string(MemTag::Core), "core");
  EXPECT_STREQ(to_string(MemTag::Frame), "frame");
  EXPECT_EQ(kMemTagCount, 9u);
}

}  // namespace
}  // namespace spindle::core
