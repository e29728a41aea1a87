// Busy work of a known length for the job-time tests: spin(ns) runs about ns and returns how long
// it really ran, by the steady clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace spindle::test {

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

inline std::uint64_t spin(std::uint64_t ns) {
  const std::uint64_t start = now_ns();
  std::uint64_t t = start;
  while (t - start < ns) t = now_ns();
  return t - start;
}

}  // namespace spindle::test
