// Background load for the load test (--background N[:steady|bursty]): N busy threads in a child
// process, at normal priority, beside the measured frames. Contention then becomes a reproducible
// experiment instead of an accident of what else the machine was doing.
//
// Usage:
//
//   BackgroundSpec spec;
//   if (auto s = parse_background("2:bursty", spec); !s) fail(s.message());
//   Background load(spec, seed);     // forks the child, its threads stopped
//   load.resume();                   // runs: around each series' warm-up and measured frames
//   load.pause();                    // stopped (SIGSTOP) while the harness sets up and reports
//
// steady threads spin without pause; bursty threads alternate runs and sleeps of 1-20 ms each,
// drawn from a seeded generator, the way a compile's short-lived processes load a machine. The
// child dies with the parent (PR_SET_PDEATHSIG) and on destruction.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <spindle/base/result.h>

namespace spindle::loadtest {

enum class BackgroundKind : std::uint8_t { Steady, Bursty };

struct BackgroundSpec {
  std::uint32_t threads = 0;  // 0: no background load
  BackgroundKind kind = BackgroundKind::Steady;
  // "none", "2:steady", "1:bursty": as --background takes it and the report shows it.
  std::string label() const;
};

// Parses "N", "N:steady" or "N:bursty" (N from 0 to 256); an error names what was expected.
core::Status parse_background(std::string_view text, BackgroundSpec& out);

class Background {
 public:
  // Starts the child process with its threads stopped; nothing when spec.threads is 0. A failure
  // to fork is returned by status() and leaves the object inert.
  Background(const BackgroundSpec& spec, std::uint64_t seed);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  const core::Status& status() const { return status_; }
  void resume();
  void pause();

 private:
  BackgroundSpec spec_;
  pid_t child_ = -1;
  bool running_ = false;
  core::Status status_;
};

}  // namespace spindle::loadtest
