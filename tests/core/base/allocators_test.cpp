#include <spindle/base/allocators.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/base/build_config.h>
#include <spindle/jobs/job_system.h>

#include "test_support.h"

namespace spindle::core {
namespace {

using test::aligned;
using test::AssertFailure;
using test::ScopedLogCapture;
using test::ThrowOnAssert;

// --- LinearArena -------------------------------------------------------------------------------

TEST(LinearArena, AlignsEveryAllocation) {
  LinearArena arena(MemTag::Core, 4096);
  for (std::size_t align : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u, 256u}) {
    void* p = arena.allocate(3, align);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, align)) << align;
  }
  auto* d = arena.allocate_array<double>(5);
  EXPECT_TRUE(aligned(d, alignof(double)));
}

TEST(LinearArena, AlignsAddressesInAMisalignedCallerBuffer) {
  alignas(64) unsigned char storage[257];
  LinearArena arena(MemTag::Core, storage + 1, 256);  // base is odd
  void* p = arena.allocate(8, 16);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 16));
  EXPECT_TRUE(arena.owns(p));
  EXPECT_EQ(arena.used(),
            static_cast<std::size_t>(static_cast<unsigned char*>(p) - (storage + 1)) + 8);
}

TEST(LinearArena, ExhaustionReturnsNullCountsAndWarnsOncePerReset) {
  ScopedLogCapture capture;
  LinearArena arena(MemTag::Core, 100, "test arena");
  EXPECT_NE(arena.allocate(60, 1), nullptr);
  EXPECT_EQ(arena.allocate(60, 1), nullptr);
  EXPECT_EQ(arena.allocate(41, 1), nullptr);
  EXPECT_NE(arena.allocate(40, 1), nullptr);  // exactly fills it
  EXPECT_EQ(arena.remaining(), 0u);
  EXPECT_EQ(arena.allocate(1, 1), nullptr);
  EXPECT_EQ(arena.overflow_count(), 3u);
  EXPECT_EQ(capture.count(LogLevel::Warning), 1u);
  ASSERT_FALSE(capture.lines().empty());
  EXPECT_NE(capture.lines()[0].message.find("test arena"), std::string::npos);

  arena.reset();
  EXPECT_EQ(arena.allocate(200, 1), nullptr);
  EXPECT_EQ(capture.count(LogLevel::Warning), 2u);
  EXPECT_EQ(arena.overflow_count(), 4u);
  // Size arithmetic must not wrap around.
  EXPECT_EQ(arena.allocate(static_cast<std::size_t>(-1), 8), nullptr);
  EXPECT_EQ(arena.allocate_array<std::uint64_t>(static_cast<std::size_t>(-1) / 4), nullptr);
}

TEST(LinearArena, ResetStartsOverAndStatsFollow) {
  const MemTag tag = register_mem_tag("test.linear_arena");
  const MemStats start = mem_stats(tag);
  {
    LinearArena arena(tag, 1024);
    EXPECT_EQ(mem_stats(tag).reserved_bytes, start.reserved_bytes + 1024);
    void* first = arena.allocate(100, 8);
    arena.allocate(200, 8);
    EXPECT_EQ(arena.used(), 304u);  // 100 rounded up to 104 for the second's alignment
    MemStats s = mem_stats(tag);
    EXPECT_EQ(s.current_bytes, start.current_bytes + 304);
    EXPECT_EQ(s.allocations, start.allocations + 2);
    EXPECT_GE(s.peak_bytes, start.current_bytes + 304);

    arena.reset();
    EXPECT_EQ(arena.used(), 0u);
    EXPECT_EQ(arena.peak_used(), 304u);
    EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes);
    EXPECT_EQ(arena.allocate(100, 8), first);
  }
  // Destruction gives back both the live bytes and the backing.
  EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes);
  EXPECT_EQ(mem_stats(tag).reserved_bytes, start.reserved_bytes);
}

