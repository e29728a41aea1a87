// The stretch of clip time a frame played, shared by the jobs that look at a time range
// (TrackTriggeringJob, RootMotionJob) (internal to anim/src).
//
// `from` and `to` are unwrapped: to = from + dt * speed, so to < from plays backwards and a looping
// range may run past the duration (or below 0) any number of times up to kMaxPlaybackLoops. The
// range is cut into one piece per pass over the clip, in playback order; a piece's clip-local
// times lie in [0, duration], begin -> end in the playback direction.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <spindle/base/result.h>

namespace spindle::anim::detail {

// A frame that plays a clip this many times over is a caller's bug, not playback.
inline constexpr double kMaxPlaybackLoops = 1024.0;

struct PlaybackPiece {
  std::int64_t cycle = 0;  // pass over the clip; clip-local time t is unwrapped cycle * D + t
  double begin = 0.0;
  double end = 0.0;
};

inline core::Status check_playback(const char* job, float from, float to, float duration,
                                   bool loop) {
  if (!std::isfinite(from) || !std::isfinite(to))
    return core::Status::error(std::string(job) + ": non-finite from or to");
  if (loop && std::abs(static_cast<double>(to) - from) > kMaxPlaybackLoops * duration)
    return core::Status::error(std::string(job) + ": range covers more than 1024 loops");
  return {};
}

// Calls f(piece) for every pass the range touches, empty pieces at cycle boundaries included (a
// boundary may carry an event). Without loop: one piece, both ends clamped to [0, duration].
template <class F>
void for_each_piece(float from, float to, float duration, bool loop, F&& f) {
  const double d = duration;
  if (!loop) {
    f(PlaybackPiece{0, std::clamp<double>(from, 0.0, d), std::clamp<double>(to, 0.0, d)});
    return;
  }
  const double a = from, b = to;
  const auto first = static_cast<std::int64_t>(std::floor(a / d));
  const auto last = static_cast<std::int64_t>(std::floor(b / d));
  const std::int64_t step = b >= a ? 1 : -1;
  for (std::int64_t k = first;; k += step) {
    const double base = static_cast<double>(k) * d;
    const double lo = std::max(std::min(a, b), base), hi = std::min(std::max(a, b), base + d);
    if (step > 0)
      f(PlaybackPiece{k, lo - base, hi - base});
    else
      f(PlaybackPiece{k, hi - base, lo - base});
    if (k == last) break;
  }
}

}  // namespace spindle::anim::detail
