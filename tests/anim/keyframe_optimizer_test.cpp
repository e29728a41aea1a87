// KeyframeOptimizer: the optimised clip stays within the tolerance of the original in model space
// (and within tolerance + quantisation once compressed), it removes keys, it is deterministic,
// and it refuses bad settings and clips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <spindle/anim/keyframe_optimizer.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>

#include "walk_like_clip.h"

namespace spindle::anim {
namespace {

constexpr float kDistance = 0.1f;

// Model-space positions of each joint and of a point kDistance along each of its axes.
std::vector<glm::vec3> watched_points(const Clip& clip, const Skeleton& skeleton, float t,
                                      SamplingCache& cache) {
  const auto n = static_cast<std::size_t>(clip.joint_count());
  std::vector<JointTransform> local(n);
  std::vector<glm::mat4> model(n);
  EXPECT_TRUE((SamplingJob{.clip = &clip, .time = t, .cache = &cache, .output = local}.run()));
  EXPECT_TRUE((LocalToModelJob{.skeleton = &skeleton, .local = local, .model = model}.run()));
  std::vector<glm::vec3> points;
  for (const glm::mat4& m : model) {
    points.push_back(glm::vec3(m[3]));
    for (int axis = 0; axis < 3; ++axis) {
      glm::vec4 p(0, 0, 0, 1);
      p[axis] = kDistance;
      points.push_back(glm::vec3(m * p));
    }
  }
  return points;
}

// 1000 evenly spaced times, every key time of the original and 7 points between neighbours.
std::vector<float> many_times(const Clip& clip) {
  std::vector<float> times;
  for (int i = 0; i <= 1000; ++i)
    times.push_back(clip.duration() * static_cast<float>(i) / 1000.0f);
  const JointTrack& t = clip.tracks()[0];
  for (std::size_t k = 0; k < t.rotations.size(); ++k) {
    times.push_back(t.rotations[k].time);
    for (int f = 1; k > 0 && f < 8; ++f)
      times.push_back(t.rotations[k - 1].time +
                      static_cast<float>(f) / 8.0f *
                          (t.rotations[k].time - t.rotations[k - 1].time));
  }
  std::sort(times.begin(), times.end());
  return times;
}

// Per watched point, the largest distance between the two clips over many_times().
std::vector<double> point_errors(const Clip& a, const Clip& b, const Skeleton& skeleton) {
  SamplingCache ca(a.joint_count()), cb(b.joint_count());
  std::vector<double> worst;
  for (float t : many_times(a)) {
    const std::vector<glm::vec3> pa = watched_points(a, skeleton, t, ca);
    const std::vector<glm::vec3> pb = watched_points(b, skeleton, t, cb);
    worst.resize(pa.size(), 0.0);
    for (std::size_t i = 0; i < pa.size(); ++i)
      worst[i] = std::max(worst[i], static_cast<double>(glm::length(pa[i] - pb[i])));
  }
  return worst;
}

double max_of(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

std::size_t key_count(const Clip& clip) {
  std::size_t n = 0;
  for (const JointTrack& t : clip.decoded_tracks())
    n += t.translations.size() + t.rotations.size() + t.scales.size();
  return n;
}

// How far the quantisation bound of `q` can move each watched point: every joint on the chain
// adds its translation error and, times the reach from it to the point, its rotation and scale
// errors (10% over for the scales along the chain and float rounding).
std::vector<double> quantisation_reach(const Clip& original, const Clip& q,
                                       const Skeleton& skeleton) {
  const QuantizationError e = q.error_bound();
  const auto n = static_cast<std::size_t>(skeleton.joint_count());
  std::vector<double> bound(4 * n, 0.0);
  SamplingCache cache(original.joint_count());
  std::vector<double> reach(4 * n * n, 0.0);  // [point][joint on its chain]
  for (float t : many_times(original)) {
    const std::vector<glm::vec3> p = watched_points(original, skeleton, t, cache);
    for (std::size_t i = 0; i < 4 * n; ++i)
      for (int a = static_cast<int>(i / 4); a >= 0;
           a = skeleton.parents()[static_cast<std::size_t>(a)])
        reach[i * n + static_cast<std::size_t>(a)] =
            std::max(reach[i * n + static_cast<std::size_t>(a)],
                     static_cast<double>(glm::length(p[i] - p[4 * static_cast<std::size_t>(a)])));
  }
  for (std::size_t i = 0; i < 4 * n; ++i)
    for (int a = static_cast<int>(i / 4); a >= 0;
         a = skeleton.parents()[static_cast<std::size_t>(a)])
      bound[i] +=
          1.1 * (std::sqrt(3.0) * e.translation + (e.rotation + std::sqrt(3.0) * e.scale) *
                                                      reach[i * n + static_cast<std::size_t>(a)]);
  return bound;
}

struct Fixture {
  Character character = make_character({.seed = 5}).value();
  Clip walk = test::make_walk_like_clip(character.skeleton);
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

TEST(KeyframeOptimizer, StaysWithinTheToleranceInModelSpace) {
  const Fixture& f = fixture();
  for (float tolerance : {0.0001f, 0.001f, 0.01f}) {
    const Clip lean = KeyframeOptimizer{.tolerance = tolerance, .distance = kDistance}
                          .run(f.walk, f.character.skeleton)
                          .value();
    EXPECT_LT(key_count(lean), key_count(f.walk));
    const double error = max_of(point_errors(f.walk, lean, f.character.skeleton));
    std::printf("tolerance %.4f m: %zu of %zu keys, worst error %.6f m\n", tolerance,
                key_count(lean), key_count(f.walk), error);
    // Checked at key times and three points between; the motion bends a little in between.
    EXPECT_LE(error, 1.02 * tolerance) << tolerance;
  }
}

TEST(KeyframeOptimizer, CompressedResultStaysWithinToleranceAndQuantisation) {
  const Fixture& f = fixture();
  const Skeleton& skeleton = f.character.skeleton;
  const float tolerance = 0.001f;
  const Clip lean = KeyframeOptimizer{.tolerance = tolerance, .distance = kDistance}
                        .run(f.walk, skeleton)
                        .value();
  const Clip small = lean.compressed().value();
  const std::vector<double> error = point_errors(f.walk, small, skeleton);
  const std::vector<double> quant = quantisation_reach(f.walk, small, skeleton);
  double worst_over = -1.0;
  for (std::size_t i = 0; i < error.size(); ++i) {
    EXPECT_LE(error[i], 1.02 * tolerance + quant[i]) << "point " << i;
    worst_over = std::max(worst_over, error[i] - quant[i]);
  }
  const Clip full = f.walk.compressed().value();
  std::printf(
      "walk-like clip: float %zu B, 16-bit %zu B, compressed %zu B, optimised (1 mm at "
      "10 cm) + compressed %zu B; worst error %.6f m\n",
      f.walk.memory_bytes(), f.walk.quantized().value().memory_bytes(), full.memory_bytes(),
      small.memory_bytes(), max_of(error));
  EXPECT_LE(small.memory_bytes(), 31'000u);  // issue 16's target
}

TEST(KeyframeOptimizer, KeepsEndsAndIsDeterministic) {
  const Fixture& f = fixture();
  const KeyframeOptimizer opt{.tolerance = 1.0f, .distance = kDistance};  // removes all it may
  const Clip a = opt.run(f.walk, f.character.skeleton).value();
  const Clip b = opt.run(f.walk, f.character.skeleton).value();
  ASSERT_EQ(a.tracks().size(), f.walk.tracks().size());
  for (std::size_t j = 0; j < a.tracks().size(); ++j) {
    const JointTrack &x = a.tracks()[j], &y = b.tracks()[j], &src = f.walk.tracks()[j];
    ASSERT_EQ(x.rotations.size(), y.rotations.size());
    for (std::size_t k = 0; k < x.rotations.size(); ++k) {
      EXPECT_EQ(x.rotations[k].time, y.rotations[k].time);
      EXPECT_EQ(x.rotations[k].value, y.rotations[k].value);
    }
    EXPECT_EQ(x.translations.front().time, src.translations.front().time);
    EXPECT_EQ(x.translations.back().time, src.translations.back().time);
    EXPECT_EQ(x.rotations.back().time, src.rotations.back().time);
    EXPECT_EQ(x.scales.back().time, src.scales.back().time);
  }
  // A clip with nothing to remove comes back with the same keys.
  const Clip& still = f.character.idle;
  const Clip same = KeyframeOptimizer{.tolerance = 1e-9f, .distance = kDistance}
                        .run(still, f.character.skeleton)
                        .value();
  EXPECT_EQ(key_count(same), key_count(still));
}

TEST(KeyframeOptimizer, RefusesBadSettingsAndClips) {
  const Fixture& f = fixture();
  const Skeleton& skeleton = f.character.skeleton;
  const auto message = [&](KeyframeOptimizer opt, const Clip& clip, const Skeleton& s) {
    core::Result<Clip> r = opt.run(clip, s);
    EXPECT_FALSE(r);
    return r ? std::string() : r.message();
  };
  EXPECT_NE(message({.tolerance = 0.0f}, f.walk, skeleton).find("tolerance"), std::string::npos);
  EXPECT_NE(message({.tolerance = NAN}, f.walk, skeleton).find("tolerance"), std::string::npos);
  EXPECT_NE(message({.distance = -1.0f}, f.walk, skeleton).find("distance"), std::string::npos);
  EXPECT_NE(message({}, f.walk.quantized().value(), skeleton).find("optimise the float clip"),
            std::string::npos);
  EXPECT_NE(message({}, f.walk.compressed().value(), skeleton).find("optimise the float clip"),
            std::string::npos);
  const Skeleton other = make_character({.joint_count = 20}).value().skeleton;
  EXPECT_NE(message({}, f.walk, other).find("skeleton has 20"), std::string::npos);
}

}  // namespace
}  // namespace spindle::anim
