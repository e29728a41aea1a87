// User float tracks: key validation, linear / step sampling, and threshold edges over a frame's
// playback range (exact times, crossings at keys, loops, backwards, a full output span).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <spindle/anim/float_track.h>

namespace spindle::anim {
namespace {

FloatTrack make(std::vector<FloatKey> keys,
                FloatInterpolation interpolation = FloatInterpolation::Linear,
                float duration = 1.0f) {
  core::Result<FloatTrack> r = FloatTrack::create("t", duration, std::move(keys), interpolation);
  EXPECT_TRUE(r) << r.message();
  return std::move(r.value());
}

struct Edges {
  std::vector<TrackEdge> edges;
  bool overflowed = false;
};

Edges trigger(const FloatTrack& track, float from, float to, bool loop = true,
              std::size_t room = 64, float threshold = 0.5f) {
  std::vector<TrackEdge> out(room);
  std::size_t count = 99;
  bool overflowed = true;
  const TrackTriggeringJob job{.track = &track,
                               .from = from,
                               .to = to,
                               .loop = loop,
                               .threshold = threshold,
                               .edges = out,
                               .count = &count,
                               .overflowed = &overflowed};
  const core::Status s = job.run();
  EXPECT_TRUE(s) << s.message();
  out.resize(count);
  return {out, overflowed};
}

void expect_edges(const Edges& got, std::vector<TrackEdge> want, const char* why = "") {
  SCOPED_TRACE(why);
  constexpr float eps = 1e-6f;
  ASSERT_EQ(got.edges.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.edges[i].time, want[i].time, eps) << "edge " << i;
    EXPECT_EQ(got.edges[i].rising, want[i].rising) << "edge " << i;
  }
}

float sample(const FloatTrack& track, float time) {
  float out = -1.0f;
  EXPECT_TRUE((FloatTrackSamplingJob{.track = &track, .time = time, .output = &out}).run());
  return out;
}

// Contact: up from 0.1 (crossing 0.5 at 0.1), down through 0.5 at 0.55.
const std::vector<FloatKey> kContact = {{0, 0}, {0.2f, 1}, {0.5f, 1}, {0.6f, 0}, {1, 0}};

TEST(FloatTrack, CreateRejectsBadKeys) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(FloatTrack::create("t", 1, {}));
  EXPECT_FALSE(FloatTrack::create("t", 1, {{0.5f, 0}, {0.2f, 1}})) << "unsorted";
  EXPECT_FALSE(FloatTrack::create("t", 1, {{0.5f, 0}, {0.5f, 1}})) << "same time twice";
  EXPECT_FALSE(FloatTrack::create("t", 1, {{0, nan}})) << "NaN value";
  EXPECT_FALSE(FloatTrack::create("t", 1, {{nan, 0}})) << "NaN time";
  EXPECT_FALSE(FloatTrack::create("t", 1, {{1.5f, 0}})) << "after the end";
  EXPECT_FALSE(FloatTrack::create("t", 1, {{-0.1f, 0}})) << "before the start";
  EXPECT_FALSE(FloatTrack::create("t", 0, {{0, 0}})) << "zero duration";
  EXPECT_FALSE(FloatTrack::create("t", std::numeric_limits<float>::infinity(), {{0, 0}}));
  const core::Result<FloatTrack> bad = FloatTrack::create("left", 1, {{0.5f, 0}, {0.2f, 1}});
  EXPECT_NE(bad.message().find("left"), std::string::npos) << bad.message();
}

TEST(FloatTrack, SamplesLinearlyOrByStepAndHoldsTheEnds) {
  const FloatTrack linear = make({{0.2f, 1}, {0.6f, 3}});
  EXPECT_EQ(sample(linear, 0.0f), 1.0f);
  EXPECT_EQ(sample(linear, 0.2f), 1.0f);
  EXPECT_NEAR(sample(linear, 0.3f), 1.5f, 1e-6f);
  EXPECT_EQ(sample(linear, 0.6f), 3.0f);
  EXPECT_EQ(sample(linear, 0.9f), 3.0f);
  const FloatTrack step = make({{0.2f, 1}, {0.6f, 3}}, FloatInterpolation::Step);
  EXPECT_EQ(sample(step, 0.3f), 1.0f);
  EXPECT_EQ(sample(step, 0.59f), 1.0f);
  EXPECT_EQ(sample(step, 0.6f), 3.0f);
  float out = 0;
  EXPECT_FALSE((FloatTrackSamplingJob{.track = &linear, .time = NAN, .output = &out}).run());
  EXPECT_FALSE((FloatTrackSamplingJob{.track = &linear, .time = 0}).run()) << "no output";
}

