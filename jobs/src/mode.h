// The interface every job mode implements, and the factories of the four implementations.
// Private to jobs/. The shared core (scheduler.h) owns the job slots, counters and statistics and
// asks the current mode only what differs: where a runnable job goes, where a participant finds
// its next one, how a wait helps and how a parallel_for is split.
//
//   single_mode.cpp   no threads: a job runs as soon as it is runnable
//   static_mode.cpp   round-robin mailboxes, even parallel_for split, no stealing
//   dynamic_mode.cpp  Chase-Lev deques, stealing, injection queue, recursive split
//   tbb_mode.cpp      oneTBB task groups
#pragma once

#include <cstdint>
#include <memory>

#include "spindle/jobs/job_system.h"

namespace spindle::jobs::detail {

class Scheduler;
class WorkerPool;
struct RangeTask;

class ModeImpl {
 public:
  virtual ~ModeImpl() = default;

  virtual Mode mode() const = 0;
  virtual StagePolicy stage_policy() const = 0;
  // Called by set_mode() (and construction) when this mode becomes the current one: starts what
  // it runs on the first time (threads, oneTBB); kept afterwards, across switches.
  virtual void activate() {}

  // A free job slot for `self` (current_worker()), or null. The default takes it from the
  // participant's pool (outside threads: the shared one); when that is full and `may_help`, a
  // participant in user code runs its own queued jobs (pop_own()) and reuses their slots.
  virtual Job* acquire(std::uint32_t self, bool may_help);
  // Makes a runnable job run: queues it, or runs it here.
  virtual void push(Job* job, std::uint32_t self) = 0;
  // Returns once `counter` is done (not yet done when called), running jobs meanwhile if it can.
  virtual void wait(Counter& counter, std::uint32_t self) = 0;
  // Submits the jobs of a parallel_for over [task.begin, task.end); `grain` as the caller gave it.
  virtual void submit_range(RangeTask& task, std::size_t grain, std::uint32_t self) = 0;
  // How many jobs a parallel_for whose items are handed out in order (JobDesc::in_order) gets:
  // the participants that could run one now. The default: every participant.
  virtual std::uint32_t range_jobs(std::uint32_t self) const;

  // Threaded modes. The oldest job queued for `self` alone, or null.
  virtual Job* pop_own(std::uint32_t /*self*/) { return nullptr; }
  // The next job for participant `self` to run (its own, dealt or stolen), or null.
  virtual Job* find_work(std::uint32_t /*self*/) { return nullptr; }
  // Whether find_work(self) could return something now (an idle participant's cheap check).
  virtual bool has_work(std::uint32_t /*self*/) const { return false; }
  // The same for a participant waiting on a counter (help_until): it may help more widely.
  virtual Job* find_work_waiting(std::uint32_t self) { return find_work(self); }
  virtual bool has_work_waiting(std::uint32_t self) const { return has_work(self); }
  // Whether any job is queued anywhere in this mode.
  virtual bool any_queued() const { return false; }
  // A participant found work after idling (dynamic mode passes a wake on from here).
  virtual void found_work_after_idle(std::uint32_t /*self*/) {}

 protected:
  explicit ModeImpl(Scheduler& scheduler) : scheduler_(scheduler) {}
  Scheduler& scheduler_;
};

std::unique_ptr<ModeImpl> make_single_mode(Scheduler& scheduler);
#if SPINDLE_THREADS
std::unique_ptr<ModeImpl> make_static_mode(Scheduler& scheduler, WorkerPool& workers);
std::unique_ptr<ModeImpl> make_dynamic_mode(Scheduler& scheduler, WorkerPool& workers);
#endif
#if SPINDLE_WITH_TBB
std::unique_ptr<ModeImpl> make_tbb_mode(Scheduler& scheduler, WorkerPool& workers);
#endif

}  // namespace spindle::jobs::detail
