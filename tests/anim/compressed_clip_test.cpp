// Compressed clips (Clip::compressed()): the 16-bit quantised clip's keys and bound, the cache's
// bit-identity over any playback order, each key decoded once in forward playback, seeking
// without replay, size, and refused inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>

#include "anim_test_support.h"
#include "walk_like_clip.h"

namespace spindle::anim::compressed_clip_test {
namespace {

std::vector<JointTransform> sample(const Clip& clip, float t, SamplingCache& cache) {
  std::vector<JointTransform> pose(static_cast<std::size_t>(clip.joint_count()));
  EXPECT_TRUE((SamplingJob{.clip = &clip, .time = t, .cache = &cache, .output = pose}.run()));
  return pose;
}

std::vector<JointTransform> sample_fresh(const Clip& clip, float t) {
  SamplingCache cache(clip.joint_count());
  return sample(clip, t, cache);
}

bool same_bits(const std::vector<JointTransform>& a, const std::vector<JointTransform>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(JointTransform)) == 0;
}

std::vector<float> forward_times(const Clip& clip) {
  return test::times_around_keys(clip.decoded_tracks(), clip.duration());
}

struct Clips {
  Character character;
  Clip walk_like;
  // 100 joints: 300 tracks and its irregular key times take the 16-bit stream indices.
  Clip wide;
};

const Clips& clips() {
  static const Clips c = [] {
    Clips out{make_character({.seed = 3}).value(), {}, {}};
    out.walk_like = test::make_walk_like_clip(out.character.skeleton);
    out.wide = make_character({.seed = 4, .joint_count = 100, .min_keys = 40}).value().idle;
    return out;
  }();
  return c;
}

std::vector<const Clip*> float_clips() {
  return {&clips().character.walk, &clips().character.idle, &clips().walk_like, &clips().wide};
}

// Rotation angle between two unit quaternions from their chord, in double so that tiny angles
// survive (q and -q are the same rotation).
double angle(const glm::quat& a, const glm::quat& b) {
  const double sign = glm::dot(a, b) < 0.0f ? -1.0 : 1.0;
  double chord = 0.0;
  for (int i = 0; i < 4; ++i) {
    const double d = static_cast<double>(a[i]) - sign * static_cast<double>(b[i]);
    chord += d * d;
  }
  return 4.0 * std::asin(std::min(1.0, std::sqrt(chord) / 2.0));
}

double max_diff(const glm::vec3& a, const glm::vec3& b) {
  const glm::vec3 d = glm::abs(a - b);
  return std::max({d.x, d.y, d.z});
}

TEST(CompressedClip, SamplesTheQuantisedClipsKeysWithinItsBound) {
  for (const Clip* source : float_clips()) {
    const Clip q = source->quantized().value();
    const Clip c = source->compressed().value();
    EXPECT_TRUE(c.is_compressed());
    EXPECT_TRUE(c.is_quantized());
    EXPECT_TRUE(c.tracks().empty());
    EXPECT_EQ(c.joint_count(), source->joint_count());
    EXPECT_EQ(c.duration(), source->duration());
    EXPECT_EQ(c.error_bound().translation, q.error_bound().translation);
    EXPECT_EQ(c.error_bound().rotation, q.error_bound().rotation);
    EXPECT_EQ(c.error_bound().scale, q.error_bound().scale);
    // Same keys as the quantised clip; the fraction may differ in its last bit (a reciprocal).
    SamplingCache cf(c.joint_count()), cq(c.joint_count()), cc(c.joint_count());
    const QuantizationError bound = c.error_bound();
    for (float t : forward_times(*source)) {
      const std::vector<JointTransform> f = sample(*source, t, cf), a = sample(q, t, cq),
                                        b = sample(c, t, cc);
      for (std::size_t j = 0; j < a.size(); ++j) {
        const float m = std::max(1.0f, glm::length(a[j].translation));
        ASSERT_LE(max_diff(a[j].translation, b[j].translation), 1e-6 * m) << source->name() << t;
        ASSERT_LE(max_diff(a[j].scale, b[j].scale), 1e-6 * m) << source->name() << t;
        ASSERT_LE(angle(a[j].rotation, b[j].rotation), 2e-6) << source->name() << " t=" << t;
        // And within the quantisation bound of the float clip.
        ASSERT_LE(max_diff(f[j].translation, b[j].translation), bound.translation);
        ASSERT_LE(max_diff(f[j].scale, b[j].scale), bound.scale);
        ASSERT_LE(angle(f[j].rotation, b[j].rotation), bound.rotation);
      }
    }
  }
}

TEST(CompressedClip, DecodedTracksMatchTheQuantisedClip) {
  for (const Clip* source : float_clips()) {
    const std::vector<JointTrack> a = source->quantized().value().decoded_tracks();
    const std::vector<JointTrack> b = source->compressed().value().decoded_tracks();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t j = 0; j < a.size(); ++j) {
      ASSERT_EQ(a[j].translations.size(), b[j].translations.size());
      ASSERT_EQ(a[j].rotations.size(), b[j].rotations.size());
      ASSERT_EQ(a[j].scales.size(), b[j].scales.size());
      for (std::size_t k = 0; k < a[j].rotations.size(); ++k) {
        EXPECT_EQ(a[j].rotations[k].time, b[j].rotations[k].time);
        EXPECT_EQ(a[j].rotations[k].value, b[j].rotations[k].value);
      }
      for (std::size_t k = 0; k < a[j].translations.size(); ++k)
        EXPECT_EQ(a[j].translations[k].value, b[j].translations[k].value);
      for (std::size_t k = 0; k < a[j].scales.size(); ++k)
        EXPECT_EQ(a[j].scales[k].value, b[j].scales[k].value);
    }
    // Compressing the decoded tracks again gives the same samples (a stable round trip).
    const Clip again = Clip::create(source->name(), source->duration(),
                                    source->compressed().value().decoded_tracks())
                           .value()
                           .compressed()
                           .value();
    SamplingCache c1(again.joint_count()), c2(again.joint_count());
    const Clip once = source->compressed().value();
    for (float t : forward_times(*source)) {
      const std::vector<JointTransform> x = sample(once, t, c1), y = sample(again, t, c2);
      for (std::size_t j = 0; j < x.size(); ++j) {
        EXPECT_NEAR(glm::length(x[j].translation - y[j].translation), 0.0f,
                    2.0f * once.error_bound().translation + 1e-6f);
        EXPECT_NEAR(std::abs(glm::dot(x[j].rotation, y[j].rotation)), 1.0f, 1e-6f);
      }
    }
  }
}