TEST(LinearArena, CreateConstructsAndMoveTransfersOwnership) {
  struct Point {
    int x, y;
  };
  LinearArena a(MemTag::Game, 256);
  Point* p = a.create<Point>(Point{3, 4});
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->x + p->y, 7);
  LinearArena b = std::move(a);
  EXPECT_EQ(a.capacity(), 0u);
  EXPECT_EQ(a.allocate(1), nullptr);
  EXPECT_TRUE(b.owns(p));
  EXPECT_EQ(b.used(), sizeof(Point));
}

TEST(LinearArena, DefaultConstructedArenaFailsSafely) {
  ScopedLogCapture capture;
  LinearArena empty;
  EXPECT_EQ(empty.allocate(1), nullptr);
  EXPECT_EQ(empty.overflow_count(), 1u);
}

// --- StackAllocator ----------------------------------------------------------------------------

TEST(StackAllocator, FreeToMarkerReleasesLaterAllocations) {
  const MemTag tag = register_mem_tag("test.stack");
  const MemStats start = mem_stats(tag);
  StackAllocator stack(tag, 1024);
  void* a = stack.allocate(64);
  auto mark = stack.get_marker();
  void* b = stack.allocate(128);
  stack.allocate(32);
  EXPECT_EQ(stack.used(), 64u + 128u + 32u);
  stack.free_to_marker(mark);
  EXPECT_EQ(stack.used(), 64u);
  EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes + 64);
  EXPECT_EQ(stack.allocate(128), b);  // the freed space is reused
  EXPECT_NE(a, b);
  {
    StackScope scope(stack);
    EXPECT_NE(stack.allocate(500), nullptr);
    EXPECT_EQ(stack.used(), 64u + 128u + 500u);
  }
  EXPECT_EQ(stack.used(), 64u + 128u);
}

TEST(StackAllocator, MarkerAboveTopIsAnAssert) {
  ThrowOnAssert hook;
  StackAllocator stack(MemTag::Core, 256);
  stack.allocate(16);
  auto mark = stack.get_marker();
  stack.free_to_marker(0);
  try {
    stack.free_to_marker(mark);
    FAIL() << "expected an assert";
  } catch (const AssertFailure& f) {
    EXPECT_NE(f.message.find("below the top"), std::string::npos) << f.message;
  }
}

// --- FixedPool / Pool --------------------------------------------------------------------------

TEST(FixedPool, HandsOutDistinctAlignedBlocksUntilEmpty) {
  ScopedLogCapture capture;
  FixedPool pool(MemTag::Game, 24, 10, 32);
  EXPECT_EQ(pool.block_size(), 32u);
  std::set<void*> blocks;
  for (int i = 0; i < 10; ++i) {
    void* p = pool.allocate();
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, 32));
    EXPECT_TRUE(pool.owns(p));
    std::memset(p, 0xab, 24);  // writable, and must not corrupt neighbours' links
    blocks.insert(p);
  }
  EXPECT_EQ(blocks.size(), 10u);
  EXPECT_EQ(pool.allocate(), nullptr);
  EXPECT_EQ(pool.allocate(), nullptr);
  EXPECT_EQ(pool.overflow_count(), 2u);
  EXPECT_EQ(capture.count(LogLevel::Warning), 1u);
  EXPECT_EQ(pool.used(), 10u);
  for (void* p : blocks) pool.free(p);
  EXPECT_EQ(pool.used(), 0u);
  EXPECT_EQ(pool.peak_used(), 10u);
}

TEST(FixedPool, FreedBlockIsReusedFirst) {
  FixedPool pool(MemTag::Game, 16, 1000);
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(pool.allocate());
  // LIFO free list: the next allocation is the block freed last, found without searching.
  pool.free(blocks[500]);
  pool.free(blocks[7]);
  EXPECT_EQ(pool.allocate(), blocks[7]);
  EXPECT_EQ(pool.allocate(), blocks[500]);
  EXPECT_EQ(pool.allocate(), nullptr);
  for (void* p : blocks) pool.free(p);
}

