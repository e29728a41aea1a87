// Mode::Static: the source thesis's job system made lock-free. Every job is dealt round-robin
// into one participant's mailbox and runs there (no stealing between running workers); a
// parallel_for is split evenly, one chunk per participant (four, if it starts alone). A
// participant waiting on a counter takes back jobs still queued in others' mailboxes, so a
// sleeping or descheduled worker does not hold its share hostage. Participant 0 runs its mailbox
// only while it waits (or while a spawn has filled its pool), so others deal to it only then, and
// it hands back what is left when it stops waiting.
#include <algorithm>

#include "scheduler.h"
#include "worker_pool.h"

namespace spindle::jobs::detail {
namespace {

class StaticMode final : public ModeImpl {
 public:
  StaticMode(Scheduler& scheduler, WorkerPool& workers)
      : ModeImpl(scheduler),
        workers_(workers),
        count_(scheduler.workers()),
        lanes_(std::make_unique<Lane[]>(count_)) {
    for (std::uint32_t i = 0; i < count_; ++i) {
      for (MpmcQueue& mailbox : lanes_[i].mailbox) mailbox.init(scheduler.pool_size());
      lanes_[i].round_robin = i + 1;
    }
  }

  Mode mode() const override { return Mode::Static; }
  StagePolicy stage_policy() const override { return {false, false, 1, false}; }
  void activate() override { workers_.start(); }

  void push(Job* job, std::uint32_t self) override {
    const std::uint32_t q = priority_index(job->desc.priority);
    // Participant 0 runs its mailbox only while it waits: deal to it only then (or when it deals).
    const bool to_all = self == 0 || count_ == 1 || main_waiting_.load(std::memory_order_seq_cst);
    const std::uint32_t turn = self < count_
                                   ? lanes_[self].round_robin++
                                   : external_round_robin_.fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t target = to_all ? turn % count_ : 1 + turn % (count_ - 1);
    if (!lanes_[target].mailbox[q].push(job)) {
      scheduler_.note_overflow("the target worker's mailbox is full", job->desc);
      scheduler_.execute(job, self);
      return;
    }
    full_fence();
    if (target == 0 && self != 0 && !main_waiting_.load(std::memory_order_seq_cst)) {
      // Participant 0 stopped waiting meanwhile and may have drained its mailbox already: take
      // back what is there (whoever pops a job re-deals it; the queue gives each job to one).
      redeal_main_mailbox();
    }
    if (target != self) workers_.wake_if_parked(target);
  }

  void wait(Counter& counter, std::uint32_t self) override {
    if (self >= count_) {
      scheduler_.wait_spinning(counter);
      return;
    }
    if (self == 0 && main_wait_depth_++ == 0) main_waiting_.store(true, std::memory_order_seq_cst);
    workers_.help_until(counter, self, *this);
    if (self == 0 && --main_wait_depth_ == 0) {
      main_waiting_.store(false, std::memory_order_seq_cst);
      full_fence();
      redeal_main_mailbox();
    }
  }

  // Even split, one chunk per participant (fewer if the grain asks for bigger chunks); the
  // round-robin dealer gives each participant exactly one of consecutive chunks. A range started
  // alone (Config::skip_wakes_for_short_ranges) is cut kAlonePiecesPerWorker chunks per
  // participant: its caller, which runs them all while it holds the wakes, then has a chunk's end
  // early on at which to wake the others if the range turns out long.
  void submit_range(RangeTask& task, std::size_t grain, std::uint32_t self) override {
    const std::size_t begin = task.begin;
    const std::size_t total = task.end - task.begin;
    const std::size_t targets = self == 0 || count_ == 1 ? count_ : count_ - 1;
    const std::size_t per_target = workers_.holding_wakes_here() ? kAlonePiecesPerWorker : 1;
    std::size_t chunks = targets * per_target;
    if (grain > 0) chunks = std::clamp<std::size_t>(total / grain, 1, chunks);
    chunks = std::min(chunks, total);
    for (std::size_t c = 0; c < chunks; ++c) {
      task.begin = begin + total * c / chunks;
      task.end = begin + total * (c + 1) / chunks;
      task.grain = task.end - task.begin;
      spawn_range(task);
    }
  }

  // One per participant the dealer deals to (as submit_range's chunks).
  std::uint32_t range_jobs(std::uint32_t self) const override {
    return self == 0 || count_ == 1 ? count_ : count_ - 1;
  }

  Job* pop_own(std::uint32_t self) override { return find_work(self); }

  Job* find_work(std::uint32_t self) override {
    for (MpmcQueue& mailbox : lanes_[self].mailbox) {
      if (Job* job = mailbox.pop()) return job;
    }
    return nullptr;
  }

  bool has_work(std::uint32_t self) const override {
    const Lane& me = lanes_[self];
    return !me.mailbox[0].maybe_empty() || !me.mailbox[1].maybe_empty();
  }

  // A participant that waits with its own mailbox empty takes back a job still queued in
  // another's: nobody has started it, and its worker may be asleep (a futex wake takes 10-100 us
  // on a VM) or descheduled by another program. The split stays even and dealt round-robin; a
  // share just cannot be stranded behind a worker that is not running.
  Job* find_work_waiting(std::uint32_t self) override {
    if (Job* job = find_work(self)) return job;
    for (std::uint32_t k = 1; k < count_; ++k) {
      const std::uint32_t other = (self + k) % count_;
      for (MpmcQueue& mailbox : lanes_[other].mailbox) {
        if (Job* job = mailbox.pop()) return job;
      }
    }
    return nullptr;
  }
  bool has_work_waiting(std::uint32_t /*self*/) const override { return any_queued(); }

  bool any_queued() const override {
    for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
      for (std::uint32_t i = 0; i < count_; ++i) {
        if (!lanes_[i].mailbox[q].maybe_empty()) return true;
      }
    }
    return false;
  }

 private:
  struct alignas(kCacheLine) Lane {
    MpmcQueue mailbox[kPriorityCount];  // by priority_index()
    std::uint32_t round_robin = 0;      // dealing (owner only)
  };

  // Deals participant 0's mailbox out to the workers.
  void redeal_main_mailbox() {
    if (count_ == 1) return;  // no one else to run them; participant 0 will, when it waits
    for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
      while (Job* job = lanes_[0].mailbox[q].pop()) {
        const std::uint32_t turn = external_round_robin_.fetch_add(1, std::memory_order_relaxed);
        const std::uint32_t target = 1 + turn % (count_ - 1);
        if (!lanes_[target].mailbox[q].push(job)) {
          scheduler_.execute(job, scheduler_.current_worker());
          continue;
        }
        full_fence();
        workers_.wake_if_parked(target);
      }
    }
  }

  WorkerPool& workers_;
  const std::uint32_t count_;
  std::unique_ptr<Lane[]> lanes_;
  std::atomic<std::uint32_t> external_round_robin_{0};
  // Participant 0 is inside wait() (so others may deal to its mailbox).
  std::atomic<bool> main_waiting_{false};
  std::uint32_t main_wait_depth_ = 0;  // participant 0 only
};

}  // namespace

std::unique_ptr<ModeImpl> make_static_mode(Scheduler& scheduler, WorkerPool& workers) {
  return std::make_unique<StaticMode>(scheduler, workers);
}

}  // namespace spindle::jobs::detail
