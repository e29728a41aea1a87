// Mode::Tbb: the same jobs, counters and dependencies, executed by oneTBB, so that benchmarks and
// load tests can put a well-known scheduler beside ours.
//
// Each Counter that has jobs in this mode gets a tbb::task_group, created on first use and kept
// in the counter's state until the counter is destroyed, so a counter reused every frame
// allocates once. wait() waits on that group (oneTBB's waiting thread helps run tasks, so nested
// waits work). Job slots for oneTBB's own threads come from pools handed out one per thread.
// oneTBB itself is set up the first time the mode is activated.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <optional>
#include <thread>

#include "scheduler.h"
#include "worker_pool.h"

namespace spindle::jobs::detail {
namespace {

// A thread's pool, valid while `owner` is the id of the live mode. Ids, not addresses: a new
// mode object can be allocated where a destroyed one was, and oneTBB's threads outlive both.
struct PoolBinding {
  std::uint64_t owner = 0;
  JobPool* pool = nullptr;
};
thread_local PoolBinding t_pool;
std::atomic<std::uint64_t> g_next_id{1};

void release_group(void* group) {
  auto* g = static_cast<tbb::task_group*>(group);
  g->wait();  // the last task may still be unwinding after it finished our counter
  delete g;
}

class TbbMode final : public ModeImpl {
 public:
  TbbMode(Scheduler& scheduler, WorkerPool& workers) : ModeImpl(scheduler), workers_(workers) {}
  ~TbbMode() override {
    if (detached_) detached_->wait();
  }

  Mode mode() const override { return Mode::Tbb; }
  StagePolicy stage_policy() const override { return {true, false, kOversplit, false}; }

  void activate() override {
    if (detached_) return;
    // oneTBB creates its threads from the current thread's affinity mask: unpin first.
    workers_.unpin_main();
    id_ = g_next_id.fetch_add(1, std::memory_order_relaxed);
    parallelism_.emplace(tbb::global_control::max_allowed_parallelism, scheduler_.workers());
    detached_.emplace();
    pool_count_ = scheduler_.workers() * 2;
    const std::uint32_t slots = 1024;
    const std::size_t pool_bytes = std::size_t{slots} * scheduler_.job_stride();
    memory_ = std::make_unique<std::byte[]>(pool_count_ * pool_bytes + kCacheLine);
    std::byte* base = memory_.get();
    base += (kCacheLine - reinterpret_cast<std::uintptr_t>(base) % kCacheLine) % kCacheLine;
    pools_ = std::make_unique<JobPool[]>(pool_count_);
    for (std::uint32_t i = 0; i < pool_count_; ++i) {
      pools_[i].init(base + i * pool_bytes, slots, scheduler_.job_stride());
    }
    workers_.repin_main();
  }

  // oneTBB's threads (not participant 0) take slots from pools of their own.
  Job* acquire(std::uint32_t self, bool may_help) override {
    if (self != 0) {
      if (t_pool.owner != id_) {
        // First submission from this thread in this mode: bind it to a pool of its own.
        const std::uint32_t index = next_pool_.fetch_add(1, std::memory_order_relaxed);
        t_pool = {id_, index < pool_count_ ? &pools_[index] : nullptr};
      }
      if (t_pool.pool != nullptr) {
        if (Job* job = t_pool.pool->try_acquire()) return job;
      }
    }
    return ModeImpl::acquire(self, may_help);
  }

  void push(Job* job, std::uint32_t /*self*/) override {
    group_for(job->counter).run([this, job] {
      const int index = tbb::this_task_arena::current_thread_index();
      scheduler_.execute(job, index >= 0 ? static_cast<std::uint32_t>(index) : kExternalThread);
    });
  }

  void wait(Counter& counter, std::uint32_t /*self*/) override {
    std::atomic_ref<void*> slot(state_of(counter).backend);
    while (!counter.done()) {
      if (void* group = slot.load(std::memory_order_acquire)) {
        static_cast<tbb::task_group*>(group)->wait();
      }
      // A continuation not yet released by its dependency is not in the group yet.
      if (!counter.done()) std::this_thread::yield();
    }
    // The task that finished the counter may still be returning through the scheduler: join it,
    // so that nothing of ours is in use once wait() returns.
    if (void* group = slot.load(std::memory_order_acquire)) {
      static_cast<tbb::task_group*>(group)->wait();
    }
  }

  void submit_range(RangeTask& task, std::size_t grain, std::uint32_t /*self*/) override {
    scheduler_.split_recursively(task, grain);
  }

 private:
  tbb::task_group& group_for(Counter* counter) {
    if (counter == nullptr) return *detached_;
    CounterState& state = state_of(*counter);
    std::atomic_ref<void*> slot(state.backend);
    void* group = slot.load(std::memory_order_acquire);
    if (group == nullptr) {
      auto* created = new tbb::task_group;
      if (slot.compare_exchange_strong(group, created, std::memory_order_acq_rel)) {
        state.release_backend = &release_group;
        group = created;
      } else {
        delete created;
      }
    }
    return *static_cast<tbb::task_group*>(group);
  }

  WorkerPool& workers_;
  std::uint64_t id_ = 0;
  std::optional<tbb::global_control> parallelism_;
  std::optional<tbb::task_group> detached_;
  std::unique_ptr<JobPool[]> pools_;
  std::unique_ptr<std::byte[]> memory_;
  std::atomic<std::uint32_t> next_pool_{0};
  std::uint32_t pool_count_ = 0;
};

}  // namespace

std::unique_ptr<ModeImpl> make_tbb_mode(Scheduler& scheduler, WorkerPool& workers) {
  return std::make_unique<TbbMode>(scheduler, workers);
}

}  // namespace spindle::jobs::detail
