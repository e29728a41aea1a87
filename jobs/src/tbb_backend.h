// Mode::Tbb: the same jobs, counters and dependencies, executed by oneTBB, so that benchmarks and
// load tests can put a well-known scheduler beside ours. Private to jobs/.
//
// Each Counter that has jobs in this mode gets a tbb::task_group, created on first use and kept
// in Counter::backend_ until the counter is destroyed, so a counter reused every frame allocates
// once. wait() waits on that group (oneTBB's waiting thread helps run tasks, so nested waits work).
// Job slots for oneTBB's own threads come from pools handed out one per thread.
#pragma once

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <memory>

#include "scheduler.h"

namespace spindle::jobs::detail {

class TbbBackend {
 public:
  explicit TbbBackend(Scheduler& scheduler);
  ~TbbBackend();

  Job* acquire();
  void push(Job* job);
  void wait(Counter& counter);

 private:
  tbb::task_group& group_for(Counter* counter);

  Scheduler& scheduler_;
  std::uint64_t id_;
  tbb::global_control parallelism_;
  tbb::task_group detached_;
  std::unique_ptr<JobPool[]> pools_;
  std::unique_ptr<std::byte[]> memory_;
  std::atomic<std::uint32_t> next_pool_{0};
  std::uint32_t pool_count_ = 0;
};

}  // namespace spindle::jobs::detail