TEST(FixedPool, StatsCountBlocks) {
  const MemTag tag = register_mem_tag("test.pool");
  const MemStats start = mem_stats(tag);
  {
    FixedPool pool(tag, 100, 4, 8);
    EXPECT_GE(mem_stats(tag).reserved_bytes, start.reserved_bytes + 4 * 104);
    void* a = pool.allocate();
    void* b = pool.allocate();
    EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes + 2 * 104);
    EXPECT_EQ(mem_stats(tag).allocations, start.allocations + 2);
    pool.free(a);
    EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes + 104);
    (void)b;  // still in use when the pool dies: un-booked then
  }
  EXPECT_EQ(mem_stats(tag).current_bytes, start.current_bytes);
  EXPECT_EQ(mem_stats(tag).reserved_bytes, start.reserved_bytes);
}

#if SPINDLE_ASSERTS
TEST(FixedPool, DoubleFreeAndForeignPointersAssert) {
  ThrowOnAssert hook;
  FixedPool pool(MemTag::Game, 16, 4);
  void* p = pool.allocate();
  pool.free(p);
  EXPECT_THROW(pool.free(p), AssertFailure);
  int outside = 0;
  EXPECT_THROW(pool.free(&outside), AssertFailure);
  EXPECT_THROW(pool.free(static_cast<char*>(pool.allocate()) + 1), AssertFailure);
}
#endif

TEST(Pool, CreateAndDestroyRunConstructorsAndDestructors) {
  static int alive = 0;
  struct Voice {
    explicit Voice(int id) : id(id) { ++alive; }
    ~Voice() { --alive; }
    int id;
    alignas(16) float samples[4] = {};
  };
  Pool<Voice> voices(MemTag::Game, 3);
  Voice* a = voices.create(1);
  Voice* b = voices.create(2);
  Voice* c = voices.create(3);
  EXPECT_EQ(alive, 3);
  EXPECT_TRUE(aligned(a, 16));
  EXPECT_EQ(voices.create(4), nullptr);
  EXPECT_EQ(voices.overflow_count(), 1u);
  voices.destroy(b);
  EXPECT_EQ(alive, 2);
  Voice* d = voices.create(5);
  EXPECT_EQ(d, b);
  EXPECT_EQ(d->id, 5);
  voices.destroy(a);
  voices.destroy(c);
  voices.destroy(d);
  voices.destroy(nullptr);
  EXPECT_EQ(alive, 0);
  EXPECT_EQ(voices.used(), 0u);
}

// --- FrameArenas -------------------------------------------------------------------------------

TEST(FrameArenas, OneArenaPerParticipantResetEachFrame) {
  const MemStats start = mem_stats(MemTag::Frame);
  FrameArenas frame(MemTag::Frame, 3, 1000);
  frame.begin_frame();
  void* p0 = frame.arena(0).allocate(100);
  void* p1 = frame.arena(1).allocate(100);
  void* p2 = frame.arena(2).allocate(300);
  EXPECT_TRUE(frame.arena(0).owns(p0));
  EXPECT_FALSE(frame.arena(0).owns(p1));
  EXPECT_TRUE(frame.arena(2).owns(p2));
  EXPECT_EQ(frame.used(), 500u);
  EXPECT_EQ(mem_stats(MemTag::Frame).current_bytes, start.current_bytes + 500);
  EXPECT_GE(mem_stats(MemTag::Frame).reserved_bytes, start.reserved_bytes + 3000);

  ScopedLogCapture capture;
  EXPECT_EQ(frame.arena(1).allocate(2000), nullptr);
  EXPECT_EQ(frame.overflow_count(), 1u);

  frame.begin_frame();
  EXPECT_EQ(frame.used(), 0u);
  EXPECT_EQ(frame.arena(0).allocate(100), p0);  // same memory, new frame
  EXPECT_EQ(frame.frame(), 2u);
}

TEST(FrameArenas, DoubleBufferingKeepsLastFrameReadable) {
  FrameArenas frame(MemTag::Frame, 2, 256, true);
  EXPECT_TRUE(frame.double_buffered());
  frame.begin_frame();
  auto* a = static_cast<int*>(frame.arena(1).allocate(sizeof(int)));
  *a = 42;
  frame.begin_frame();
  EXPECT_EQ(frame.previous(1).used(), sizeof(int));
  EXPECT_TRUE(frame.previous(1).owns(a));
  EXPECT_EQ(*a, 42);  // untouched while the other buffer is in use
  EXPECT_FALSE(frame.arena(1).owns(a));
  frame.begin_frame();  // the buffer comes round again, reset
  EXPECT_TRUE(frame.arena(1).owns(a));
  EXPECT_EQ(frame.arena(1).used(), 0u);
}

