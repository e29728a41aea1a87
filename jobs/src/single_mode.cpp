// Mode::Single: no worker threads. A job runs on the thread that makes it runnable, at once: a
// submitted job inside run(), a continuation inside the job that finished its dependency. So jobs
// run in submission order and a wait() has nothing left to do. The only mode of a build without
// threads; with threads, it still keeps the workers (if any were started) asleep.
#include <cstdlib>

#include "scheduler.h"

namespace spindle::jobs::detail {
namespace {

class SingleMode final : public ModeImpl {
 public:
  explicit SingleMode(Scheduler& scheduler) : ModeImpl(scheduler) {}

  Mode mode() const override { return Mode::Single; }
  StagePolicy stage_policy() const override { return {false, false, 0, false}; }

  void push(Job* job, std::uint32_t self) override { scheduler_.execute(job, self); }

  void wait(Counter& counter, std::uint32_t /*self*/) override {
#if SPINDLE_THREADS
    // Only another thread's jobs can still be running (an outside thread runs its own inline).
    scheduler_.wait_spinning(counter);
#else
    (void)counter;
    scheduler_.log(LogLevel::Error,
                   "wait() on a counter that can never finish: in Single mode jobs run when "
                   "submitted, so it waits on a run_after() whose dependency never completes");
    std::abort();
#endif
  }

  // One job for the whole range: the caller's loop, with the job's hooks and timing.
  void submit_range(RangeTask& task, std::size_t /*grain*/, std::uint32_t /*self*/) override {
    spawn_range(task);
  }
  std::uint32_t range_jobs(std::uint32_t /*self*/) const override {
    return 1;
  }
};

}  // namespace

std::unique_ptr<ModeImpl> make_single_mode(Scheduler& scheduler) {
  return std::make_unique<SingleMode>(scheduler);
}

}  // namespace spindle::jobs::detail
