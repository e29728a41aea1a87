#include "spindle/platform/run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <spindle/base/log.h>
#include <spindle/engine/engine.h>

namespace spindle::platform {

RunStats run(core::Engine& engine, Window* window, const std::function<PixelView()>& picture,
             const RunConfig& config) {
  using Clock = std::chrono::steady_clock;
  RunStats stats;
  std::vector<double> times(RunStats::kWindow, 0.0);  // a ring of frame times (ms), made once
  const std::string base_title = window != nullptr ? window->title() : std::string();
  char title[256];
  auto last = Clock::now();
  auto next_deadline = last;
  auto title_since = last;
  std::uint64_t title_frames = 0;
  while (!engine.quit_requested() && (config.max_frames == 0 || stats.frames < config.max_frames)) {
    const auto now = Clock::now();
    const std::int64_t real_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count();
    last = now;
    engine.frame(config.fixed_delta_ns > 0 ? config.fixed_delta_ns
                                           : (stats.frames == 0 ? 0 : real_ns));
    if (window != nullptr && picture) {
      if (core::Status s = window->present(picture()); !s) {
        if (stats.present_errors++ == 0)
          SPINDLE_LOG_ERROR(Core, "run: %s (logged once)", s.message().c_str());
      }
    }
    // Pacing: vsync already waited in present(); otherwise sleep to the target rate.
    if (config.target_fps > 0 && (window == nullptr || !window->vsync())) {
      next_deadline += std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / config.target_fps));
      const auto after = Clock::now();
      if (next_deadline > after) {
        std::this_thread::sleep_until(next_deadline);
      } else {
        next_deadline = after;  // late: do not try to catch up with a burst of frames
      }
    }
    const auto end = Clock::now();
    times[stats.frames % RunStats::kWindow] =
        std::chrono::duration<double, std::milli>(end - now).count();
    ++stats.frames;
    ++title_frames;
    if (window != nullptr && config.fps_in_title && end - title_since >= std::chrono::seconds(1)) {
      const double seconds = std::chrono::duration<double>(end - title_since).count();
      std::snprintf(title, sizeof title, "%s - %.0f FPS", base_title.c_str(),
                    static_cast<double>(title_frames) / seconds);
      window->set_title(title);
      title_since = end;
      title_frames = 0;
    }
  }
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(stats.frames, RunStats::kWindow));
  if (n > 0) {
    times.resize(n);
    std::sort(times.begin(), times.end());
    stats.median_ms = n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    stats.p99_ms = times[std::min(n - 1, static_cast<std::size_t>(0.99 * static_cast<double>(n)))];
  }
  return stats;
}

}  // namespace spindle::platform
