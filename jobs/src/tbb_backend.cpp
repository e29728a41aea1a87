#include "tbb_backend.h"

#include <oneapi/tbb/task_arena.h>

#include <thread>

namespace spindle::jobs::detail {
namespace {

// A thread's pool, valid while `owner` is the id of the live backend. Ids, not addresses: a new
// backend can be allocated where a destroyed one was, and oneTBB's threads outlive both.
struct PoolBinding {
  std::uint64_t owner = 0;
  JobPool* pool = nullptr;
};
thread_local PoolBinding t_pool;
std::atomic<std::uint64_t> g_next_backend_id{1};

void release_group(void* group) {
  auto* g = static_cast<tbb::task_group*>(group);
  g->wait();  // the last task may still be unwinding after it finished our counter
  delete g;
}

}  // namespace

TbbBackend::TbbBackend(Scheduler& scheduler)
    : scheduler_(scheduler),
      id_(g_next_backend_id.fetch_add(1, std::memory_order_relaxed)),
      parallelism_(tbb::global_control::max_allowed_parallelism, scheduler.workers()) {
  pool_count_ = scheduler.workers() * 2;
  const std::uint32_t slots = 1024;
  const std::size_t pool_bytes = std::size_t{slots} * scheduler.job_stride();
  memory_ = std::make_unique<std::byte[]>(pool_count_ * pool_bytes + kCacheLine);
  std::byte* base = memory_.get();
  base += (kCacheLine - reinterpret_cast<std::uintptr_t>(base) % kCacheLine) % kCacheLine;
  pools_ = std::make_unique<JobPool[]>(pool_count_);
  for (std::uint32_t i = 0; i < pool_count_; ++i) {
    pools_[i].init(base + i * pool_bytes, slots, scheduler.job_stride());
  }
}

TbbBackend::~TbbBackend() {
  detached_.wait();
}

Job* TbbBackend::acquire() {
  if (t_pool.owner != id_) {
    // First submission from this thread in this backend: bind it to a pool of its own.
    const std::uint32_t index = next_pool_.fetch_add(1, std::memory_order_relaxed);
    t_pool = {id_, index < pool_count_ ? &pools_[index] : nullptr};
  }
  return t_pool.pool != nullptr ? t_pool.pool->try_acquire() : nullptr;
}

tbb::task_group& TbbBackend::group_for(Counter* counter) {
  if (counter == nullptr) return detached_;
  std::atomic_ref<void*> slot(counter->backend_);
  void* group = slot.load(std::memory_order_acquire);
  if (group == nullptr) {
    auto* created = new tbb::task_group;
    if (slot.compare_exchange_strong(group, created, std::memory_order_acq_rel)) {
      counter->release_backend_ = &release_group;
      group = created;
    } else {
      delete created;
    }
  }
  return *static_cast<tbb::task_group*>(group);
}

void TbbBackend::push(Job* job) {
  group_for(job->counter).run([this, job] {
    const int index = tbb::this_task_arena::current_thread_index();
    scheduler_.execute(job, index >= 0 ? static_cast<std::uint32_t>(index) : kExternalThread, 0);
  });
}

void TbbBackend::wait(Counter& counter) {
  std::atomic_ref<void*> slot(counter.backend_);
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

}  // namespace spindle::jobs::detail
