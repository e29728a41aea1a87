#include "background.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace spindle::loadtest {
namespace {

constexpr std::uint32_t kMaxThreads = 256;

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

struct ThreadArgs {
  BackgroundKind kind;
  std::uint64_t rng;
};
ThreadArgs g_args[kMaxThreads];

// splitmix64: a seeded, allocation-free generator that is safe to use after fork().
std::uint64_t next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 1 to 20 ms, uniformly.
std::uint64_t burst_ns(std::uint64_t& state) {
  return 1'000'000 + next(state) % 19'000'001;
}

void spin_for(std::uint64_t ns) {
  const std::uint64_t until = monotonic_ns() + ns;
  volatile std::uint64_t sink = 0;
  while (monotonic_ns() < until) {
    for (int i = 0; i < 256; ++i) sink = sink + static_cast<std::uint64_t>(i);
  }
}

void* busy_thread(void* arg) {
  ThreadArgs& a = *static_cast<ThreadArgs*>(arg);
  for (;;) {
    if (a.kind == BackgroundKind::Steady) {
      spin_for(1'000'000'000);
      continue;
    }
    spin_for(burst_ns(a.rng));
    const std::uint64_t sleep = burst_ns(a.rng);
    timespec ts{static_cast<time_t>(sleep / 1'000'000'000),
                static_cast<long>(sleep % 1'000'000'000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
  }
  return nullptr;
}

// The child: its threads, then nothing. It is forked before the harness starts any thread of its
// own, and uses only what is safe after fork() (no allocation, no locks of the parent's).
[[noreturn]] void child_main(const BackgroundSpec& spec, std::uint64_t seed, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);  // the parent died before the line above took effect
  for (std::uint32_t i = 0; i < spec.threads; ++i) {
    g_args[i] = ThreadArgs{spec.kind, seed ^ (0x632be59bd9b4e019ull * (i + 1))};
    pthread_t t;
    if (pthread_create(&t, nullptr, busy_thread, &g_args[i]) != 0) _exit(3);
  }
  for (;;) pause();
}

}  // namespace

std::string BackgroundSpec::label() const {
  if (threads == 0) return "none";
  return std::to_string(threads) + (kind == BackgroundKind::Steady ? ":steady" : ":bursty");
}

core::Status parse_background(std::string_view text, BackgroundSpec& out) {
  const std::string expected =
      "expected N, N:steady or N:bursty with N from 0 to " + std::to_string(kMaxThreads);
  const std::size_t colon = text.find(':');
  const std::string_view count = text.substr(0, colon);
  BackgroundSpec spec;
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), spec.threads);
  if (count.empty() || ec != std::errc() || end != count.data() + count.size() ||
      spec.threads > kMaxThreads)
    return core::Status::error(expected + ", got '" + std::string(text) + "'");
  if (colon != std::string_view::npos) {
    const std::string_view kind = text.substr(colon + 1);
    if (kind == "steady") {
      spec.kind = BackgroundKind::Steady;
    } else if (kind == "bursty") {
      spec.kind = BackgroundKind::Bursty;
    } else {
      return core::Status::error(expected + ", got '" + std::string(text) + "' (unknown kind '" +
                                 std::string(kind) + "')");
    }
  }
  out = spec;
  return {};
}

Background::Background(const BackgroundSpec& spec, std::uint64_t seed) : spec_(spec) {
  if (spec.threads == 0) return;
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    status_ = core::Status::error(std::string("--background: fork failed: ") + strerror(errno));
    return;
  }
  if (child == 0) child_main(spec, seed, parent);
  child_ = child;
  // Stopped until the first resume(); its threads start then (SIGSTOP stops the whole process).
  kill(child_, SIGSTOP);
  int status = 0;
  waitpid(child_, &status, WUNTRACED);
}

Background::~Background() {
  if (child_ <= 0) return;
  kill(child_, SIGKILL);
  int status = 0;
  waitpid(child_, &status, 0);
}

void Background::resume() {
  if (child_ <= 0 || running_) return;
  kill(child_, SIGCONT);
  running_ = true;
}

void Background::pause() {
  if (child_ <= 0 || !running_) return;
  kill(child_, SIGSTOP);
  int status = 0;
  waitpid(child_, &status, WUNTRACED);
  running_ = false;
}

}  // namespace spindle::loadtest
