// 16-bit quantised clips: sampled error against the float clip stays within error_bound(), the
// bound is tight enough to mean something, edge cases, memory, and the cursor cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;

// Largest error seen per channel, in the units of QuantizationError.
struct Measured {
  double translation = 0.0;
  double rotation = 0.0;
  double scale = 0.0;
};

// Rotation angle between a and b in radians, in double so that tiny angles are not lost to
// acos(|dot|) near 1.
double rotation_angle(const glm::quat& a, const glm::quat& b) {
  const double qa[4] = {a.w, a.x, a.y, a.z};
  double qb[4] = {b.w, b.x, b.y, b.z};
  double na = 0.0, nb = 0.0, dot = 0.0;
  for (int i = 0; i < 4; ++i) {
    na += qa[i] * qa[i];
    nb += qb[i] * qb[i];
    dot += qa[i] * qb[i];
  }
  double chord = 0.0;
  for (int i = 0; i < 4; ++i) {
    const double d = qa[i] / std::sqrt(na) - (dot < 0.0 ? -1.0 : 1.0) * qb[i] / std::sqrt(nb);
    chord += d * d;
  }
  return 4.0 * std::asin(std::min(1.0, std::sqrt(chord) / 2.0));
}

double max_abs_diff(const glm::vec3& a, const glm::vec3& b) {
  double m = 0.0;
  for (int i = 0; i < 3; ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return m;
}

// Every key time, the midpoints between neighbouring key times of each track, the ends, times
// outside the clip, and a 60 Hz sweep.
std::vector<float> sample_times(const Clip& clip) {
  std::vector<float> times = {-0.25f, 0.0f, clip.duration(), clip.duration() + 0.25f};
  auto add = [&](const auto& keys) {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      times.push_back(keys[k].time);
      if (k > 0) times.push_back(0.5f * (keys[k - 1].time + keys[k].time));
      if (k > 0) times.push_back(0.9f * keys[k - 1].time + 0.1f * keys[k].time);
    }
  };
  for (const JointTrack& t : clip.decoded_tracks()) {
    add(t.translations);
    add(t.rotations);
    add(t.scales);
  }
  for (float t = 0.0f; t < clip.duration(); t += 1.0f / 60.0f) times.push_back(t);
  std::sort(times.begin(), times.end());  // forward playback through both caches
  return times;
}

Measured measure(const Clip& exact, const Clip& quantized) {
  const auto n = static_cast<std::size_t>(exact.joint_count());
  SamplingCache ca(exact.joint_count()), cb(exact.joint_count());
  std::vector<JointTransform> a(n), b(n);
  Measured m;
  for (float t : sample_times(exact)) {
    EXPECT_TRUE((SamplingJob{.clip = &exact, .time = t, .cache = &ca, .output = a}.run()));
    EXPECT_TRUE((SamplingJob{.clip = &quantized, .time = t, .cache = &cb, .output = b}.run()));
    for (std::size_t j = 0; j < n; ++j) {
      m.translation = std::max(m.translation, max_abs_diff(a[j].translation, b[j].translation));
      m.rotation = std::max(m.rotation, rotation_angle(a[j].rotation, b[j].rotation));
      m.scale = std::max(m.scale, max_abs_diff(a[j].scale, b[j].scale));
    }
  }
  return m;
}

Clip quantize(const Clip& clip) {
  core::Result<Clip> q = clip.quantized();
  EXPECT_TRUE(q) << q.message();
  return q ? q.value() : Clip{};
}

void expect_within(const Measured& m, const QuantizationError& bound) {
  EXPECT_LE(m.translation, bound.translation);
  EXPECT_LE(m.rotation, bound.rotation);
  EXPECT_LE(m.scale, bound.scale);
}

