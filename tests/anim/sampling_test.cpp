#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <spindle/anim/sampling_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;
using test::expect_near;
using test::expect_same_rotation;

const float kC45 = std::sqrt(0.5f);  // cos 45 deg = sin 45 deg

Clip make_clip(std::vector<QuatKey> rotations) {
  std::vector<JointTrack> tracks(1);
  tracks[0].translations = {{0.0f, {0, 0, 0}}, {1.0f, {2, 4, -2}}, {3.0f, {2, 4, 6}}};
  tracks[0].rotations = std::move(rotations);
  tracks[0].scales = {{1.0f, {1, 1, 1}}, {2.0f, {3, 1, 0.5f}}};
  core::Result<Clip> c = Clip::create("c", 3.0f, std::move(tracks));
  EXPECT_TRUE(c) << c.message();
  return c.value();
}

JointTransform sample(const Clip& clip, float time) {
  SamplingCache cache(clip.joint_count());
  std::vector<JointTransform> out(clip.joint_count());
  SamplingJob job{.clip = &clip, .time = time, .cache = &cache, .output = out};
  core::Status s = job.run();
  EXPECT_TRUE(s) << s.message();
  return out[0];
}

TEST(SamplingJob, LerpsTranslationAndScaleAndClampsOutsideKeys) {
  const Clip clip = make_clip({{0.0f, glm::quat(1, 0, 0, 0)}});
  expect_near(sample(clip, 0.25f).translation, {0.5f, 1.0f, -0.5f});
  expect_near(sample(clip, 2.0f).translation, {2.0f, 4.0f, 2.0f});   // halfway 1 -> 3
  expect_near(sample(clip, 1.0f).translation, {2.0f, 4.0f, -2.0f});  // exactly on a key
  expect_near(sample(clip, -1.0f).translation, {0.0f, 0.0f, 0.0f});
  expect_near(sample(clip, 5.0f).translation, {2.0f, 4.0f, 6.0f});
  expect_near(sample(clip, 0.5f).scale, {1.0f, 1.0f, 1.0f});  // before the first scale key
  expect_near(sample(clip, 1.5f).scale, {2.0f, 1.0f, 0.75f});
}

TEST(SamplingJob, RotationIsNormalisedLerp) {
  // identity -> 90 deg about z. Midpoint: normalize((1 + c45) / 2, 0, 0, s45 / 2) = 45 deg.
  const Clip clip = make_clip({{0.0f, glm::quat(1, 0, 0, 0)}, {1.0f, glm::quat(kC45, 0, 0, kC45)}});
  expect_same_rotation(sample(clip, 0.5f).rotation, axis_angle(45.0f, {0, 0, 1}));
  // Quarter way, nlerp (not slerp): 0.75 * (1,0,0,0) + 0.25 * (c45,0,0,s45) = (0.92678, 0, 0,
  // 0.17678), length 0.94349 -> (0.98229, 0, 0, 0.18737), i.e. 21.60 deg (slerp would give 22.5).
  const glm::quat q = sample(clip, 0.25f).rotation;
  EXPECT_NEAR(q.w, 0.98229f, 1e-4f);
  EXPECT_NEAR(q.z, 0.18737f, 1e-4f);
  EXPECT_NEAR(q.x, 0.0f, 1e-6f);
  EXPECT_NEAR(glm::length(q), 1.0f, 1e-6f);
}

TEST(SamplingJob, RotationTakesTheShortestPath) {
  // The second key is stored negated (same rotation, opposite hemisphere). Without the sign fix
  // the midpoint would be normalize(0.5 - 0.5 c45, 0, 0, -0.5 s45): a 135 deg turn the long way.
  const Clip clip =
      make_clip({{0.0f, glm::quat(1, 0, 0, 0)}, {1.0f, glm::quat(-kC45, 0, 0, -kC45)}});
  expect_same_rotation(sample(clip, 0.5f).rotation, axis_angle(45.0f, {0, 0, 1}));
}

