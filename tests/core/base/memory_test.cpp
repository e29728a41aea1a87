#include <spindle/base/memory.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/base/build_config.h>

#include "modes.h"
#include "test_support.h"

#if SPINDLE_THREADS
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#endif

namespace spindle::core {
namespace {

using test::aligned;

TEST(Memory, TaggedAllocBooksCurrentPeakAndCount) {
  const MemTag tag = register_mem_tag("test.tagged_alloc");
  const MemStats start = mem_stats(tag);
  void* a = tagged_alloc(tag, 1000);
  void* b = tagged_alloc(tag, 500, 64);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(aligned(b, 64));
  std::memset(a, 1, 1000);
  std::memset(b, 2, 500);

  MemStats s = mem_stats(tag);
  EXPECT_EQ(s.current_bytes, start.current_bytes + 1500);
  EXPECT_GE(s.peak_bytes, start.current_bytes + 1500);
  EXPECT_EQ(s.allocations, start.allocations + 2);

  tagged_free(tag, a, 1000);
  s = mem_stats(tag);
  EXPECT_EQ(s.current_bytes, start.current_bytes + 500);
  EXPECT_GE(s.peak_bytes, start.current_bytes + 1500);  // peak remembers
  tagged_free(tag, b, 500);
  EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes);

  mem_reset_peak(tag);
  EXPECT_EQ(mem_stats(tag).peak_bytes, start.current_bytes);
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
  const MemTag tag = register_mem_tag("test.exhausted");
  const MemStats start = mem_stats(tag);
  EXPECT_EQ(tagged_alloc(tag, static_cast<std::size_t>(-1) - 8, 64), nullptr);
  EXPECT_EQ(mem_stats(tag).allocations, start.allocations);
}

TEST(Memory, TagsAreSeparateAndTotalsAdd) {
  const MemTag one = register_mem_tag("test.separate_one");
  const MemTag other = register_mem_tag("test.separate_other");
  const MemStats before = mem_stats(other);
  const MemStats total = mem_stats_total();
  void* p = tagged_alloc(one, 256);
  EXPECT_EQ(mem_stats(one).current_bytes, 256u);
  EXPECT_EQ(mem_stats(other).current_bytes, before.current_bytes);
  EXPECT_EQ(mem_stats_total().current_bytes, total.current_bytes + 256);
  EXPECT_EQ(mem_stats_total().allocations, total.allocations + 1);
  tagged_free(one, p, 256);
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

#if SPINDLE_THREADS
// SPINDLE_STRESS_SCALE (default 1.0) shrinks stress loops, e.g. 0.1 under ThreadSanitizer.
double stress_scale() {
  const char* value = std::getenv("SPINDLE_STRESS_SCALE");
  const double scale = value != nullptr ? std::atof(value) : 1.0;
  return scale > 0.0 ? scale : 1.0;
}

int scaled(int count, int at_least) {
  return std::max(at_least, static_cast<int>(count * stress_scale()));
}

// Spins, then yields once the other side seems descheduled: the racing tests below need both
// threads running at once to hit the window they look for.
template <class Done>
void spin_until(Done done) {
  for (int i = 0; !done(); ++i) {
    if (i < (1 << 16)) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}

// A reset lowers the peak to current; a booking that lands while it runs must not be lost, or
// the peak ends below a value current reached after the reset. Each round raises the peak far
// above current first, so the racing booking sees no reason to raise it itself, and delays the
// reset by a varying few hundred nanoseconds so that some rounds land in the window.
TEST(MemoryReview, ResetPeakRacingABookingKeepsThatBookingsPeak) {
  const MemTag tag = register_mem_tag("test.reset_peak");
  const int rounds = scaled(10000, 1000);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  constexpr int kStop = -1;
  std::atomic<int> go{0};
  std::atomic<int> booked{0};
  std::thread booker([&] {
    for (int r = 1;; ++r) {
      spin_until([&] { return go.load(std::memory_order_acquire) != r - 1; });
      if (go.load(std::memory_order_acquire) == kStop) return;
      mem_book_alloc(tag, 8);
      booked.store(r, std::memory_order_release);
    }
  });
  int lost = 0;
  int r = 1;
  for (; r <= rounds && std::chrono::steady_clock::now() < deadline; ++r) {
    const std::size_t base = mem_stats(tag).current_bytes;
    mem_book_alloc(tag, std::size_t{1} << 20);
    mem_book_free(tag, std::size_t{1} << 20);
    go.store(r, std::memory_order_release);
    for (int i = 0, delay = r % 97; i < delay; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    mem_reset_peak(tag);
    spin_until([&] { return booked.load(std::memory_order_acquire) == r; });
    mem_book_free(tag, 8);
    // Current was base + 8 at some point after the reset had begun and after it ended.
    if (mem_stats(tag).peak_bytes < base + 8) ++lost;
  }
  go.store(kStop, std::memory_order_release);
  booker.join();
  EXPECT_EQ(lost, 0) << "of " << r - 1 << " rounds";
}

// Bookers hammer alloc/free while the main thread resets: no snapshot shows a peak below
// current, and once everyone has stopped the peak still covers current.
TEST(MemoryReview, ResetPeakUnderConcurrentBookingKeepsPeakAtLeastCurrent) {
  const MemTag tag = register_mem_tag("test.reset_peak");
  const std::size_t start = mem_stats(tag).current_bytes;
  constexpr int kThreads = 2;
  const int rounds = scaled(200000, 10000);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::size_t bytes = 16 * static_cast<std::size_t>(t + 1);
      for (int i = 0; i < rounds; ++i) {
        mem_book_alloc(tag, bytes);
        mem_book_alloc(tag, bytes);
        mem_book_free(tag, bytes);
        if (i % 64 == 63) {
          mem_book_alloc(tag, 1024);  // a spike the next reset lowers again
          mem_book_free(tag, 1024);
        }
        mem_book_free(tag, bytes);
      }
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  int bad_snapshots = 0;
  int resets = 0;
  while (running.load(std::memory_order_acquire) > 0) {
    mem_reset_peak(tag);
    ++resets;
    const MemStats s = mem_stats(tag);
    if (s.peak_bytes < s.current_bytes) ++bad_snapshots;
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad_snapshots, 0) << "of " << resets << " resets";
  const MemStats end = mem_stats(tag);
  EXPECT_EQ(end.current_bytes, start);
  EXPECT_GE(end.peak_bytes, end.current_bytes);
}
#endif

TEST(MemTags, CoresOwnTagsAreRegisteredFromTheStart) {
  EXPECT_STREQ(to_string(MemTag::Core), "core");
  EXPECT_STREQ(to_string(MemTag::Jobs), "jobs");
  EXPECT_STREQ(to_string(MemTag::Game), "game");
  EXPECT_STREQ(to_string(MemTag::Frame), "frame");
  EXPECT_EQ(register_mem_tag("frame"), MemTag::Frame);
  ASSERT_GE(mem_tag_count(), 4u);
  EXPECT_EQ(mem_tag_at(0), MemTag::Core);
  EXPECT_EQ(mem_tag_at(3), MemTag::Frame);
  EXPECT_STREQ(to_string(MemTag{kMaxMemTags - 1}), "?") << "not registered by any test";
}

// Usable from the static initialisation of another file: nothing to construct first.
constinit MemTag g_constant_tag = MemTag::Frame;
const MemTag g_registered_at_start = register_mem_tag("test.static_init");

TEST(MemTags, RegisteringANameGivesANewTagOnceAndItsName) {
  const std::size_t count = mem_tag_count();
  const MemTag tag = register_mem_tag("test.plugin");
  EXPECT_EQ(mem_tag_count(), count + 1);
  EXPECT_EQ(mem_tag_at(count), tag);
  EXPECT_STREQ(to_string(tag), "test.plugin");
  EXPECT_NE(tag, MemTag::Core);

  std::string same = "test.plugin";  // another pointer, same name
  EXPECT_EQ(register_mem_tag(same.c_str()), tag);
  EXPECT_EQ(mem_tag_count(), count + 1);

  EXPECT_EQ(g_constant_tag, MemTag::Frame);
  EXPECT_STREQ(to_string(g_registered_at_start), "test.static_init");
}

TEST(MemTags, StatsAreKeptPerRegisteredTagAndTotalled) {
  const MemTag a = register_mem_tag("test.stats_a");
  const MemTag b = register_mem_tag("test.stats_b");
  const MemStats total = mem_stats_total();
  mem_book_alloc(a, 100);
  mem_book_reserve(b, 4096);
  EXPECT_EQ(mem_stats(a).current_bytes, 100u);
  EXPECT_EQ(mem_stats(a).allocations, 1u);
  EXPECT_EQ(mem_stats(a).reserved_bytes, 0u);
  EXPECT_EQ(mem_stats(b).reserved_bytes, 4096u);
  EXPECT_EQ(mem_stats(b).current_bytes, 0u);
  EXPECT_EQ(mem_stats_total().current_bytes, total.current_bytes + 100);
  EXPECT_EQ(mem_stats_total().reserved_bytes, total.reserved_bytes + 4096);
  mem_book_free(a, 100);
  mem_reset_peak(a);
  EXPECT_EQ(mem_stats(a).peak_bytes, 0u);
  mem_book_release(b, 4096);
  EXPECT_EQ(mem_stats_total().reserved_bytes, total.reserved_bytes);
}

#if SPINDLE_THREADS
TEST(MemTags, ThreadsRegisteringTheSameNamesAgree) {
  constexpr int kThreads = 4;
  MemTag seen[kThreads][3];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&seen, t] {
      const char* names[] = {"test.race_x", "test.race_y", "test.race_z"};
      for (int n = 0; n < 3; ++n) {
        seen[t][n] = register_mem_tag(names[(n + t) % 3]);
        mem_book_alloc(seen[t][n], 1);
        mem_book_free(seen[t][n], 1);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int n = 0; n < 3; ++n) EXPECT_EQ(seen[t][n], seen[0][(n + t) % 3]);
  }
  EXPECT_STREQ(to_string(register_mem_tag("test.race_y")), "test.race_y");
}
#endif

TEST(MemTagsDeathTest, AFullTableNamesTheTagItCannotRegister) {
  SPINDLE_DEATH_TEST_STYLE();
  EXPECT_DEATH(
      {
        for (std::size_t i = mem_tag_count(); i < kMaxMemTags; ++i) {
          register_mem_tag(("test.fill_" + std::to_string(i)).c_str());
        }
        EXPECT_EQ(mem_tag_count(), kMaxMemTags);
        register_mem_tag("test.one_too_many");
      },
      "memory tag table is full \\(32 tags\\): cannot register 'test.one_too_many'");
}

}  // namespace
}  // namespace spindle::core
