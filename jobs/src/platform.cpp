#include "platform.h"

#include <cstring>

#if SPINDLE_THREADS && defined(__linux__)
#include <pthread.h>
#include <sched.h>
#define SPINDLE_JOBS_AFFINITY 1
#else
#define SPINDLE_JOBS_AFFINITY 0
#endif

#if SPINDLE_THREADS
#include <thread>
#endif

namespace spindle::jobs::detail {

#if SPINDLE_JOBS_AFFINITY
static_assert(sizeof(cpu_set_t) <= sizeof(SavedAffinity::mask));

std::uint32_t available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<std::uint32_t>(count);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? hw : 1;
}

bool pin_current_thread(std::uint32_t index) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  const int count = CPU_COUNT(&allowed);
  if (count <= 0) return false;
  std::uint32_t wanted = index % static_cast<std::uint32_t>(count);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (wanted-- == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      return pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
    }
  }
  return false;
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
#else
std::uint32_t available_cpus() {
#if SPINDLE_THREADS
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? hw : 1;
#else
  return 1;
#endif
}
bool pin_current_thread(std::uint32_t) {
  return false;
}
SavedAffinity save_affinity() {
  return {};
}
void restore_affinity(const SavedAffinity&) {}
#endif

}  // namespace spindle::jobs::detail
