// Stress: random dependency graphs of about a million jobs in every mode. Each job checks that
// the batch it depends on had fully finished and that it runs exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "modes.h"
#include "spindle/jobs/job_system.h"

#if SPINDLE_THREADS
#include <thread>
#endif

namespace spindle::jobs {
namespace {

// A batch is a set of jobs counted on one counter. Batch k starts after batch parent[k] (a random
// earlier batch, or none), so the batches form a random forest of dependencies; some jobs spawn
// children into their own batch while it runs.
struct Graph {
  std::vector<int> parent;
  std::vector<int> jobs;      // jobs submitted up front per batch
  std::vector<int> children;  // jobs spawned from inside the batch's first job
  int total = 0;
};

Graph make_graph(std::uint32_t seed, int target_jobs) {
  std::mt19937 rng(seed);
  Graph g;
  while (g.total < target_jobs) {
    const int k = static_cast<int>(g.parent.size());
    std::uniform_int_distribution<int> parent_pick(-1, k - 1);
    std::uniform_int_distribution<int> size_pick(1, 600);
    std::uniform_int_distribution<int> child_pick(0, 40);
    g.parent.push_back(k == 0 ? -1 : parent_pick(rng));
    g.jobs.push_back(size_pick(rng));
    g.children.push_back(child_pick(rng));
    g.total += g.jobs.back() + g.children.back();
  }
  return g;
}

struct Batch {
  Counter counter;
  std::atomic<int> finished{0};
  int expected = 0;
};

void run_graph(JobSystem& js, const Graph& g, std::vector<std::atomic<std::uint8_t>>& runs) {
  const int batches = static_cast<int>(g.parent.size());
  auto state = std::make_unique<Batch[]>(batches);
  std::atomic<int> violations{0};
  std::vector<int> first_index(batches + 1, 0);
  for (int k = 0; k < batches; ++k) {
    first_index[k + 1] = first_index[k] + g.jobs[k] + g.children[k];
    state[k].expected = g.jobs[k] + g.children[k];
  }
  Counter none;
  for (int k = 0; k < batches; ++k) {
    Counter& dependency = g.parent[k] < 0 ? none : state[g.parent[k]].counter;
    const Batch* parent = g.parent[k] < 0 ? nullptr : &state[g.parent[k]];
    Batch& batch = state[k];
    for (int j = 0; j < g.jobs[k]; ++j) {
      const int id = first_index[k] + j;
      const int spawn = j == 0 ? g.children[k] : 0;
      const int child_base = first_index[k] + g.jobs[k];
      js.run_after(dependency, batch.counter, {"graph", 1},
                   [&js, &runs, &violations, &batch, parent, id, spawn, child_base] {
                     if (parent != nullptr && parent->finished.load() != parent->expected) {
                       violations.fetch_add(1);
                     }
                     for (int c = 0; c < spawn; ++c) {
                       const int child = child_base + c;
                       js.run(batch.counter, {"child", 2}, [&runs, &batch, child] {
                         runs[child].fetch_add(1, std::memory_order_relaxed);
                         batch.finished.fetch_add(1);
                       });
                     }
                     runs[id].fetch_add(1, std::memory_order_relaxed);
                     batch.finished.fetch_add(1);
                   });
    }
  }
  for (int k = 0; k < batches; ++k) js.wait(state[k].counter);
  EXPECT_EQ(violations.load(), 0) << "a job started before its dependency finished";
}

class Stress : public ::testing::TestWithParam<Mode> {};

TEST_P(Stress, RandomDependencyGraphsRunEveryJobOnceAfterItsDependencies) {
  const int target = static_cast<int>(1'000'000 * test::stress_scale());
  Config config = test::pinned_job_config(GetParam(), 0);
  config.jobs_per_worker = 1u << 17;  // the whole graph may sit in continuation lists at once
  JobSystem js(config);
  int total = 0;
  for (std::uint32_t seed = 1; total < target; ++seed) {
    const Graph g = make_graph(seed, std::min(200'000, target - total));
    std::vector<std::atomic<std::uint8_t>> runs(g.total);
    run_graph(js, g, runs);
    for (int i = 0; i < g.total; ++i)
      ASSERT_EQ(runs[i].load(), 1) << "seed " << seed << " job " << i;
    total += g.total;
  }
  EXPECT_GE(total, target);
}

TEST_P(Stress, ParallelForRepeatedWithRandomSizes) {
  JobSystem js(test::pinned_job_config(GetParam(), 0));
  std::mt19937 rng(7);
  const int rounds = static_cast<int>(300 * test::stress_scale()) + 5;
  std::vector<std::atomic<std::uint8_t>> hits(20000);
  for (int r = 0; r < rounds; ++r) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(0, hits.size())(rng);
    const std::size_t grain = std::uniform_int_distribution<std::size_t>(0, 700)(rng);
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
    js.parallel_for(0, size, grain, [&](std::size_t i) { hits[i].fetch_add(1); });
    for (std::size_t i = 0; i < hits.size(); ++i) {
      ASSERT_EQ(hits[i].load(), i < size ? 1 : 0) << "round " << r << " index " << i;
    }
  }
}

// Overwrites a stretch of stack, where the previous wait's Counter lived.
[[gnu::noinline]] int scribble_stack(int seed) {
  volatile int area[256];
  for (int i = 0; i < 256; ++i) area[i] = seed + i;
  return area[seed & 255];
}

// In-order ranges (JobDesc::in_order) with more workers than cores: every item once, nested
// inside the jobs of another in-order range, and the shared cursor on the caller's stack is
// overwritten after every wait, so a job that touched it late (one that found no item left)
// shows under TSan / ASan.
TEST_P(Stress, InOrderRangesWithMoreWorkersThanCores) {
  JobSystem js(test::pinned_job_config(GetParam(), 8));
  std::mt19937 rng(11);
  const int rounds = static_cast<int>(200 * test::stress_scale()) + 5;
  JobDesc desc{"in_order"};
  desc.in_order = true;
  std::vector<std::atomic<std::uint8_t>> hits(4096);
  for (int r = 0; r < rounds; ++r) {
    const std::size_t outer = std::uniform_int_distribution<std::size_t>(0, 16)(rng);
    const std::size_t inner = std::uniform_int_distribution<std::size_t>(0, hits.size() / 16)(rng);
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
    js.parallel_for_range(
        0, outer, 1,
        [&](std::size_t b, std::size_t) {
          js.parallel_for_range(
              0, inner, 1, [&](std::size_t i, std::size_t) { hits[b * inner + i].fetch_add(1); },
              desc);
          scribble_stack(static_cast<int>(b));
        },
        desc);
    scribble_stack(r);
    for (std::size_t i = 0; i < hits.size(); ++i) {
      ASSERT_EQ(hits[i].load(), i < outer * inner ? 1 : 0) << "round " << r << " index " << i;
    }
  }
}

// A counter whose pending count reaches zero, rises again (jobs are added one at a time: Static
// mode hands out a range's chunks one by one, run() adds one job each) and reaches zero again:
// the first finisher may still be inside finish() when the second one completes. The waiter
// must not return (the counter dies with the stack frame) until both are out. More workers
// than cores, so finishers are preempted inside that window; the stack is overwritten after
// every wait, so a late touch of the dead counter shows under TSan / ASan (it was a real race:
// a single "finalizing" bit, cleared by the second finisher).
TEST_P(Stress, CountersThatReachZeroTwiceOutliveTheirLastFinisher) {
  JobSystem js(test::pinned_job_config(GetParam(), 6));
  const int rounds = static_cast<int>(20000 * test::stress_scale()) + 100;
  std::atomic<long> sum{0};
  long expected = 0;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      js.parallel_for(0, 3, 1, [&](std::size_t i) { sum.fetch_add(static_cast<long>(i) + 1); });
      expected += 6;
    } else {
      Counter c;
      js.run(c, {"a"}, [&] { sum.fetch_add(1); });
      js.run(c, {"b"}, [&] { sum.fetch_add(2); });
      js.wait(c);
      expected += 3;
    }
    ASSERT_EQ(sum.load(), expected) << "round " << r;
    (void)scribble_stack(r);
  }
}

// Busy work of `units` steps, opaque to the optimiser: jobs of random length.
void spin_for(int units) {
  std::atomic<int> sink{0};
  for (int i = 0; i < units; ++i) sink.fetch_add(1, std::memory_order_relaxed);
}

// One round per iteration on counter `a`, reused across rounds: `first` runs and finishes (a
// reaches zero), then `second` is counted on `a` and a continuation attached to `a`. The
// continuation must wait for `second`: the first finisher may still be inside finish() when
// both arrive, and must not hand it the continuation. Returns continuations that started early.
int race_continuations(JobSystem& js, int rounds, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> length(0, 400);
  Counter a;
  Counter b;
  std::atomic<int> early{0};
  std::atomic<int> started{0};
  for (int r = 0; r < rounds; ++r) {
    std::atomic<bool> second_done{false};
    const int first_units = length(rng);
    const int second_units = length(rng) * 4;
    js.run(a, {"first"}, [first_units] { spin_for(first_units); });
    // Not done(): that also waits for the finisher to leave finish(), which closes the window.
    // No yield: the finisher should still be inside finish() when the next two calls come.
    while (a.pending() != 0) std::atomic_signal_fence(std::memory_order_seq_cst);
    js.run(a, {"second"}, [&second_done, second_units] {
      spin_for(second_units);
      second_done.store(true, std::memory_order_release);
    });
    js.run_after(a, b, {"continuation"}, [&] {
      if (!second_done.load(std::memory_order_acquire)) early.fetch_add(1);
      started.fetch_add(1);
    });
    js.wait(b);
    js.wait(a);
  }
  EXPECT_EQ(started.load(), rounds);
  return early.load();
}

// Stretches the window between a counter reaching zero and its finisher handing out the
// continuations, where the early start happened: a few microseconds, so the main thread's next
// run() and run_after() land inside it in most rounds instead of a few in 10,000.
void linger_after_zero() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(8);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct ZeroHook {
  ZeroHook() { detail::set_zero_hook_for_tests(&linger_after_zero); }
  ~ZeroHook() { detail::set_zero_hook_for_tests(nullptr); }
};

// A counter whose jobs are all done may be destroyed at once, even while the job that brought it
// to zero is still finishing (handing out continuations): the destructor waits for that finisher
// instead of calling it a bug. Found by the frame-graph bench, which destroys counters it did
// not wait on after their pending count read zero.
TEST_P(Stress, ACounterAtZeroMayBeDestroyedWhileItsFinisherIsStillFinishing) {
  if (GetParam() == Mode::Single) GTEST_SKIP() << "single mode finishes jobs inline";
  JobSystem js(test::pinned_job_config(GetParam(), 2));
  struct LongLinger {
    static void hook() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }
  };
  Counter outer;
  for (int round = 0; round < 3; ++round) {
    std::optional<Counter> counter(std::in_place);
    detail::set_zero_hook_for_tests(&LongLinger::hook);
    js.run(*counter, {"leaf"}, [] {});
    // Not wait(): poll the public count, as code that only needs the result does.
    while (counter->pending() != 0) std::this_thread::yield();
    counter.reset();  // the finisher is asleep inside its hook, 20 ms before its last touch
    detail::set_zero_hook_for_tests(nullptr);
    js.run(outer, {"after"}, [] {});
    js.wait(outer);
  }
}