TEST(CompressedClip, CacheGivesFreshCacheBitsInAnyPlaybackOrder) {
  for (const Clip* source : float_clips()) {
    const Clip c = source->compressed().value();
    const float d = c.duration();
    std::vector<float> times;
    for (int f = 0; f < 150; ++f) times.push_back(std::fmod(static_cast<float>(f) / 60.0f, d));
    for (int f = 150; f > 0; f -= 7) times.push_back(d * static_cast<float>(f) / 150.0f);  // back
    std::uint32_t x = 12345;  // jumps: a fixed LCG
    for (int i = 0; i < 100; ++i) {
      x = x * 1664525u + 1013904223u;
      times.push_back(d * (static_cast<float>(x >> 8) / 16777216.0f * 1.4f - 0.2f));
    }
    times.push_back(d);
    times.push_back(d);  // same time twice
    times.push_back(0.0f);
    SamplingCache cache(c.joint_count());
    for (float t : times)
      ASSERT_TRUE(same_bits(sample(c, t, cache), sample_fresh(c, t))) << c.name() << " t=" << t;

    // Another clip sampled through the same cache in between, then back.
    const Clip& other = clips().character.idle;
    SamplingCache shared(c.joint_count());
    for (float t : {0.1f, 0.2f, 0.9f}) {
      (void)sample(c, t, shared);
      (void)sample(other, t, shared);
      ASSERT_TRUE(same_bits(sample(c, t + 0.05f, shared), sample_fresh(c, t + 0.05f)));
    }
  }
}

std::size_t stream_keys(const Clip& source) {
  std::size_t n = 0;
  for (const JointTrack& t : source.tracks())
    n += std::max<std::size_t>(t.translations.size(), 2) +
         std::max<std::size_t>(t.rotations.size(), 2) + std::max<std::size_t>(t.scales.size(), 2);
  return n;
}

TEST(CompressedClip, ForwardPlaybackDecodesEachKeyOnceAndNeverSearches) {
  for (const Clip* source : float_clips()) {
    const Clip c = source->compressed().value();
    SamplingCache cache(c.joint_count());
    for (int f = 0; f <= 240; ++f)
      (void)sample(c, c.duration() * static_cast<float>(f) / 240.0f, cache);
    EXPECT_EQ(cache.searches(), 1u) << "only the first sample seeks";
    EXPECT_EQ(cache.decoded_keys(), stream_keys(*source)) << c.name();
  }
}