void report(const char* what, const Measured& m, const QuantizationError& b) {
  std::printf(
      "[quant] %-28s translation %.3g / %.3g  rotation %.3g / %.3g rad  scale %.3g / %.3g  "
      "(measured / bound)\n",
      what, m.translation, static_cast<double>(b.translation), m.rotation,
      static_cast<double>(b.rotation), m.scale, static_cast<double>(b.scale));
}

TEST(Quantization, ProceduralClipsStayWithinTheBound) {
  Measured worst;  // over all clips, against each clip's own bound
  double ratio_t = 0.0, ratio_r = 0.0;
  for (std::uint64_t seed : {1u, 7u, 42u}) {
    for (int joints : {16, 50, 200}) {
      core::Result<Character> r = make_character(
          {.seed = seed, .joint_count = joints, .vertex_count = 1, .walk_duration = 1.1f});
      ASSERT_TRUE(r) << r.message();
      for (const Clip* clip : {&r.value().walk, &r.value().idle}) {
        SCOPED_TRACE(clip->name() + " seed " + std::to_string(seed) + " joints " +
                     std::to_string(joints));
        const Clip q = quantize(*clip);
        ASSERT_TRUE(q.is_quantized());
        EXPECT_TRUE(q.tracks().empty());
        EXPECT_EQ(q.joint_count(), clip->joint_count());
        EXPECT_EQ(q.duration(), clip->duration());
        const Measured m = measure(*clip, q);
        const QuantizationError b = q.error_bound();
        expect_within(m, b);
        // Not absurdly loose: the root bob and the rotations get within a factor 50 of it.
        EXPECT_GE(m.translation, b.translation / 50.0);
        EXPECT_GE(m.rotation, b.rotation / 50.0);
        // Procedural scales are constant keys: stored exactly.
        EXPECT_EQ(b.scale, 0.0f);
        EXPECT_EQ(m.scale, 0.0);
        ratio_t = std::max(ratio_t, m.translation / b.translation);
        ratio_r = std::max(ratio_r, m.rotation / b.rotation);
        if (seed == 1 && joints == 50) report(clip->name().c_str(), m, b);
        worst.translation = std::max(worst.translation, m.translation);
        worst.rotation = std::max(worst.rotation, m.rotation);
      }
    }
  }
  std::printf(
      "[quant] procedural worst: translation %.3g (%.0f%% of bound), rotation %.3g rad "
      "(%.0f%% of bound)\n",
      worst.translation, 100.0 * ratio_t, worst.rotation, 100.0 * ratio_r);
}