// run_after() waits for the jobs pending on its dependency when it is called, also when the
// counter reached zero and rose again just before: more workers than cores so that finishers
// are preempted inside finish(), counters reused across rounds, jobs of random length; then the
// same with the finisher held inside that window on purpose. Driven from the main thread and
// from a thread outside the pool (in Static mode only the latter: the main thread's mailbox
// runs only while it waits, and this loop polls instead).
TEST_P(Stress, ContinuationWaitsForJobsAddedAfterItsDependencyReachedZero) {
  JobSystem js(test::pinned_job_config(GetParam(), 4));
  // oneTBB's task_group wait costs ~5x ours per round here: fewer rounds, the same coverage.
  const int base = GetParam() == Mode::Tbb ? 1000 : 5000;
  const int rounds = static_cast<int>(base * test::stress_scale()) + 200;
  for (const bool held : {false, true}) {
    std::optional<ZeroHook> hook;
    if (held) hook.emplace();
    if (GetParam() != Mode::Static) {
      EXPECT_EQ(race_continuations(js, rounds, 1), 0)
          << "continuations started early (main thread, finisher held: " << held << ")";
    }
#if SPINDLE_THREADS
    int early_outside = -1;
    std::thread driver([&] { early_outside = race_continuations(js, rounds, 2); });
    driver.join();
    EXPECT_EQ(early_outside, 0) << "continuations started early (outside thread, finisher held: "
                                << held << ")";
#endif
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, Stress, ::testing::ValuesIn(test::available_modes()),
                         test::mode_name);

#if SPINDLE_THREADS
TEST(StressThreads, SeveralOutsideSubmittersWithNestedWaits) {
  JobSystem js(test::pinned_job_config(Mode::Dynamic, 0));
  constexpr int kThreads = 4;
  const int per_thread = static_cast<int>(20000 * test::stress_scale()) + 100;
  std::atomic<int> ran{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Counter outer;
      for (int i = 0; i < per_thread / 10; ++i) {
        js.run(outer, {"outer"}, [&] {
          Counter inner;
          for (int c = 0; c < 9; ++c) js.run(inner, {"inner"}, [&] { ran.fetch_add(1); });
          js.wait(inner);
          ran.fetch_add(1);
        });
      }
      js.wait(outer);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ran.load(), kThreads * (per_thread / 10) * 10);
}
#endif

}  // namespace
}  // namespace spindle::jobs
