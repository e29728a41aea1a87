// Counts heap allocations: submitting and running jobs in steady state must allocate nothing.
// This binary replaces the global operator new/delete, so it holds only these tests.
#include <gtest/gtest.h>

#include <atomic>

#include "alloc_counter.h"
#include "modes.h"
#include "spindle/jobs/job_system.h"

namespace spindle::jobs {
namespace {

struct Payload {
  double a[6];
};

void frame(JobSystem& js, std::atomic<long>& sink) {
  Counter first;
  Counter second;
  Payload payload{{1, 2, 3, 4, 5, 6}};
  for (int i = 0; i < 256; ++i) {
    js.run(first, {"a", 1}, [&sink, payload] { sink.fetch_add(static_cast<long>(payload.a[5])); });
  }
  for (int i = 0; i < 64; ++i) {
    js.run_after(first, second, {"b", 2, Priority::High}, [&sink] { sink.fetch_add(1); });
  }
  js.parallel_for(0, 10000, 256, [&sink](std::size_t i) {
    if (i % 1000 == 0) sink.fetch_add(1);
  });
  js.wait(second);
  js.wait(first);
}

class Allocations : public ::testing::TestWithParam<Mode> {};

TEST_P(Allocations, SteadyStateFramesAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  JobSystem js(test::pinned_job_config(GetParam(), 0));
  std::atomic<long> sink{0};
  for (int i = 0; i < 20; ++i) frame(js, sink);  // warm-up: thread-locals, oneTBB's internals
  const long before = ::spindle::test::heap_allocations();
  for (int i = 0; i < 200; ++i) frame(js, sink);
  const long during = ::spindle::test::heap_allocations() - before;
  EXPECT_EQ(during, 0) << "heap allocations over 200 frames (" << 200 * 330 << " jobs)";
  EXPECT_EQ(sink.load(), 220L * (256 * 6 + 64 + 10));
}

// oneTBB allocates inside its own task machinery; it is a reference backend, not held to this.
INSTANTIATE_TEST_SUITE_P(OwnModes, Allocations, ::testing::ValuesIn(test::own_modes()),
                         test::mode_name);

TEST(Allocations, CountingWorks) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  const long before = ::spindle::test::heap_allocations();
  int* volatile p = new int(3);  // volatile: the pair may not be elided
  delete p;
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 1);
}

}  // namespace
}  // namespace spindle::jobs
