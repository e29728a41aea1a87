#include "platform.h"

#include <algorithm>
#include <cstring>

#if SPINDLE_THREADS && defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define SPINDLE_JOBS_AFFINITY 1
#else
#define SPINDLE_JOBS_AFFINITY 0
#endif

#if SPINDLE_THREADS
#include <thread>
#endif

namespace spindle::jobs::detail {

TickClock::TickClock() : start_(sample()) {}

TickClock::Sample TickClock::sample() {
  Sample best{0, 0};
  std::uint64_t best_gap = ~std::uint64_t{0};
  for (int k = 0; k < 5; ++k) {
    const std::uint64_t before = ticks();
    const std::uint64_t ns = now_ns();
    const std::uint64_t after = ticks();
    const std::uint64_t gap = after - before;
    if (gap < best_gap) {  // a read that was not interrupted brackets the time tightly
      best_gap = gap;
      best = {before + gap / 2, ns};
    }
  }
  return best;
}

double TickClock::calibrate() const {
  while (now_ns() - start_.ns < kCalibrationNs) {
  }
  const Sample end = sample();
  const double measured = static_cast<double>(end.ns - start_.ns) /
                          static_cast<double>(end.tick > start_.tick ? end.tick - start_.tick : 1);
  // The first to finish fixes it; everyone uses that one.
  double expected = 0;
  if (fixed_.compare_exchange_strong(expected, measured, std::memory_order_acq_rel))
    return measured;
  return expected;
}

const TickClock& process_clock() {
  static const TickClock clock;
  return clock;
}
namespace {
[[maybe_unused]] const TickClock& g_clock_at_start = process_clock();
}  // namespace

#if SPINDLE_JOBS_AFFINITY
static_assert(sizeof(cpu_set_t) <= sizeof(SavedAffinity::mask));

namespace {

ProcessCpus read_thread_cpus() {
  ProcessCpus out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &set)) continue;
      if (out.count < kMaxWorkers) out.ids[out.count] = static_cast<std::uint32_t>(cpu);
      ++out.count;
    }
  }
  if (out.count == 0) {
    const unsigned hw = std::thread::hardware_concurrency();
    out.count = hw > 0 ? hw : 1;
    for (std::uint32_t i = 0; i < out.count && i < kMaxWorkers; ++i) out.ids[i] = i;
  } else {
    std::memcpy(out.mask.mask, &set, sizeof(set));
    out.mask.valid = true;
  }
  return out;
}

}  // namespace

const ProcessCpus& process_cpus() {
  // Read by the first call, which the initialiser below makes before main() (or a JobSystem
  // built by another static initialiser makes earlier); the same answer ever after.
  static const ProcessCpus cpus = read_thread_cpus();
  return cpus;
}

namespace {
[[maybe_unused]] const ProcessCpus& g_read_at_start = process_cpus();
}  // namespace

void unpin_current_thread() {
  restore_affinity(process_cpus().mask);
}

std::uint32_t thread_cpus_among(const ProcessCpus& cpus, bool* allowed) {
  const std::uint32_t n = std::min(cpus.count, kMaxWorkers);
  cpu_set_t set;
  CPU_ZERO(&set);
  const bool known = pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0;
  std::uint32_t count = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    allowed[k] = !known || (cpus.ids[k] < CPU_SETSIZE && CPU_ISSET(cpus.ids[k], &set));
    count += allowed[k] ? 1 : 0;
  }
  return count;
}

bool pin_current_thread(std::uint32_t cpu) {
  if (cpu >= CPU_SETSIZE) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
}

SavedAffinity save_affinity() {
  SavedAffinity saved;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0) {
    std::memcpy(saved.mask, &set, sizeof(set));
    saved.valid = true;
  }
  return saved;
}

void restore_affinity(const SavedAffinity& saved) {
  if (!saved.valid) return;
  cpu_set_t set;
  std::memcpy(&set, saved.mask, sizeof(set));
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void park_on(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  timespec timeout{};
  timespec* limit = nullptr;
  if (timeout_ns >= 0) {
    timeout.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
    timeout.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
    limit = &timeout;
  }
  // The kernel compares *word with expected under its lock: a wake between our caller's check
  // and this call makes it return at once (EAGAIN), which is what prevents a lost wake-up.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, limit,
          nullptr, 0);
}

void unpark_one(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

void set_precise_timers() {
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

#else
#if SPINDLE_THREADS
void park_on(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t) {
  word.wait(expected, std::memory_order_acquire);
}
void unpark_one(std::atomic<std::uint32_t>& word) {
  word.notify_one();
}
#else
void park_on(std::atomic<std::uint32_t>&, std::uint32_t, std::int64_t) {}
void unpark_one(std::atomic<std::uint32_t>&) {}
#endif
void set_precise_timers() {}

const ProcessCpus& process_cpus() {
  static const ProcessCpus cpus = [] {
    ProcessCpus out;
#if SPINDLE_THREADS
    const unsigned hw = std::thread::hardware_concurrency();
    out.count = hw > 0 ? hw : 1;
#else
    out.count = 1;
#endif
    for (std::uint32_t i = 0; i < out.count && i < kMaxWorkers; ++i) out.ids[i] = i;
    return out;
  }();
  return cpus;
}
std::uint32_t thread_cpus_among(const ProcessCpus& cpus, bool* allowed) {
  const std::uint32_t n = cpus.count < kMaxWorkers ? cpus.count : kMaxWorkers;
  for (std::uint32_t k = 0; k < n; ++k) allowed[k] = true;
  return n;
}
bool pin_current_thread(std::uint32_t) {
  return false;
}
void unpin_current_thread() {}
SavedAffinity save_affinity() {
  return {};
}
void restore_affinity(const SavedAffinity&) {}
#endif

}  // namespace spindle::jobs::detail
