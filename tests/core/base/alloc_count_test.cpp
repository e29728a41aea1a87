// Proves that the steady-state paths of core allocate nothing from the heap: this binary replaces
// the global operator new / delete with counting versions (hence a binary of its own).
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include <gtest/gtest.h>

#include <spindle/base/allocators.h>
#include <spindle/base/log.h>
#include <spindle/base/profiler.h>
#include <spindle/jobs/job_system.h>

#include "alloc_counter.h"
#include "test_support.h"

namespace spindle::core {
namespace {

std::size_t news() {
  return static_cast<std::size_t>(::spindle::test::heap_allocations());
}

TEST(AllocCount, CounterSeesHeapAllocations) {
  std::size_t before = news();
  auto* s = new std::string(100, 'x');  // the counter works, so a zero below means something
  delete s;
  EXPECT_GT(news(), before);
}

TEST(AllocCount, LoggingAnOrdinaryMessageAllocatesNothing) {
  Logger& log = logger();
  log.set_stderr_enabled(false);
  auto path = test::temp_path("alloc.log");
  ASSERT_TRUE(log.open_file(path.c_str()).ok());
  test::CapturedLog captured;
  std::size_t calls = 0;
  int id = log.add_sink([](void* user, const LogRecord&) { ++*static_cast<std::size_t*>(user); },
                        &calls);
  // Warm up: first use of thread-locals and the logger itself.
  SPINDLE_LOG_INFO(Core, "warm up");

  const std::string long_text(3000, 'y');
  std::size_t before = news();
  for (int i = 0; i < 100; ++i) {
    SPINDLE_LOG_INFO(Render, "frame %d took %.3f ms for %zu draws (%s)", i, 16.6, std::size_t{42},
                     "ok");
    SPINDLE_LOG_WARNING(Physics, "%s", long_text.c_str());  // truncated, still no heap
    SPINDLE_LOG_DEBUG(Audio, "filtered out %d", i);
    job_log_adapter(nullptr, jobs::LogLevel::Error, "from the job system");
  }
  std::size_t after = news();
  log.remove_sink(id);
  log.close_file();
  EXPECT_EQ(after - before, 0u);
  EXPECT_EQ(calls, 301u);
}

TEST(AllocCount, ArenaPoolAndStatsAllocateNothing) {
  LinearArena arena(MemTag::Frame, 1 << 16);
  FixedPool pool(MemTag::Game, 48, 64);
  std::size_t before = news();
  for (int frame = 0; frame < 10; ++frame) {
    for (int i = 0; i < 100; ++i) ASSERT_NE(arena.allocate(64, 16), nullptr);
    void* blocks[64];
    for (void*& b : blocks) b = pool.allocate();
    for (void* b : blocks) pool.free(b);
    (void)mem_stats(MemTag::Frame);
    arena.reset();
  }
  EXPECT_EQ(news() - before, 0u);
}

TEST(AllocCount, ProfilerZonesAllocateNothingOnceRegistered) {
  { SPINDLE_PROFILE_ZONE("register"); }  // registration allocates the thread's ring once
  std::size_t before = news();
  for (int i = 0; i < 1000; ++i) {
    SPINDLE_PROFILE_ZONE("hot");
    profiler::begin_zone("manual");
    profiler::end_zone();
  }
  EXPECT_EQ(news() - before, 0u);
}

}  // namespace
}  // namespace spindle::core
