// User float tracks: keyframed values over a clip's time that are not joints (a foot's contact
// weight, a hand's grip, a footstep volume). FloatTrackSamplingJob reads one at a time;
// TrackTriggeringJob reports where it crosses a threshold during a frame's stretch of playback,
// so "left foot down" becomes an event instead of a polled value.
//
// Usage:
//
//   spindle::core::Result<spindle::anim::FloatTrack> contact = spindle::anim::FloatTrack::create(
//       "left_foot", 1.0f, {{0.0f, 1.0f}, {0.4f, 1.0f}, {0.5f, 0.0f}, {0.9f, 0.0f}, {1.0f, 1.0f}});
//   float weight = 0.0f;
//   spindle::anim::FloatTrackSamplingJob sample{.track = &contact.value(), .time = t,
//                                               .output = &weight};
//   std::array<spindle::anim::TrackEdge, 8> edges;
//   std::size_t count = 0;
//   bool overflowed = false;
//   spindle::anim::TrackTriggeringJob trigger{.track = &contact.value(), .from = previous_time,
//                                             .to = previous_time + dt * speed,
//                                             .threshold = 0.5f, .edges = edges,
//                                             .count = &count, .overflowed = &overflowed};
//   if (trigger.run()) for (const auto& e : std::span(edges).first(count)) on_edge(e);
//
// Edges are where "value > threshold" changes: rising when it becomes true, falling when it
// becomes false. Linear tracks cross between keys (a crossing exactly at a key is reported once);
// step tracks change at the key that brings the new value. A looping track also changes at the
// wrap when its last and first values are on different sides (reported at time 0).
//
// The range: `to` is unwrapped (from + dt * speed). Forward (to >= from) reports edges at times in
// [from, to); backward reports those in (to, from], latest first and with rising / falling
// swapped (the value is seen the other way round). Consecutive frames therefore report every edge
// exactly once. A non-looping track clamps both ends to [0, duration] and reports an edge at the
// very end (or start, backwards) once, in the frame that reaches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <spindle/base/result.h>

namespace spindle::anim {

struct FloatKey {
  float time = 0.0f;  // seconds from the clip start
  float value = 0.0f;
};

enum class FloatInterpolation : std::uint8_t {
  Linear,  // straight line between keys
  Step,    // hold a key's value until the next key
};

// Immutable runtime track; before its first key and after its last it holds the end value.
class FloatTrack {
 public:
  FloatTrack() = default;

  // Rejects: non-finite or non-positive duration, no keys, times that are not finite, outside
  // [0, duration] or not strictly increasing, non-finite values.
  static core::Result<FloatTrack> create(
      std::string name, float duration, std::vector<FloatKey> keys,
      FloatInterpolation interpolation = FloatInterpolation::Linear);

  const std::string& name() const { return name_; }
  float duration() const { return duration_; }
  std::span<const FloatKey> keys() const { return keys_; }
  FloatInterpolation interpolation() const { return interpolation_; }

 private:
  std::string name_;
  float duration_ = 0.0f;
  std::vector<FloatKey> keys_;
  FloatInterpolation interpolation_ = FloatInterpolation::Linear;
};

struct FloatTrackSamplingJob {
  // Must outlive the job.
  const FloatTrack* track = nullptr;
  // Seconds from the clip start; clamped to the keys.
  float time = 0.0f;
  // Written by run().
  float* output = nullptr;

  core::Status validate() const;
  core::Status run() const;
};

// One threshold crossing.
struct TrackEdge {
  // Clip time of the crossing, in [0, duration].
  float time = 0.0f;
  // In the playback direction: true when the value rose above the threshold.
  bool rising = false;
};

struct TrackTriggeringJob {
  // Must outlive the job.
  const FloatTrack* track = nullptr;
  // The frame's playback: clip time before it and from + dt * speed (unwrapped, see the top).
  float from = 0.0f;
  float to = 0.0f;
  // Wrap around the duration (at most 1024 times in one range); false clamps to [0, duration].
  bool loop = true;
  // Finite.
  float threshold = 0.5f;
  // Caller-owned room for the edges, filled in playback order.
  std::span<TrackEdge> edges{};
  // Written by run(): edges written, and whether more edges were in the range than fit (those
  // written are the earliest in playback order).
  std::size_t* count = nullptr;
  bool* overflowed = nullptr;

  core::Status validate() const;
  core::Status run() const;
};

}  // namespace spindle::anim