TEST(TrackTriggering, ReportsExactEdgesInTimeOrder) {
  const FloatTrack contact = make(kContact);
  expect_edges(trigger(contact, 0, 1, false), {{0.1f, true}, {0.55f, false}});
  expect_edges(trigger(contact, 0.0f, 0.1f, false), {}, "[from, to): not at to");
  expect_edges(trigger(contact, 0.1f, 0.2f, false), {{0.1f, true}}, "[from, to): at from");
  expect_edges(trigger(contact, 0.2f, 0.5f, false), {});
  const FloatTrack step = make({{0, 0}, {0.25f, 1}, {0.75f, 0}}, FloatInterpolation::Step);
  expect_edges(trigger(step, 0, 1, false), {{0.25f, true}, {0.75f, false}});
  // Other thresholds move the linear crossings.
  expect_edges(trigger(contact, 0, 1, false, 64, 0.25f), {{0.05f, true}, {0.575f, false}});
}

TEST(TrackTriggering, ACrossingAtAKeyIsReportedOnce) {
  // The value reaches the threshold exactly at the key at 0.3, and leaves it upwards there.
  const FloatTrack ramp = make({{0, 0}, {0.3f, 0.5f}, {0.6f, 1}, {1, 1}});
  expect_edges(trigger(ramp, 0, 1, false), {{0.3f, true}});
  expect_edges(trigger(ramp, 0.2f, 0.3f, false), {});
  expect_edges(trigger(ramp, 0.3f, 0.4f, false), {{0.3f, true}});
  // Dipping to the threshold at a key: "above" ends there and starts again there.
  const FloatTrack dip = make({{0, 1}, {0.5f, 0.5f}, {1, 1}});
  expect_edges(trigger(dip, 0, 1, false), {{0.5f, false}, {0.5f, true}});
  // Touching it from below is no crossing (never above).
  const FloatTrack touch = make({{0, 0}, {0.5f, 0.5f}, {1, 0}});
  expect_edges(trigger(touch, 0, 1, false), {});
}

TEST(TrackTriggering, LoopsWrapAndTheWrapItselfCanBeAnEdge) {
  // Rises at 0.25; ends at 1 and starts at 0, so wrapping falls (reported at time 0).
  const FloatTrack saw = make({{0, 0}, {0.5f, 1}, {1, 1}});
  expect_edges(trigger(saw, 0.9f, 1.3f), {{0.0f, false}, {0.25f, true}});
  expect_edges(trigger(saw, 0.9f, 1.0f), {}, "the wrap belongs to the next frame");
  expect_edges(trigger(saw, 1.0f, 1.1f), {{0.0f, false}});
  expect_edges(trigger(saw, 0.0f, 3.0f),
               {{0, false}, {0.25f, true}, {0, false}, {0.25f, true}, {0, false}, {0.25f, true}});
  // A track equal at both ends has no wrap edge; a crossing at the very end is still reported.
  const FloatTrack contact = make(kContact);
  expect_edges(trigger(contact, 0.5f, 1.2f), {{0.55f, false}, {0.1f, true}});
  const FloatTrack falls_at_end = make({{0, 1}, {1, 0.5f}});
  expect_edges(trigger(falls_at_end, 0.9f, 1.1f), {{1.0f, false}, {0.0f, true}});
}

TEST(TrackTriggering, BackwardsPlaybackSeesEdgesReversed) {
  const FloatTrack contact = make(kContact);
  expect_edges(trigger(contact, 0.6f, 0.0f, false), {{0.55f, true}, {0.1f, false}});
  expect_edges(trigger(contact, 0.56f, 0.1f, false), {{0.55f, true}}, "(to, from]: not at to");
  expect_edges(trigger(contact, 0.1f, 0.0f, false), {{0.1f, false}}, "(to, from]: at from");
  const FloatTrack saw = make({{0, 0}, {0.5f, 1}, {1, 1}});
  expect_edges(trigger(saw, 0.3f, -0.1f), {{0.25f, false}, {0.0f, true}});
  expect_edges(trigger(saw, 0.0f, -0.1f), {{0.0f, true}});
  expect_edges(trigger(saw, -0.1f, -0.2f), {});
}

