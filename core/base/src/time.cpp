#include <spindle/base/time.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <ctime>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <spindle/base/assert.h>

#include <algorithm>
#include <thread>

namespace spindle::core {

std::uint64_t monotonic_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

namespace {

#if defined(CLOCK_PROCESS_CPUTIME_ID)
// Reads a CPU clock in nanoseconds; false when the clock cannot be read (a thread that ended).
bool read_clock(clockid_t clock, std::uint64_t& ns) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return false;
  ns = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
       static_cast<std::uint64_t>(ts.tv_nsec);
  return true;
}
#endif

}  // namespace

std::uint64_t process_cpu_ns() {
  std::uint64_t ns = 0;
#if defined(CLOCK_PROCESS_CPUTIME_ID)
  if (!read_clock(CLOCK_PROCESS_CPUTIME_ID, ns)) return 0;
#endif
  return ns;
}

namespace {

#if defined(__linux__)
// The kernel's CPU clock of thread `tid` (glibc's pthread_getcpuclockid() makes the same id:
// the tid's complement, shifted, with the per-thread and scheduler-clock bits).
clockid_t thread_clock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid)) << 3 | 6u);
}

// A directory entry as getdents64 returns it (linux_dirent64).
struct DirEntry {
  std::uint64_t inode;
  std::int64_t offset;
  unsigned short length;
  unsigned char type;
  char name[1];
};
#endif

}  // namespace

CoresBusyProbe::CoresBusyProbe(std::uint64_t interval_ns)
    : interval_ns_(interval_ns), cores_(std::max(1u, std::thread::hardware_concurrency())) {}

CoresBusyProbe::~CoresBusyProbe() {
#if defined(__linux__)
  if (fd_ >= 0) close(fd_);
#endif
}

void CoresBusyProbe::sample(std::uint64_t now_ns) {
  if (sampled_ && now_ns - last_ns_ < interval_ns_) return;
  sampled_ = true;
  last_ns_ = now_ns;
#if defined(__linux__)
  if (fd_ < 0) fd_ = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return;
  // "0.52 0.58 0.59 3/467 12345": the fourth field's first number is the threads runnable now.
  char text[128];
  const ssize_t n = pread(fd_, text, sizeof text - 1, 0);
  if (n <= 0) return;
  text[n] = '\0';
  const char* c = text;
  for (int field = 0; field < 3 && *c != '\0'; ++field) {
    while (*c != '\0' && *c != ' ') ++c;
    while (*c == ' ') ++c;
  }
  std::uint32_t runnable = 0;
  bool digits = false;
  for (; *c >= '0' && *c <= '9' && runnable < 1'000'000; ++c) {
    runnable = runnable * 10 + static_cast<std::uint32_t>(*c - '0');
    digits = true;
  }
  if (digits && *c == '/') add(runnable);
#endif
}

void CoresBusyProbe::add(std::uint32_t runnable) {
  ring_[count_ % kWindow] = runnable > 0 ? runnable - 1 : 0;               // less the caller
  count_ = count_ + 1 >= 2 * kWindow ? count_ + 1 - kWindow : count_ + 1;  // never wraps
}

std::uint32_t CoresBusyProbe::others() const {
  if (count_ < kWindow) return 0;
  return *std::min_element(ring_, ring_ + kWindow);
}

bool CoresBusyProbe::busy() const {
  return count_ >= kWindow && others() >= cores_;
}

ProcessCpuTimer::~ProcessCpuTimer() {
#if defined(__linux__)
  if (task_dir_ >= 0) close(task_dir_);
#endif
}

