// Private machinery of the job system that its templates need inline: the layout of a job slot.
// Not part of the API; a game never names anything in here. Included by job_system.h after
// JobDesc, which a slot holds.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace spindle::jobs {

class Counter;

namespace detail {

struct Job;
using InvokeFn = void (*)(Job& job);

// A job slot. Lives in a participant's pool, or on the stack when run inline; the callable is
// constructed right after the header, inside the same slot, and never moves.
struct alignas(64) Job {
  InvokeFn invoke = nullptr;
  Counter* counter = nullptr;
  Job* next = nullptr;  // link in a counter's continuation list
  JobDesc desc{};
  // 0 free, 1 in use. The owner pool takes a slot; whoever finishes the job frees it (release).
  std::atomic<std::uint32_t> state{0};
  std::uint32_t flags = 0;
  // While in a counter's continuation list: how many times that counter had reached zero when
  // the job was attached. It is released when the count moves past this value.
  std::uint16_t epoch = 0;
  // A job with several dependencies: links still to release it (see kJobLink).
  std::atomic<std::uint32_t> joins{0};
  // Its id in a job-graph recording (0: submitted while none was recording).
  std::uint32_t record_id = 0;

  std::byte* capture() { return reinterpret_cast<std::byte*>(this) + sizeof(Job); }

  // Constructs `fn` in the slot (capture() must have room) and fills the header.
  template <class Fn, class F>
  void prepare(Counter* counter_of_job, const JobDesc& job_desc, F&& fn) {
    invoke = &invoke_capture<Fn>;
    counter = counter_of_job;
    desc = job_desc;
    ::new (static_cast<void*>(capture())) Fn(static_cast<F&&>(fn));
  }

  template <class Fn>
  static void invoke_capture(Job& job) {
    Fn& fn = *std::launder(reinterpret_cast<Fn*>(job.capture()));
    struct Destroy {
      Fn& fn;
      ~Destroy() { fn.~Fn(); }
    } destroy{fn};
    fn();
  }
};

inline constexpr std::uint32_t kJobPooled = 1u;  // slot of a JobPool: freed by Job::state
inline constexpr std::uint32_t kJobHeap = 2u;    // emergency continuation: freed with delete
// Run at once by its submitter (JobSystem::set_active_workers(1)): its counter was never raised,
// so finishing it does not lower it either (an exception still reaches the counter).
inline constexpr std::uint32_t kJobAtOnce = 8u;
// Not a job: stands in one dependency's continuation list for a job with several dependencies;
// its capture holds that job's address. Releasing it counts down Job::joins.
inline constexpr std::uint32_t kJobLink = 4u;

static_assert(sizeof(Job) == 64, "a job header is one cache line; the capture follows it");

// A job slot on the stack, for a job run at once on the calling thread: the same layout as a
// pooled one, so the same code runs it.
template <class Fn>
struct alignas(64) StackJob {
  Job header;
  alignas(Fn) std::byte storage[sizeof(Fn)];
};

// A heap slot for a continuation that found no pool slot: it must wait for its dependency, and
// waiting in its place could deadlock (a job that run_after()s its own counter).
Job* allocate_heap_job(std::size_t capture_bytes);

}  // namespace detail
}  // namespace spindle::jobs