// Huge and tiny ranges, wide rotation steps, q / -q neighbours, 180-degree rotations (w ~ 0, where
// the stored sign flips), ties between the largest components.
Clip make_extreme_clip() {
  std::vector<JointTrack> tracks(4);
  tracks[0].translations = {
      {0.0f, {-1e6f, 0.0f, 5.0f}}, {0.5f, {1e6f, 1.0f, 5.0f}}, {2.0f, {0.0f, -1.0f, 5.0f}}};
  tracks[0].rotations = {{0.0f, axis_angle(0.0f, {0, 1, 0})},
                         {0.3f, axis_angle(150.0f, {0, 1, 0})},
                         {0.6f, axis_angle(300.0f, {0, 1, 0})},
                         {1.0f, axis_angle(359.9f, {1, 1, 1})}};
  tracks[0].scales = {{0.0f, {0.001f, 1.0f, 100.0f}},
                      {0.9f, {37.12345f, 1.0f, 61.98765f}},
                      {2.0f, {100.0f, 1.0f, 0.001f}}};

  const glm::quat p = axis_angle(179.995f, {0.3f, -1.0f, 0.2f});  // w ~ 4e-5
  tracks[1].translations = {{1.0f, {1e-3f, -2e-3f, 0.0f}}, {1.5f, {1.1e-3f, -2e-3f, 1e-7f}}};
  tracks[1].rotations = {{0.0f, p},
                         {0.1f, -p},  // same rotation, opposite sign
                         {0.2f, axis_angle(180.005f, {0.3f, -1.0f, 0.2f})},
                         {0.4f, glm::quat(0.5f, 0.5f, 0.5f, 0.5f)},
                         {0.5f, glm::quat(-0.5f, -0.5f, 0.5f, -0.5f)},
                         {2.0f, glm::quat(0.0f, 0.0f, 0.0f, 1.0f)}};
  tracks[1].scales = {{2.0f, {1, 1, 1}}};

  // Constant tracks: one key, and several equal keys (extent 0).
  tracks[2].translations = {{0.7f, {3.0f, -4.0f, 1e5f}}};
  tracks[2].rotations = {{0.0f, axis_angle(33.0f, {1, 2, 3})},
                         {2.0f, axis_angle(33.0f, {1, 2, 3})}};
  tracks[2].scales = {{0.0f, {2, 2, 2}}, {1.0f, {2, 2, 2}}, {2.0f, {2, 2, 2}}};

  // Many small steps on a long duration.
  for (int k = 0; k <= 200; ++k) {
    const float t = 0.01f * static_cast<float>(k);
    const float f = static_cast<float>(k);
    tracks[3].translations.push_back({t, {std::sin(f), 0.01f * f, -f}});
    tracks[3].rotations.push_back({t, axis_angle(7.0f * f, {std::sin(f), 1.0f, std::cos(f)})});
    tracks[3].scales.push_back({t, {1.0f + 0.001f * f, 1.0f, 1.0f}});
  }
  core::Result<Clip> c = Clip::create("extreme", 2.0f, std::move(tracks));
  EXPECT_TRUE(c) << c.message();
  return c ? c.value() : Clip{};
}

TEST(Quantization, ExtremeRangesStayWithinABoundThatSaysSo) {
  const Clip clip = make_extreme_clip();
  const Clip q = quantize(clip);
  const QuantizationError b = q.error_bound();
  // 2e6 m of range over 65535 steps: a half step is 15.26 m, plus rounding at 1e6 m (~0.95 m).
  EXPECT_GT(b.translation, 15.2f);
  EXPECT_LT(b.translation, 16.3f);
  // Scale range 100: half step 7.63e-4, plus rounding at 100 (9.5e-5).
  EXPECT_GT(b.scale, 7.6e-4f);
  EXPECT_LT(b.scale, 8.7e-4f);
  // The 150-degree steps (|dot| = cos 75 deg) loosen the rotation bound, still well under 1 deg.
  EXPECT_GT(b.rotation, 1.5e-4f);
  EXPECT_LT(b.rotation, 3e-4f);
  const Measured m = measure(clip, q);
  report("extreme", m, b);
  expect_within(m, b);
  EXPECT_GE(m.translation, b.translation / 50.0);
  EXPECT_GE(m.scale, b.scale / 50.0);
  EXPECT_GE(m.rotation, b.rotation / 50.0);

  // Constant tracks decode exactly, wherever sampled.
  const std::vector<JointTrack> d = q.decoded_tracks();
  EXPECT_EQ(d[2].translations[0].value, clip.tracks()[2].translations[0].value);
  for (const Vec3Key& k : d[2].scales) EXPECT_EQ(k.value, glm::vec3(2.0f));
  EXPECT_EQ(d[1].scales[0].value, glm::vec3(1.0f));
  // Times are kept exactly, including keys at 0 and at the duration.
  for (std::size_t j = 0; j < d.size(); ++j) {
    ASSERT_EQ(d[j].rotations.size(), clip.tracks()[j].rotations.size());
    for (std::size_t k = 0; k < d[j].rotations.size(); ++k)
      EXPECT_EQ(d[j].rotations[k].time, clip.tracks()[j].rotations[k].time);
  }
}