// 3 joints; tracks with different, irregular key times so the cursors move independently.
Clip make_long_clip() {
  std::vector<JointTrack> tracks(3);
  for (int j = 0; j < 3; ++j) {
    const int keys = 10 + 7 * j;
    for (int k = 0; k < keys; ++k) {
      const float t = 4.0f * static_cast<float>(k * k + k) / static_cast<float>(keys * keys);
      const float f = static_cast<float>(k + j);
      tracks[j].translations.push_back({t, {std::sin(f), std::cos(f), f}});
      tracks[j].rotations.push_back({t, axis_angle(40.0f * f, {1, f, 0.5f})});
      tracks[j].scales.push_back({t * 0.9f, {1.0f + 0.1f * f, 1.0f, 2.0f - 0.05f * f}});
    }
  }
  core::Result<Clip> c = Clip::create("long", 4.0f, std::move(tracks));
  EXPECT_TRUE(c) << c.message();
  return c.value();
}

void expect_identical(std::span<const JointTransform> a, std::span<const JointTransform> b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t j = 0; j < a.size(); ++j) {
    EXPECT_EQ(a[j].translation, b[j].translation) << "joint " << j;
    EXPECT_EQ(a[j].rotation, b[j].rotation) << "joint " << j;
    EXPECT_EQ(a[j].scale, b[j].scale) << "joint " << j;
  }
}

TEST(SamplingJob, CursorCacheMatchesFreshSearchForwardBackwardAndJumps) {
  const Clip clip = make_long_clip();
  SamplingCache cache(3);
  std::vector<JointTransform> cached(3), fresh(3);
  auto check = [&](float t) {
    SamplingJob job{.clip = &clip, .time = t, .cache = &cache, .output = cached};
    ASSERT_TRUE(job.run());
    SamplingCache new_cache(3);
    SamplingJob ref{.clip = &clip, .time = t, .cache = &new_cache, .output = fresh};
    ASSERT_TRUE(ref.run());
    expect_identical(cached, fresh);
  };

  check(0.0f);
  EXPECT_EQ(cache.searches(), 9u);  // first sample: one search per track
  for (float t = 0.0f; t <= 4.5f; t += 1.0f / 60.0f) check(t);
  EXPECT_EQ(cache.searches(), 9u) << "forward playback must step the cursors, not search";

  const std::uint64_t before_back = cache.searches();
  check(1.3f);  // backwards
  EXPECT_EQ(cache.searches(), before_back + 9);
  for (float t = 1.3f; t <= 2.0f; t += 1.0f / 60.0f) check(t);
  EXPECT_EQ(cache.searches(), before_back + 9);

  check(0.01f);  // backwards again, then a forward jump over many keys
  const std::uint64_t before_jump = cache.searches();
  check(3.9f);
  EXPECT_GT(cache.searches(), before_jump);

  // Another clip through the same cache must not reuse the old cursors.
  const Clip other = make_clip({{0.0f, glm::quat(1, 0, 0, 0)}});
  SamplingCache small(1);
  std::vector<JointTransform> one(1);
  ASSERT_TRUE((SamplingJob{.clip = &clip, .time = 3.9f, .cache = &cache, .output = cached}.run()));
  ASSERT_TRUE((SamplingJob{
      .clip = &other, .time = 3.9f, .cache = &cache, .output = std::span(cached).first(1)}
                   .run()));
  ASSERT_TRUE((SamplingJob{.clip = &other, .time = 3.9f, .cache = &small, .output = one}.run()));
  expect_identical(std::span(cached).first(1), one);
}