TEST(CompressedClip, SeekingDecodesTwoKeysPerTrackWithoutReplay) {
  const Clip c = clips().walk_like.compressed().value();
  const auto tracks = static_cast<std::uint64_t>(3 * c.joint_count());
  SamplingCache cache(c.joint_count());
  (void)sample(c, 0.9f, cache);  // a first sample far from 0
  EXPECT_EQ(cache.decoded_keys(), 2 * tracks);
  (void)sample(c, 0.1f, cache);  // backwards
  EXPECT_EQ(cache.decoded_keys(), 4 * tracks);
  EXPECT_EQ(cache.searches(), 2u);
  (void)sample(c, 0.1f + 1.0f / 60.0f, cache);  // forward again: at most one key per track
  EXPECT_LE(cache.decoded_keys(), 5 * tracks);
  EXPECT_EQ(cache.searches(), 2u);
  (void)sample(c, 0.8f, cache);  // a long jump forward seeks rather than decoding every key
  EXPECT_EQ(cache.searches(), 3u);
}

TEST(CompressedClip, WalkLikeClipIsSmallerThanTheQuantisedOne) {
  const Clip& source = clips().walk_like;
  const Clip q = source.quantized().value();
  const Clip c = source.compressed().value();
  std::printf(
      "walk-like clip (%d joints, 31 keys per track): float %zu B, 16-bit %zu B, "
      "compressed %zu B\n",
      source.joint_count(), source.memory_bytes(), q.memory_bytes(), c.memory_bytes());
  // 8 bytes a key, 31 times, two vec3 ranges per joint, the clip object.
  const std::size_t keys = stream_keys(source);
  EXPECT_EQ(keys, 150u * 31u);
  EXPECT_LE(c.memory_bytes(), 8 * keys + 8 * 31 + 24 * 2 * 50 + sizeof(Clip));
  EXPECT_LT(c.memory_bytes(), q.memory_bytes());
  EXPECT_EQ(c.compressed().value().memory_bytes(), c.memory_bytes());  // a copy
}

TEST(CompressedClip, RefusesWhatItCannotHold) {
  const Clip& source = clips().character.walk;
  const Clip q = source.quantized().value();
  core::Result<Clip> r = q.compressed();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("compress the float clip"), std::string::npos) << r.message();
  r = source.compressed().value().quantized();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("quantise the float clip"), std::string::npos) << r.message();

  const JointTrack constant{
      {{0.0f, glm::vec3(0)}}, {{0.0f, glm::quat(1, 0, 0, 0)}}, {{0.0f, glm::vec3(1)}}};
  r = Clip::create("wide", 1.0f, std::vector<JointTrack>(21846, constant)).value().compressed();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("at most 21845"), std::string::npos) << r.message();
  EXPECT_TRUE(
      Clip::create("ok", 1.0f, std::vector<JointTrack>(21845, constant)).value().compressed());

  JointTrack dense = constant;
  dense.translations.clear();
  for (int k = 0; k < 70000; ++k)
    dense.translations.push_back({static_cast<float>(k) / 70000.0f, glm::vec3(0)});
  r = Clip::create("dense", 1.0f, {dense}).value().compressed();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("65535"), std::string::npos) << r.message();

  JointTrack huge = constant;
  huge.scales = {{0.0f, glm::vec3(-3e38f)}, {1.0f, glm::vec3(3e38f)}};
  r = Clip::create("huge", 1.0f, {huge}).value().compressed();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("scale range overflows"), std::string::npos) << r.message();
}

TEST(CompressedClip, CacheSizedForUncompressedClipsRefusesThem) {
  const Clip& source = clips().character.walk;
  const Clip c = source.compressed().value();
  SamplingCache lean(c.joint_count(), CacheFor::UncompressedClips);
  EXPECT_FALSE(lean.holds_compressed());
  std::vector<JointTransform> pose(static_cast<std::size_t>(c.joint_count()));
  const core::Status s =
      SamplingJob{.clip = &c, .time = 0.5f, .cache = &lean, .output = pose}.run();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("CacheFor::UncompressedClips"), std::string::npos) << s.message();
  EXPECT_TRUE((SamplingJob{.clip = &source, .time = 0.5f, .cache = &lean, .output = pose}.run()));
  const Clip q = source.quantized().value();
  EXPECT_TRUE((SamplingJob{.clip = &q, .time = 0.5f, .cache = &lean, .output = pose}.run()));
  lean.resize(c.joint_count());  // AnyClip
  EXPECT_TRUE(lean.holds_compressed());
  EXPECT_TRUE((SamplingJob{.clip = &c, .time = 0.5f, .cache = &lean, .output = pose}.run()));
}

