// Mode::Dynamic: work stealing. Each participant pushes the jobs it submits onto its own Chase-Lev
// deque and pops them back newest first (warm data); an idle participant steals the oldest job of
// a random victim. Threads outside the pool submit through an injection queue. A parallel_for
// halves recursively, so thieves take the biggest pieces. High-priority jobs have deques of their
// own, looked at first while any is queued.
#include "scheduler.h"
#include "worker_pool.h"

namespace spindle::jobs::detail {
namespace {

constexpr std::uint32_t kHigh = priority_index(Priority::High);
constexpr std::uint32_t kNormal = priority_index(Priority::Normal);

std::uint32_t xorshift(std::uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

class DynamicMode final : public ModeImpl {
 public:
  DynamicMode(Scheduler& scheduler, WorkerPool& workers)
      : ModeImpl(scheduler),
        workers_(workers),
        count_(scheduler.workers()),
        lanes_(std::make_unique<Lane[]>(count_)) {
    for (std::uint32_t i = 0; i < count_; ++i) {
      for (WorkDeque& deque : lanes_[i].deque) deque.init(scheduler.pool_size());
      lanes_[i].rng = 0x9e3779b9u * (i + 1);
    }
    for (MpmcQueue& queue : injection_) queue.init(scheduler.pool_size());
  }

  Mode mode() const override { return Mode::Dynamic; }
  StagePolicy stage_policy() const override { return {true, true, 0, true}; }
  void activate() override { workers_.start(); }

  void push(Job* job, std::uint32_t self) override {
    const std::uint32_t q = priority_index(job->desc.priority);
    if (q == kHigh) high_queued_.fetch_add(1, std::memory_order_relaxed);
    bool queued = self < count_ && lanes_[self].deque[q].push(job);
    if (!queued) queued = injection_[q].push(job);
    if (!queued) {
      if (q == kHigh) high_queued_.fetch_sub(1, std::memory_order_relaxed);
      scheduler_.note_overflow("the deque and the injection queue are full", job->desc);
      scheduler_.execute(job, self);
      return;
    }
    // Publish-then-check: pairs with the parker's fence in WorkerPool::idle(). A spinning
    // participant will find the job; only when none spins does the submitter pay for a wake.
    full_fence();
    if (workers_.sleeper_unnoticed()) workers_.wake_one(self);
  }

  void wait(Counter& counter, std::uint32_t self) override {
    if (self >= count_) {
      scheduler_.wait_spinning(counter);
      return;
    }
    workers_.help_until(counter, self, *this);
    // A wake meant for the queues may have reached us while our counter finished: pass it on.
    if (workers_.idle_worker_asleep() && any_queued()) workers_.wake_one(self);
  }

  void submit_range(RangeTask& task, std::size_t grain, std::uint32_t /*self*/) override {
    scheduler_.split_recursively(task, grain);
  }
  // Only the active participants are handed work.
  std::uint32_t range_jobs(std::uint32_t /*self*/) const override {
    return scheduler_.active_workers();
  }

  // The oldest of our own deque (its top, as a thief takes it): the slot after the last one we
  // took, where the pool looks next.
  Job* pop_own(std::uint32_t self) override {
    for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
      WorkDeque& deque = lanes_[self].deque[q];
      if (deque.maybe_empty()) continue;
      if (Job* job = deque.steal()) {
        if (q == kHigh) high_queued_.fetch_sub(1, std::memory_order_relaxed);
        return job;
      }
    }
    return nullptr;
  }

  Job* find_work(std::uint32_t self) override {
    Lane& me = lanes_[self];
    // Not active: it only finishes what it queued itself (others may steal that too).
    if (!workers_.active(self)) {
      for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
        if (Job* job = me.deque[q].pop()) {
          if (q == kHigh) high_queued_.fetch_sub(1, std::memory_order_relaxed);
          return job;
        }
      }
      return nullptr;
    }
    if (high_queued_.load(std::memory_order_relaxed) > 0) {
      Job* job = me.deque[kHigh].pop();
      if (job == nullptr) job = injection_[kHigh].pop();
      if (job == nullptr) job = steal(self, kHigh);
      if (job != nullptr) {
        high_queued_.fetch_sub(1, std::memory_order_relaxed);
        return job;
      }
    }
    if (Job* job = me.deque[kNormal].pop()) return job;
    if (Job* job = injection_[kNormal].pop()) return job;
    return steal(self, kNormal);
  }

  bool has_work(std::uint32_t self) const override {
    if (workers_.active(self)) return any_queued();
    const Lane& me = lanes_[self];
    return !me.deque[kHigh].maybe_empty() || !me.deque[kNormal].maybe_empty();
  }

  bool any_queued() const override {
    for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
      if (!injection_[q].maybe_empty()) return true;
      for (std::uint32_t i = 0; i < count_; ++i) {
        if (!lanes_[i].deque[q].maybe_empty()) return true;
      }
    }
    return false;
  }

  // First job after idling: more queued and nobody looking for it? Wake a sleeper from here, so
  // the submitter paid for at most one wake (a wake tree rather than a storm of syscalls).
  void found_work_after_idle(std::uint32_t self) override {
    if (workers_.sleeper_unnoticed() && any_queued()) workers_.wake_one(self);
  }

 private:
  struct alignas(kCacheLine) Lane {
    WorkDeque deque[kPriorityCount];  // by priority_index()
    std::uint32_t rng = 0;            // victim selection (owner only)
  };

  Job* steal(std::uint32_t self, std::uint32_t priority) {
    if (count_ <= 1) return nullptr;
    const std::uint32_t start = xorshift(lanes_[self].rng) % count_;
    for (std::uint32_t k = 0; k < count_; ++k) {
      const std::uint32_t victim = (start + k) % count_;
      if (victim == self) continue;
      WorkDeque& deque = lanes_[victim].deque[priority];
      if (deque.maybe_empty()) continue;
      if (Job* job = deque.steal()) {
        scheduler_.count_steal(self);
        return job;
      }
    }
    return nullptr;
  }

  WorkerPool& workers_;
  const std::uint32_t count_;
  std::unique_ptr<Lane[]> lanes_;
  MpmcQueue injection_[kPriorityCount];  // outside threads' jobs, by priority_index()
  // Jobs queued at High priority anywhere: lets finders skip scanning other deques for them.
  std::atomic<std::int64_t> high_queued_{0};
};

}  // namespace

std::unique_ptr<ModeImpl> make_dynamic_mode(Scheduler& scheduler, WorkerPool& workers) {
  return std::make_unique<DynamicMode>(scheduler, workers);
}

}  // namespace spindle::jobs::detail
