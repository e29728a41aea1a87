#include <spindle/anim/float_track.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "playback_range.h"

namespace spindle::anim {
namespace {

using core::Status;
using std::to_string;

// Index of the first key at or after t (keys.size() if none).
std::size_t first_key_at_or_after(std::span<const FloatKey> keys, double t) {
  return static_cast<std::size_t>(
      std::partition_point(keys.begin(), keys.end(),
                           [t](const FloatKey& k) { return static_cast<double>(k.time) < t; }) -
      keys.begin());
}

float sample(const FloatTrack& track, float time) {
  const std::span<const FloatKey> keys = track.keys();
  const auto after = std::upper_bound(keys.begin(), keys.end(), time,
                                      [](float t, const FloatKey& k) { return t < k.time; });
  if (after == keys.begin()) return keys.front().value;
  if (after == keys.end()) return keys.back().value;
  const FloatKey& k0 = *(after - 1);
  if (track.interpolation() == FloatInterpolation::Step) return k0.value;
  const float f = (time - k0.time) / (after->time - k0.time);
  return k0.value + (after->value - k0.value) * f;
}

struct Crossing {
  bool found = false;
  TrackEdge edge{};
};

// The crossing between keys i and i + 1, if any (at most one: the value is monotonic there).
Crossing crossing(const FloatTrack& track, std::size_t i, float threshold) {
  const FloatKey& k0 = track.keys()[i];
  const FloatKey& k1 = track.keys()[i + 1];
  const bool rising = k0.value <= threshold && threshold < k1.value;
  const bool falling = k0.value > threshold && threshold >= k1.value;
  if (!rising && !falling) return {};
  if (track.interpolation() == FloatInterpolation::Step) return {true, {k1.time, rising}};
  const float f = (threshold - k0.value) / (k1.value - k0.value);
  return {true, {std::clamp(k0.time + f * (k1.time - k0.time), k0.time, k1.time), rising}};
}

}  // namespace

core::Result<FloatTrack> FloatTrack::create(std::string name, float duration,
                                            std::vector<FloatKey> keys,
                                            FloatInterpolation interpolation) {
  const std::string where = "float track '" + name + "'";
  if (!std::isfinite(duration) || duration <= 0.0f)
    return Status::error(where + ": duration " + to_string(duration) + " must be finite and > 0");
  if (keys.empty()) return Status::error(where + ": no keys");
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::string key = where + " key " + to_string(k);
    const float t = keys[k].time;
    if (!std::isfinite(t)) return Status::error(key + ": time is not finite");
    if (t < 0.0f || t > duration)
      return Status::error(key + ": time " + to_string(t) + " outside [0, " + to_string(duration) +
                           "]");
    if (k > 0 && !(t > keys[k - 1].time))
      return Status::error(key + ": times not strictly increasing");
    if (!std::isfinite(keys[k].value)) return Status::error(key + ": value is not finite");
  }
  FloatTrack track;
  track.name_ = std::move(name);
  track.duration_ = duration;
  track.keys_ = std::move(keys);
  track.interpolation_ = interpolation;
  return track;
}

Status FloatTrackSamplingJob::validate() const {
  if (track == nullptr || track->keys().empty())
    return Status::error("FloatTrackSamplingJob: no track (or a default-constructed one)");
  if (output == nullptr) return Status::error("FloatTrackSamplingJob: no output");
  if (!std::isfinite(time)) return Status::error("FloatTrackSamplingJob: time is not finite");
  return {};
}

Status FloatTrackSamplingJob::run() const {
  if (Status s = validate(); !s) return s;
  *output = sample(*track, time);
  return {};
}

Status TrackTriggeringJob::validate() const {
  if (track == nullptr || track->keys().empty())
    return Status::error("TrackTriggeringJob: no track (or a default-constructed one)");
  if (count == nullptr || overflowed == nullptr)
    return Status::error("TrackTriggeringJob: count and overflowed outputs are required");
  if (!std::isfinite(threshold)) return Status::error("TrackTriggeringJob: threshold not finite");
  return detail::check_playback("TrackTriggeringJob", from, to, track->duration(), loop);
}

Status TrackTriggeringJob::run() const {
  if (Status s = validate(); !s) return s;
  const std::span<const FloatKey> keys = track->keys();
  const std::size_t segments = keys.size() - 1;
  const double duration = track->duration();
  const bool forward = to >= from;
  // The range in unwrapped time, as the job's contract states it: [lo, hi) forward, (lo, hi]
  // backward.
  double lo = std::min<double>(from, to), hi = std::max<double>(from, to);
  if (!loop) lo = std::clamp(lo, 0.0, duration), hi = std::clamp(hi, 0.0, duration);
  // A clamped track's end (forward) or start (backward) is reached once, in the frame that
  // arrives there.
  const bool end_closed = !loop && forward && hi == duration && lo < duration;
  const bool start_closed = !loop && !forward && lo == 0.0 && hi > 0.0;
  const auto inside = [&](double u) {
    if (forward) return (lo <= u && u < hi) || (end_closed && u == hi);
    return (lo < u && u <= hi) || (start_closed && u == lo);
  };

  std::size_t written = 0;
  bool full = false;
  // False once the output is full (the caller stops).
  const auto report = [&](std::int64_t cycle, const TrackEdge& e) {
    if (!inside(static_cast<double>(cycle) * duration + e.time)) return true;
    if (written == edges.size()) {
      full = true;
      return false;
    }
    edges[written++] = {e.time, forward ? e.rising : !e.rising};
    return true;
  };
  // Where a looping track jumps from its last value back to its first.
  const bool last_above = keys.back().value > threshold;
  const bool wrap_edge = loop && last_above != (keys.front().value > threshold);
  const TrackEdge wrap{0.0f, !last_above};

  detail::for_each_piece(from, to, track->duration(), loop, [&](const detail::PlaybackPiece& p) {
    if (full) return;
    const double a = std::min(p.begin, p.end), b = std::max(p.begin, p.end);
    // Segments whose crossing could lie in [a, b]: from the one ending at or after a to the one
    // starting at or before b.
    const std::size_t first = std::max<std::size_t>(first_key_at_or_after(keys, a), 1) - 1;
    const std::size_t end = std::min(first_key_at_or_after(keys, std::nextafter(b, 1e300)),
                                     segments);  // one past the last segment starting <= b
    if (forward) {
      if (wrap_edge && !report(p.cycle, wrap)) return;
      for (std::size_t i = first; i < end; ++i)
        if (const Crossing c = crossing(*track, i, threshold); c.found && !report(p.cycle, c.edge))
          return;
    } else {
      for (std::size_t i = end; i-- > first;)
        if (const Crossing c = crossing(*track, i, threshold); c.found && !report(p.cycle, c.edge))
          return;
      if (wrap_edge && !report(p.cycle, wrap)) return;
    }
  });
  *count = written;
  *overflowed = full;
  return {};
}

}  // namespace spindle::anim