// The documented value of a compressed track at t, from its decoded keys, one joint at a time
// with glm: the pair of keys around t (the last key at or before t and the next; the last two
// past the end); the key itself at or before the first of them, at or past the second, or at a
// zero fraction; else the interpolation at a = (t - t0) * (1 / (t1 - t0)), rotations nlerped on
// the shortest path.
template <class Key>
std::pair<const Key*, const Key*> pair_around(const std::vector<Key>& keys, float t) {
  const auto after = std::upper_bound(keys.begin(), keys.end(), t,
                                      [](float time, const Key& k) { return time < k.time; });
  std::size_t i = static_cast<std::size_t>(after - keys.begin());
  if (keys.size() == 1) return {&keys[0], &keys[0]};
  i = std::clamp<std::size_t>(i, 1, keys.size() - 1);
  return {&keys[i - 1], &keys[i]};
}

template <class Key, class Lerp>
auto reference_value(const std::vector<Key>& keys, float t, Lerp lerp) {
  const auto [k0, k1] = pair_around(keys, t);
  if (t <= k0->time) return k0->value;
  if (t >= k1->time) return k1->value;
  const float inv_span = 1.0f / (k1->time - k0->time);
  const float a = (t - k0->time) * inv_span;
  if (a == 0.0f) return k0->value;
  return lerp(k0->value, k1->value, a);
}

JointTransform reference_joint(const JointTrack& track, float t) {
  const auto vec3 = [](const glm::vec3& v0, const glm::vec3& v1, float a) {
    return v0 + (v1 - v0) * a;
  };
  const auto quat = [](const glm::quat& q0, glm::quat q1, float a) {
    if (glm::dot(q0, q1) < 0.0f) q1 = -q1;
    const glm::quat q = q0 * (1.0f - a) + q1 * a;
    const float len = std::sqrt(glm::dot(q, q));
    if (len <= 0.0f) return glm::quat(1.0f, 0.0f, 0.0f, 0.0f);
    return q * (1.0f / len);
  };
  return {reference_value(track.translations, t, vec3), reference_value(track.rotations, t, quat),
          reference_value(track.scales, t, vec3)};
}

// SamplingJob takes its joints four at a time where it can (the last n % 4 as the group ending
// at the last joint); whichever way, every joint must be the one-joint formula to the bit: clips
// of 16 to 19 joints (every n % 4), animated tracks mixed with the keyframe optimiser's one-key
// tracks, times on, between, before and after the keys, fresh caches and one cache played forward.
TEST(CompressedClip, EveryJointIsTheOneJointFormulaToTheBit) {
  for (const test::FourWideClips& clips : test::four_wide_clips()) {
    for (const Clip* source : {&clips.walk, &clips.idle, &clips.lean}) {
      const Clip c = source->compressed().value();
      const std::vector<JointTrack> keys = c.decoded_tracks();
      SamplingCache forward(c.joint_count());
      for (float t : forward_times(c)) {
        std::vector<JointTransform> expected;
        for (const JointTrack& track : keys) expected.push_back(reference_joint(track, t));
        ASSERT_TRUE(same_bits(sample_fresh(c, t), expected))
            << clips.joints << " joints, " << source->name() << " t=" << t;
        ASSERT_TRUE(same_bits(sample(c, t, forward), expected))
            << clips.joints << " joints, " << source->name() << " t=" << t;
      }
    }
  }
}

TEST(CompressedClip, OneKeyTracksAndTimesOutsideTheKeys) {
  JointTrack t;
  t.translations = {{0.5f, glm::vec3(1, 2, 3)}};
  t.rotations = {{0.25f, glm::angleAxis(0.3f, glm::vec3(0, 1, 0))},
                 {0.75f, glm::angleAxis(-0.3f, glm::vec3(0, 1, 0))}};
  t.scales = {{1.0f, glm::vec3(2)}};
  const Clip source = Clip::create("sparse", 1.0f, {t}).value();
  const Clip q = source.quantized().value(), c = source.compressed().value();
  for (float time : {-1.0f, 0.0f, 0.25f, 0.3f, 0.5f, 0.75f, 0.9f, 1.0f, 2.0f}) {
    ASSERT_TRUE(same_bits(sample_fresh(q, time), sample_fresh(c, time))) << time;
    const std::vector<JointTransform> p = sample_fresh(c, time);
    EXPECT_EQ(p[0].translation, glm::vec3(1, 2, 3));
    EXPECT_EQ(p[0].scale, glm::vec3(2));
  }
}

}  // namespace
}  // namespace spindle::anim::compressed_clip_test