void ProcessCpuTimer::list_threads() {
  count_ = 0;
#if defined(__linux__)
  // /proc/self/task read with getdents64 rather than opendir(): no heap, since the engine lists
  // between frames. Opened once and read again from its start: every read lists the threads
  // alive then.
  const pid_t pid = getpid();
  if (task_dir_ >= 0 && (task_dir_pid_ != pid || lseek(task_dir_, 0, SEEK_SET) != 0)) {
    close(task_dir_);
    task_dir_ = -1;
  }
  if (task_dir_ < 0) {
    task_dir_ = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    task_dir_pid_ = pid;
    if (task_dir_ < 0) return;
  }
  const int fd = task_dir_;
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  alignas(8) char buffer[4096];
  for (;;) {
    const long n = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      DirEntry entry;
      std::memcpy(&entry, buffer + at, offsetof(DirEntry, name));
      const char* name = buffer + at + offsetof(DirEntry, name);
      at += entry.length;
      pid_t tid = 0;
      bool digits = *name != '\0';
      for (const char* c = name; *c != '\0' && digits; ++c) {
        digits = *c >= '0' && *c <= '9';
        tid = tid * 10 + (*c - '0');
      }
      if (!digits || tid == self) continue;
      if (count_ + 1 < kMaxThreads) clocks_[count_++] = thread_clock(tid);
    }
  }
  clocks_[count_++] = thread_clock(self);  // last: see start() and elapsed_ns()
#endif
}

void ProcessCpuTimer::start() {
  process_start_ = process_cpu_ns();
#if defined(__linux__)
  for (std::uint32_t i = 0; i < count_; ++i) started_[i] = read_clock(clocks_[i], start_ns_[i]);
#endif
}

std::uint64_t ProcessCpuTimer::elapsed_ns() {
  if (count_ == 0) {
    const std::uint64_t now = process_cpu_ns();
    return now > process_start_ ? now - process_start_ : 0;
  }
  std::uint64_t sum = 0;
#if defined(__linux__)
  for (std::uint32_t i = count_; i-- > 0;) {
    std::uint64_t now = 0;
    if (started_[i] && read_clock(clocks_[i], now) && now > start_ns_[i]) sum += now - start_ns_[i];
  }
#endif
  return sum;
}

GameClock::GameClock(std::int64_t fixed_step_ns, std::int64_t max_delta_ns)
    : fixed_step_ns_(fixed_step_ns), max_delta_ns_(max_delta_ns) {
  SPINDLE_ASSERT(fixed_step_ns > 0, "GameClock fixed step is positive");
  SPINDLE_ASSERT(max_delta_ns > 0, "GameClock max delta is positive");
}

std::int64_t GameClock::advance(std::int64_t real_delta_ns) {
  ++frame_;
  std::int64_t delta = 0;
  if (paused_) {
    if (step_requested_) delta = fixed_step_ns_;
    step_requested_ = false;
  } else {
    std::int64_t real = real_delta_ns < 0 ? 0 : real_delta_ns;
    if (real > max_delta_ns_) real = max_delta_ns_;
    if (time_scale_ == 1.0) {
      delta = real;
    } else {
      double scaled = static_cast<double>(real) * time_scale_ + scale_remainder_;
      delta = static_cast<std::int64_t>(scaled);
      scale_remainder_ = scaled - static_cast<double>(delta);
    }
  }
  delta_ns_ = delta;
  time_ns_ += delta;
  return delta;
}

FixedStep::FixedStep(std::int64_t step_ns, std::uint32_t max_steps)
    : step_ns_(step_ns), max_steps_(max_steps) {
  SPINDLE_ASSERT(step_ns > 0, "FixedStep step is positive");
  SPINDLE_ASSERT(max_steps > 0, "FixedStep allows at least one step per frame");
}

std::uint32_t FixedStep::add(std::int64_t delta_ns) {
  // Saturate: a huge delta fed to a bare FixedStep must not overflow the accumulator (the
  // max_steps clamp below drops the excess anyway).
  if (delta_ns > 0) {
    accumulator_ns_ =
        delta_ns > INT64_MAX - accumulator_ns_ ? INT64_MAX : accumulator_ns_ + delta_ns;
  }
  std::int64_t steps = accumulator_ns_ / step_ns_;
  if (steps > static_cast<std::int64_t>(max_steps_)) {
    // Keep the sub-step remainder so alpha stays continuous; drop whole steps beyond the cap.
    std::int64_t excess = (steps - max_steps_) * step_ns_;
    dropped_ns_ = excess > INT64_MAX - dropped_ns_ ? INT64_MAX : dropped_ns_ + excess;
    accumulator_ns_ -= excess;
    steps = max_steps_;
    ++clamped_frames_;
  }
  accumulator_ns_ -= steps * step_ns_;
  total_steps_ += static_cast<std::uint64_t>(steps);
  return static_cast<std::uint32_t>(steps);
}

}  // namespace spindle::core