TEST(Quantization, BoundMatchesTheFormulaForAKnownRange) {
  std::vector<JointTrack> tracks(1);
  // x spans 65.535 m: step 1 mm, half step 0.5 mm, rounding 65.535 * 2^-20 = 62.5 um.
  tracks[0].translations = {{0.0f, {0.0f, 0, 0}}, {1.0f, {65.535f, 0, 0}}};
  tracks[0].rotations = {{0.0f, axis_angle(10.0f, {0, 0, 1})},
                         {1.0f, axis_angle(20.0f, {0, 0, 1})}};
  tracks[0].scales = {{0.0f, {1, 1, 1}}};
  core::Result<Clip> c = Clip::create("known", 1.0f, std::move(tracks));
  ASSERT_TRUE(c) << c.message();
  const QuantizationError b = quantize(c.value()).error_bound();
  EXPECT_NEAR(b.translation, 0.0005f + 65.535f / 1048576.0f, 1e-7f);
  // Per stored component e = sqrt2 / 32767 / 2 + 2^-22; chord 3.47 e; nearby keys: m ~ 1.
  const double e = std::sqrt(2.0) / 32767.0 / 2.0 + std::ldexp(1.0, -22);
  const double m = std::sqrt((1.0 + std::cos(glm::radians(5.0))) / 2.0);
  EXPECT_NEAR(b.rotation, 2.0 * std::asin(3.47 * e / m) + 2e-6, 1e-7);
  EXPECT_EQ(b.scale, 0.0f);

  // Neighbouring keys 180 degrees apart (dot 0): quantisation may flip nlerp's shortest-path
  // choice, so there is no useful bound and the clip says so.
  std::vector<JointTrack> flip(1);
  flip[0].translations = {{0.0f, {0, 0, 0}}};
  flip[0].rotations = {{0.0f, glm::quat(1, 0, 0, 0)}, {1.0f, glm::quat(0, 0, 1, 0)}};
  flip[0].scales = {{0.0f, {1, 1, 1}}};
  core::Result<Clip> f = Clip::create("flip", 1.0f, std::move(flip));
  ASSERT_TRUE(f) << f.message();
  EXPECT_FLOAT_EQ(quantize(f.value()).error_bound().rotation, 3.14159265f);
}

TEST(Quantization, FloatClipsAreUnchangedAndReportNoError) {
  const Clip clip = make_extreme_clip();
  EXPECT_FALSE(clip.is_quantized());
  const QuantizationError b = clip.error_bound();
  EXPECT_EQ(b.translation, 0.0f);
  EXPECT_EQ(b.rotation, 0.0f);
  EXPECT_EQ(b.scale, 0.0f);
  const std::vector<JointTrack> d = clip.decoded_tracks();
  ASSERT_EQ(d.size(), clip.tracks().size());
  EXPECT_EQ(d[3].rotations.back().value, clip.tracks()[3].rotations.back().value);
}

TEST(Quantization, RequantisingIsACopyAndDecodedTracksSampleTheSame) {
  const Clip q = quantize(make_extreme_clip());
  const Clip qq = quantize(q);
  EXPECT_TRUE(qq.is_quantized());
  EXPECT_EQ(qq.memory_bytes(), q.memory_bytes());
  EXPECT_EQ(qq.error_bound().rotation, q.error_bound().rotation);
  EXPECT_EQ(qq.error_bound().translation, q.error_bound().translation);
  const Measured same = measure(q, qq);
  EXPECT_EQ(same.translation, 0.0);
  EXPECT_EQ(same.rotation, 0.0);
  EXPECT_EQ(same.scale, 0.0);

  // decoded_tracks() -> create() gives a float clip that samples like the quantised one (create
  // renormalises rotations, a rounding-level change).
  core::Result<Clip> back = Clip::create("back", q.duration(), q.decoded_tracks());
  ASSERT_TRUE(back) << back.message();
  const Measured m = measure(back.value(), q);
  EXPECT_LT(m.translation, 1e-9);
  EXPECT_LT(m.scale, 1e-9);
  EXPECT_LT(m.rotation, 1e-6);
}