TEST(TrackTriggering, ConsecutiveFramesReportEveryEdgeOnce) {
  const FloatTrack saw = make({{0, 0}, {0.5f, 1}, {1, 1}});
  const FloatTrack contact = make(kContact);
  for (const FloatTrack* track : {&saw, &contact}) {
    for (const float speed : {1.0f, -1.0f}) {
      const Edges whole = trigger(*track, 0.05f, 0.05f + speed * 3.0f);
      std::vector<TrackEdge> frames;
      for (int f = 0; f < 90; ++f) {
        // Unwrapped times, as a player keeps them before wrapping.
        const float from = 0.05f + speed * static_cast<float>(f) * (3.0f / 90.0f);
        const float to = 0.05f + speed * static_cast<float>(f + 1) * (3.0f / 90.0f);
        const Edges e = trigger(*track, from, to);
        frames.insert(frames.end(), e.edges.begin(), e.edges.end());
      }
      expect_edges({frames, false}, whole.edges);
    }
  }
}

TEST(TrackTriggering, ManyEdgesOverflowASmallSpan) {
  // 20 pulses: 39 edges between keys and the fall at the wrap, 40 per loop.
  std::vector<FloatKey> keys;
  for (int i = 0; i < 20; ++i) {
    keys.push_back({0.05f * static_cast<float>(i), 0.0f});
    keys.push_back({0.05f * static_cast<float>(i) + 0.025f, 1.0f});
  }
  const FloatTrack pulses = make(keys, FloatInterpolation::Step);
  const Edges few = trigger(pulses, 0, 1, true, 3);
  EXPECT_TRUE(few.overflowed);
  expect_edges(few, {{0.0f, false}, {0.025f, true}, {0.05f, false}});
  const Edges all = trigger(pulses, 0, 1, true, 40);
  EXPECT_FALSE(all.overflowed);
  EXPECT_EQ(all.edges.size(), 40u);
  EXPECT_TRUE(trigger(pulses, 0, 1, true, 39).overflowed);
  const Edges none = trigger(pulses, 0, 1, true, 0);
  EXPECT_TRUE(none.overflowed);
  EXPECT_TRUE(none.edges.empty());
}

TEST(TrackTriggering, NonLoopingTracksClampAndReportTheEndOnce) {
  const FloatTrack falls_at_end = make({{0, 1}, {1, 0.5f}});
  expect_edges(trigger(falls_at_end, 0.9f, 1.2f, false), {{1.0f, false}});
  expect_edges(trigger(falls_at_end, 1.0f, 1.1f, false), {}, "already there");
  expect_edges(trigger(falls_at_end, 1.0f, 1.0f, false), {});
  const FloatTrack rises_at_start = make({{0, 0.5f}, {1, 1}});
  expect_edges(trigger(rises_at_start, 0.2f, -0.5f, false), {{0.0f, false}});
}

TEST(TrackTriggering, RefusesBadInputs) {
  const FloatTrack contact = make(kContact);
  std::array<TrackEdge, 4> out;
  std::size_t count = 0;
  bool overflowed = false;
  TrackTriggeringJob job{.track = &contact,
                         .from = 0,
                         .to = 1,
                         .edges = out,
                         .count = &count,
                         .overflowed = &overflowed};
  ASSERT_TRUE(job.run());
  job.to = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(job.run());
  job.to = 2000.0f;
  EXPECT_FALSE(job.run()) << "more than 1024 loops in one frame";
  job.to = 1;
  job.threshold = NAN;
  EXPECT_FALSE(job.run());
  job.threshold = 0.5f;
  job.count = nullptr;
  EXPECT_FALSE(job.run());
  const FloatTrack empty;
  EXPECT_FALSE(
      (TrackTriggeringJob{.track = &empty, .count = &count, .overflowed = &overflowed}).run());
}

}  // namespace
}  // namespace spindle::anim