// Each worker bumps its own arena's offset on every allocation: two arenas on one cache line
// would make neighbouring workers invalidate each other's line (false sharing).
TEST(FrameArenas, EachParticipantsArenaHasItsOwnCacheLines) {
  FrameArenas frame(MemTag::Frame, 5, 100, true);
  frame.begin_frame();
  for (int buffer = 0; buffer < 2; ++buffer) {
    for (std::uint32_t p = 0; p < frame.participants(); ++p) {
      const LinearArena& a = frame.arena(p);
      EXPECT_TRUE(aligned(&a, 64)) << "participant " << p;
      if (p > 0) {
        auto prev = reinterpret_cast<std::uintptr_t>(&frame.arena(p - 1));
        auto here = reinterpret_cast<std::uintptr_t>(&a);
        EXPECT_GE(here > prev ? here - prev : prev - here, 64u) << "participant " << p;
      }
      EXPECT_TRUE(aligned(frame.arena(p).allocate(1), 64)) << "participant " << p;
    }
    frame.begin_frame();  // the other buffer
  }
}

TEST(FrameArenas, OutOfRangeParticipantAsserts) {
  ThrowOnAssert hook;
  FrameArenas frame(MemTag::Frame, 2, 64);
  EXPECT_THROW(frame.arena(2), AssertFailure);
  EXPECT_THROW(frame.previous(0), AssertFailure);  // not double-buffered
}

TEST(FrameArenas, JobsAllocateFromTheirOwnWorkersArena) {
  jobs::Config config;
  config.workers = 2;
  config.pin_workers = false;
  config.pin_main_thread = false;
  config.mode =
      jobs::mode_available(jobs::Mode::Dynamic) ? jobs::Mode::Dynamic : jobs::Mode::Single;
  jobs::JobSystem js(config);
  FrameArenas frame(MemTag::Frame, js.participant_count(), 64 * 1024);
  frame.begin_frame();
  constexpr std::size_t kItems = 2000;
  std::vector<const void*> where(kItems);
  std::vector<std::uint32_t> who(kItems);
  js.parallel_for(0, kItems, 16, [&](std::size_t i) {
    std::uint32_t w = js.current_worker();
    who[i] = w;
    where[i] = frame.arena(js).allocate(16, 16);
  });
  std::size_t total = 0;
  for (std::size_t i = 0; i < kItems; ++i) {
    ASSERT_NE(where[i], nullptr);
    EXPECT_TRUE(frame.arena(who[i]).owns(where[i]));  // booked in the worker's own arena
  }
  for (std::uint32_t w = 0; w < js.participant_count(); ++w) total += frame.arena(w).used();
  EXPECT_EQ(total, kItems * 16);
  EXPECT_EQ(frame.overflow_count(), 0u);
}

}  // namespace
}  // namespace spindle::core

namespace spindle::core {
namespace {

TEST(AllocatorsReview, SizesThatWrapGiveEmptyAllocatorsNotCorruption) {
  FrameArenas arenas(MemTag::Frame, 8, SIZE_MAX - 10);
  EXPECT_EQ(arenas.arena(0).allocate(16, 8), nullptr);
  FixedPool pool(MemTag::Core, 16, (SIZE_MAX / 17) + 2, 8, "huge");
  EXPECT_EQ(pool.allocate(), nullptr);
}

TEST(AllocatorsReview, PoolKnowsWhichBlocksAreLive) {
  FixedPool pool(MemTag::Core, 32, 4, 8, "live");
  void* a = pool.allocate();
  EXPECT_TRUE(pool.is_live(a));
  pool.free(a);
#if SPINDLE_ASSERTS
  EXPECT_FALSE(pool.is_live(a)) << "Pool<T>::destroy checks this before running ~T";
#endif
  int outside = 0;
  EXPECT_FALSE(pool.is_live(&outside));
}

}  // namespace
}  // namespace spindle::core