TEST(Quantization, RangesThatOverflowAFloatAreRejected) {
  std::vector<JointTrack> tracks(2);
  for (JointTrack& t : tracks) {
    t.translations = {{0.0f, {0, 0, 0}}};
    t.rotations = {{0.0f, glm::quat(1, 0, 0, 0)}};
    t.scales = {{0.0f, {1, 1, 1}}};
  }
  tracks[1].translations = {{0.0f, {-3e38f, 0, 0}}, {1.0f, {3e38f, 0, 0}}};
  core::Result<Clip> c = Clip::create("big", 1.0f, std::move(tracks));
  ASSERT_TRUE(c) << c.message();
  core::Result<Clip> q = c.value().quantized();
  ASSERT_FALSE(q);
  EXPECT_EQ(q.message(),
            "clip 'big': joint 1 translation range overflows a float, cannot quantise");
}

TEST(Quantization, MemoryShrinks) {
  core::Result<Character> r = make_character({.seed = 1, .joint_count = 50, .vertex_count = 1});
  ASSERT_TRUE(r) << r.message();
  const Clip& walk = r.value().walk;
  const Clip q = quantize(walk);
  std::size_t keys = 0, rotation_keys = 0;
  for (const JointTrack& t : walk.tracks()) {
    keys += t.translations.size() + t.rotations.size() + t.scales.size();
    rotation_keys += t.rotations.size();
  }
  // Float keys: 16 bytes (vec3) / 20 (quat); quantised: 4 (time) + 6, plus per-track tables.
  const std::size_t float_keys = 16 * keys + 4 * rotation_keys;
  EXPECT_GE(walk.memory_bytes(), float_keys);
  EXPECT_LT(q.memory_bytes(), 10 * keys + 4 * (3 * 50 + 1) + 24 * 2 * 50 + 2 * sizeof(Clip));
  EXPECT_LT(q.memory_bytes() * 100, walk.memory_bytes() * 60);
  std::printf(
      "[quant] 50-joint walk: %zu keys (%zu rotation), %zu bytes float, %zu bytes "
      "quantised (%.1f%%)\n",
      keys, rotation_keys, walk.memory_bytes(), q.memory_bytes(),
      100.0 * static_cast<double>(q.memory_bytes()) / static_cast<double>(walk.memory_bytes()));
}

TEST(Quantization, ForwardPlaybackDoesNotSearch) {
  const Clip q = quantize(make_extreme_clip());
  const int n = q.joint_count();
  SamplingCache cache(n), fresh(n);
  std::vector<JointTransform> a(static_cast<std::size_t>(n)), b(a.size());
  ASSERT_TRUE((SamplingJob{.clip = &q, .time = 0.0f, .cache = &cache, .output = a}.run()));
  EXPECT_EQ(cache.searches(), static_cast<std::uint64_t>(3 * n));
  for (float t = 0.0f; t <= 2.5f; t += 1.0f / 60.0f) {
    ASSERT_TRUE((SamplingJob{.clip = &q, .time = t, .cache = &cache, .output = a}.run()));
    fresh.invalidate();
    ASSERT_TRUE((SamplingJob{.clip = &q, .time = t, .cache = &fresh, .output = b}.run()));
    for (std::size_t j = 0; j < a.size(); ++j) {
      EXPECT_EQ(a[j].translation, b[j].translation);
      EXPECT_EQ(a[j].rotation, b[j].rotation);
      EXPECT_EQ(a[j].scale, b[j].scale);
    }
  }
  EXPECT_EQ(cache.searches(), static_cast<std::uint64_t>(3 * n))
      << "forward playback must step the cursors, not search";
  ASSERT_TRUE((SamplingJob{.clip = &q, .time = 0.2f, .cache = &cache, .output = a}.run()));
  EXPECT_EQ(cache.searches(), static_cast<std::uint64_t>(6 * n)) << "backwards searches again";
}

}  // namespace
}  // namespace spindle::anim