// sample()'s documented value of a float track at t, with glm: the last key at or before t (the
// first before it); that key as it is at or before its time, on the last key, or at a zero
// fraction; else the interpolation at a = (t - t0) / (t1 - t0), rotations nlerped on the
// shortest path.
template <class Key, class Lerp>
auto reference_value(const std::vector<Key>& keys, float t, Lerp lerp) {
  const auto after = std::upper_bound(keys.begin(), keys.end(), t,
                                      [](float time, const Key& k) { return time < k.time; });
  const std::size_t k =
      after == keys.begin() ? 0 : static_cast<std::size_t>(after - keys.begin()) - 1;
  if (k + 1 >= keys.size() || t <= keys[k].time) return keys[k].value;
  const float a = (t - keys[k].time) / (keys[k + 1].time - keys[k].time);
  if (a == 0.0f) return keys[k].value;
  return lerp(keys[k].value, keys[k + 1].value, a);
}

JointTransform reference_joint(const JointTrack& track, float t) {
  const auto vec3 = [](const glm::vec3& v0, const glm::vec3& v1, float a) {
    return v0 + (v1 - v0) * a;
  };
  const auto quat = [](const glm::quat& q0, glm::quat q1, float a) {
    if (glm::dot(q0, q1) < 0.0f) q1 = -q1;
    return glm::normalize(q0 * (1.0f - a) + q1 * a);
  };
  return {reference_value(track.translations, t, vec3), reference_value(track.rotations, t, quat),
          reference_value(track.scales, t, vec3)};
}

// SamplingJob takes float clips four joints at a time where it can (the rest one by one); every
// joint must still be the one-joint formula to the bit: 16 to 19 joints (every n % 4), seeded
// irregular key times, the keyframe optimiser's sparse and one-key tracks, times on, between,
// before and after keys, fresh caches and one cache played forward.
TEST(SamplingJob, EveryJointIsTheOneJointFormulaToTheBit) {
  for (const test::FourWideClips& clips : test::four_wide_clips()) {
    const int n = clips.joints;
    for (const Clip* clip : {&clips.walk, &clips.idle, &clips.lean}) {
      SamplingCache forward(n);
      std::vector<JointTransform> fresh(n), played(n), expected(n);
      for (float t : test::times_around_keys(clip->tracks(), clip->duration())) {
        for (int j = 0; j < n; ++j) expected[j] = reference_joint(clip->tracks()[j], t);
        SamplingCache cache(n);
        ASSERT_TRUE((SamplingJob{.clip = clip, .time = t, .cache = &cache, .output = fresh}.run()));
        ASSERT_TRUE(
            (SamplingJob{.clip = clip, .time = t, .cache = &forward, .output = played}.run()));
        const std::size_t bytes = expected.size() * sizeof(JointTransform);
        ASSERT_EQ(std::memcmp(fresh.data(), expected.data(), bytes), 0)
            << n << " joints, " << clip->name() << " t=" << t;
        ASSERT_EQ(std::memcmp(played.data(), expected.data(), bytes), 0)
            << n << " joints, " << clip->name() << " t=" << t;
      }
    }
  }
}

TEST(SamplingJob, ValidateRejectsBadInputs) {
  const Clip clip = make_clip({{0.0f, glm::quat(1, 0, 0, 0)}});
  SamplingCache cache(1), empty_cache;
  std::vector<JointTransform> out(1), two(2);
  EXPECT_EQ((SamplingJob{.cache = &cache, .output = out}.run().message()), "SamplingJob: no clip");
  EXPECT_EQ((SamplingJob{.clip = &clip, .output = out}.run().message()), "SamplingJob: no cache");
  EXPECT_EQ((SamplingJob{.clip = &clip, .cache = &empty_cache, .output = out}.validate().message()),
            "SamplingJob: cache holds 0 joints, clip has 1");
  EXPECT_EQ((SamplingJob{.clip = &clip, .cache = &cache, .output = two}.validate().message()),
            "SamplingJob: output has 2 joints, clip has 1");
  EXPECT_EQ((SamplingJob{.clip = &clip,
                         .time = std::numeric_limits<float>::infinity(),
                         .cache = &cache,
                         .output = out}
                 .validate()
                 .message()),
            "SamplingJob: time is not finite");
  EXPECT_TRUE((SamplingJob{.clip = &clip, .cache = &cache, .output = out}.validate()));
}

}  // namespace
}  // namespace spindle::anim
