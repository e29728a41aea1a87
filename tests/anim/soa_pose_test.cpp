// SoA poses (soa_pose.h): every job that takes or gives an SoaTransform pose must give the same
// bits as its JointTransform form, for every clip kind, joint count (n % 4 = 0..3), layer set and
// time, and must refuse mixed or mis-sized poses with a message naming what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <spindle/anim/blending_job.h>
#include <spindle/anim/clip.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/packed_clip.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/soa_pose.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

bool same_bits(const JointTransform& a, const JointTransform& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Every joint of `soa` equals `aos` to the bit, and the spare lanes hold the identity.
::testing::AssertionResult same_pose(std::span<const JointTransform> aos,
                                     std::span<const SoaTransform> soa) {
  if (soa.size() != soa_count(aos.size()))
    return ::testing::AssertionFailure() << soa.size() << " entries for " << aos.size();
  for (std::size_t j = 0; j < 4 * soa.size(); ++j) {
    const JointTransform got = soa[j / 4].get(static_cast<int>(j % 4));
    const JointTransform want = j < aos.size() ? aos[j] : JointTransform{};
    if (!same_bits(got, want))
      return ::testing::AssertionFailure()
             << (j < aos.size() ? "joint " : "spare lane of joint ") << j << " differs";
  }
  return ::testing::AssertionSuccess();
}

JointTransform random_joint(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  JointTransform t;
  t.translation = {u(rng), u(rng), u(rng)};
  t.rotation = glm::normalize(glm::quat(u(rng), u(rng), u(rng), u(rng)));
  t.scale = glm::vec3(1.0f + 0.2f * u(rng));
  return t;
}

TEST(SoaPose, ToAndFromSoaKeepEveryJointAndFillSpareLanesWithIdentity) {
  std::mt19937 rng(3);
  for (std::size_t n : {1u, 4u, 5u, 7u, 50u}) {
    std::vector<JointTransform> pose(n), back(n);
    for (JointTransform& t : pose) t = random_joint(rng);
    std::vector<SoaTransform> soa(soa_count(n));
    std::memset(soa.data(), 0xff, soa.size() * sizeof(SoaTransform));  // NaN everywhere first
    to_soa(pose, soa);
    EXPECT_TRUE(same_pose(pose, soa)) << n << " joints";
    from_soa(soa, back);
    for (std::size_t j = 0; j < n; ++j) EXPECT_TRUE(same_bits(pose[j], back[j])) << j;
  }
}

// Sampling into soa_output gives the bits of output, for float, quantized, compressed and packed
// clips, forward, backward and jumping, with caches used the same way on both sides.
TEST(SoaPose, SamplingGivesTheSameBitsInEitherLayout) {
  for (const test::FourWideClips& c : test::four_wide_clips()) {
    const auto n = static_cast<std::size_t>(c.joints);
    Clip quantized = c.walk.quantized().value();
    Clip compressed = c.walk.compressed().value();
    Clip lean = c.lean.compressed().value();
    std::vector<std::byte> bytes(PackedClip::size_of(compressed));
    ASSERT_TRUE(PackedClip::pack(compressed, bytes));
    const PackedClip packed = PackedClip::open(bytes).value();
    struct Source {
      const Clip* clip;
      const PackedClip* packed;
      const char* name;
    };
    const Source sources[] = {{&c.walk, nullptr, "float"},
                              {&c.lean, nullptr, "float, optimised"},
                              {&quantized, nullptr, "quantized"},
                              {&compressed, nullptr, "compressed"},
                              {&lean, nullptr, "compressed, optimised"},
                              {nullptr, &packed, "packed"}};
    std::vector<float> times = test::times_around_keys(c.walk.tracks(), c.walk.duration());
    // Then backwards and a few jumps: reseeks on both sides.
    for (std::size_t i = times.size(); i-- > 0;) times.push_back(times[i]);
    times.insert(times.end(), {0.9f, 0.1f, 0.55f, 0.05f});
    for (const Source& s : sources) {
      SamplingCache aos_cache(c.joints), soa_cache(c.joints);
      std::vector<JointTransform> aos(n);
      std::vector<SoaTransform> soa(soa_count(n));
      for (float t : times) {
        ASSERT_TRUE((SamplingJob{
            .clip = s.clip, .packed = s.packed, .time = t, .cache = &aos_cache, .output = aos}
                         .run()));
        ASSERT_TRUE((SamplingJob{
            .clip = s.clip, .packed = s.packed, .time = t, .cache = &soa_cache, .soa_output = soa}
                         .run()));
        ASSERT_TRUE(same_pose(aos, soa)) << s.name << ", " << c.joints << " joints, t = " << t;
      }
    }
  }
}

// Blending SoA layers gives the bits of blending the same layers as JointTransform arrays: one to
// three layers, weights that sum to 1 or not, a total under the threshold (the rest pose fills
// in), per-joint masks, a rotation and its negation, and additive layers on top.
TEST(SoaPose, BlendingGivesTheSameBitsInEitherLayout) {
  std::mt19937 rng(11);
  for (std::size_t n : {3u, 4u, 7u, 18u, 50u}) {
    std::vector<JointTransform> rest(n);
    for (JointTransform& t : rest) t = random_joint(rng);
    std::vector<std::vector<JointTransform>> poses(4, std::vector<JointTransform>(n));
    for (auto& p : poses)
      for (JointTransform& t : p) t = random_joint(rng);
    // Joint 1 of poses 0 and 1: opposite signs of one rotation (the hemisphere test's case).
    poses[1][1].rotation = -poses[0][1].rotation;
    std::vector<std::vector<SoaTransform>> soa(poses.size(),
                                               std::vector<SoaTransform>(soa_count(n)));
    for (std::size_t p = 0; p < poses.size(); ++p) to_soa(poses[p], soa[p]);
    std::vector<float> mask(n);
    for (std::size_t j = 0; j < n; ++j) mask[j] = j % 3 == 0 ? 0.0f : 0.25f * (j % 5);

    struct Case {
      const char* name;
      std::vector<float> weights;
      bool masked;
      bool additive;
    };
    const Case cases[] = {{"one layer", {1.0f}, false, false},
                          {"0.7 and 0.3", {0.7f, 0.3f}, false, false},
                          {"equal halves", {0.5f, 0.5f}, false, false},
                          {"three, not summing to 1", {0.2f, 0.9f, 0.4f}, false, false},
                          {"under the threshold", {0.04f, 0.03f}, false, false},
                          {"a zero weight", {0.0f, 0.6f}, false, false},
                          {"masked", {0.7f, 0.3f}, true, false},
                          {"with an additive layer", {0.7f, 0.3f}, false, true}};
    for (const Case& k : cases) {
      std::vector<BlendLayer> aos_layers, soa_layers;
      for (std::size_t p = 0; p < k.weights.size(); ++p) {
        const std::span<const float> m =
            k.masked && p == 1 ? std::span<const float>(mask) : std::span<const float>();
        aos_layers.push_back({.pose = poses[p], .weight = k.weights[p], .joint_weights = m});
        soa_layers.push_back({.soa_pose = soa[p], .weight = k.weights[p], .joint_weights = m});
      }
      std::vector<BlendLayer> aos_add, soa_add;
      if (k.additive) {
        aos_add.push_back({.pose = poses[3], .weight = 0.5f, .joint_weights = mask});
        soa_add.push_back({.soa_pose = soa[3], .weight = 0.5f, .joint_weights = mask});
      }
      std::vector<JointTransform> aos_out(n);
      std::vector<SoaTransform> soa_out(soa_count(n));
      ASSERT_TRUE((BlendingJob{
          .rest_pose = rest, .layers = aos_layers, .additive_layers = aos_add, .output = aos_out}
                       .run()));
      ASSERT_TRUE((BlendingJob{.rest_pose = rest,
                               .layers = soa_layers,
                               .additive_layers = soa_add,
                               .soa_output = soa_out}
                       .run()));
      EXPECT_TRUE(same_pose(aos_out, soa_out)) << k.name << ", " << n << " joints";
    }
  }
}

// LocalToModelJob from an SoA pose: the same model matrices and palette to the bit.
TEST(SoaPose, LocalToModelGivesTheSameBitsInEitherLayout) {
  for (int joints : {16, 17, 18, 19, 50}) {
    const Character ch =
        make_character({.seed = 5, .joint_count = joints, .vertex_count = 16}).value();
    const auto n = static_cast<std::size_t>(joints);
    std::vector<JointTransform> local(n);
    std::vector<SoaTransform> soa(soa_count(n));
    SamplingCache cache(joints);
    ASSERT_TRUE(
        (SamplingJob{.clip = &ch.walk, .time = 0.3f, .cache = &cache, .output = local}.run()));
    to_soa(local, soa);
    std::vector<glm::mat4> m1(n), m2(n), p1(n), p2(n);
    const glm::mat4 root = glm::translate(glm::mat4(1.0f), glm::vec3(1, 2, 3));
    ASSERT_TRUE((LocalToModelJob{
        .skeleton = &ch.skeleton, .local = local, .model = m1, .root = root, .palette = p1}
                     .run()));
    ASSERT_TRUE((LocalToModelJob{
        .skeleton = &ch.skeleton, .soa_local = soa, .model = m2, .root = root, .palette = p2}
                     .run()));
    EXPECT_EQ(std::memcmp(m1.data(), m2.data(), n * sizeof(glm::mat4)), 0) << joints;
    EXPECT_EQ(std::memcmp(p1.data(), p2.data(), n * sizeof(glm::mat4)), 0) << joints;
  }
}

::testing::AssertionResult fails_with(const core::Status& s, const std::string& words) {
  if (s) return ::testing::AssertionFailure() << "accepted";
  if (s.message().find(words) == std::string::npos)
    return ::testing::AssertionFailure() << "message: " << s.message();
  return ::testing::AssertionSuccess();
}

TEST(SoaPose, JobsRefuseMixedAndMisSizedPoses) {
  const Character ch = make_character({.seed = 2, .joint_count = 18, .vertex_count = 16}).value();
  std::vector<JointTransform> aos(18);
  std::vector<SoaTransform> soa(soa_count(18)), short_soa(4);
  SamplingCache cache(18);
  EXPECT_TRUE(fails_with(SamplingJob{.clip = &ch.walk, .cache = &cache}.run(), "no output"));
  EXPECT_TRUE(fails_with(
      SamplingJob{.clip = &ch.walk, .cache = &cache, .output = aos, .soa_output = soa}.run(),
      "both output and soa_output"));
  EXPECT_TRUE(
      fails_with(SamplingJob{.clip = &ch.walk, .cache = &cache, .soa_output = short_soa}.run(),
                 "soa_output has 4 entries, a clip of 18 joints needs 5"));

  const std::span<const JointTransform> rest = ch.skeleton.rest_pose();
  const BlendLayer aos_layer[] = {{.pose = aos, .weight = 1.0f}};
  const BlendLayer soa_layer[] = {{.soa_pose = soa, .weight = 1.0f}};
  const BlendLayer short_layer[] = {{.soa_pose = short_soa, .weight = 1.0f}};
  EXPECT_TRUE(
      fails_with(BlendingJob{.rest_pose = rest, .layers = aos_layer, .soa_output = soa}.run(),
                 "layer 0 is a JointTransform pose; the output is SoA"));
  EXPECT_TRUE(fails_with(BlendingJob{.rest_pose = rest, .layers = soa_layer, .output = aos}.run(),
                         "layer 0 is an SoA pose; the output is JointTransform"));
  EXPECT_TRUE(
      fails_with(BlendingJob{.rest_pose = rest, .layers = short_layer, .soa_output = soa}.run(),
                 "layer 0 has 4 SoA entries, 18 joints need 5"));
  EXPECT_TRUE(fails_with(
      BlendingJob{
          .rest_pose = rest, .layers = soa_layer, .additive_layers = aos_layer, .soa_output = soa}
          .run(),
      "additive layer 0 is a JointTransform pose"));
  EXPECT_TRUE(fails_with(
      BlendingJob{.rest_pose = rest, .layers = soa_layer, .output = aos, .soa_output = soa}.run(),
      "both output and soa_output"));
  EXPECT_TRUE(
      fails_with(BlendingJob{.rest_pose = rest, .layers = soa_layer, .soa_output = short_soa}.run(),
                 "soa_output has 4 entries, 18 joints need 5"));

  std::vector<glm::mat4> model(18);
  EXPECT_TRUE(fails_with(
      LocalToModelJob{.skeleton = &ch.skeleton, .local = aos, .soa_local = soa, .model = model}
          .run(),
      "both local and soa_local"));
  EXPECT_TRUE(fails_with(
      LocalToModelJob{.skeleton = &ch.skeleton, .soa_local = short_soa, .model = model}.run(),
      "soa_local has 4 entries, 18 joints need 5"));
}

}  // namespace
}  // namespace spindle::anim
