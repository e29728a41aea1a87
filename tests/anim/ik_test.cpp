// Two-bone and aim IK: corrections applied through a local-to-model pass put the end on the target
// (or point it there), weight and pole behave, and degenerate inputs are refused with a Status.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

#include <spindle/anim/ik_job.h>
#include <spindle/anim/local_to_model_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;
using test::expect_near;

constexpr int kRoot = 0, kShoulder = 1, kElbow = 2, kHand = 3;
constexpr float kUpper = 1.0f, kLower = 0.8f;

// A rotated, offset root, then a shoulder, elbow and hand whose bones point down -y; the elbow
// hinges about its x axis (positive closes it) and starts a little bent.
Skeleton arm() {
  SkeletonBuilder b;
  b.add_joint(
      {.name = "root",
       .rest = {.translation = {0.3f, 1.2f, -0.2f}, .rotation = axis_angle(30, {0, 1, 1})}});
  b.add_joint({.name = "shoulder",
               .parent = kRoot,
               .rest = {.translation = {0.2f, 0, 0}, .rotation = axis_angle(10, {0, 0, 1})}});
  b.add_joint({.name = "elbow",
               .parent = kShoulder,
               .rest = {.translation = {0, -kUpper, 0}, .rotation = axis_angle(20, {1, 0, 0})}});
  b.add_joint({.name = "hand", .parent = kElbow, .rest = {.translation = {0, -kLower, 0}}});
  core::Result<Skeleton> r = b.build();
  EXPECT_TRUE(r) << r.message();
  return std::move(r.value());
}

struct Arm {
  Skeleton skeleton = arm();
  std::vector<JointTransform> local{skeleton.rest_pose().begin(), skeleton.rest_pose().end()};
  std::vector<glm::mat4> model = std::vector<glm::mat4>(4);

  Arm() { update(); }
  void update() {
    const LocalToModelJob ltm{.skeleton = &skeleton, .local = local, .model = model};
    ASSERT_TRUE(ltm.run());
  }
  glm::vec3 at(int joint) const { return glm::vec3(model[static_cast<std::size_t>(joint)][3]); }
  TwoBoneIkJob job(glm::vec3 target, glm::quat* start, glm::quat* mid, bool* reached) const {
    return {.start_joint = &model[kShoulder],
            .mid_joint = &model[kElbow],
            .end_joint = &model[kHand],
            .target = target,
            .pole_vector = {0, 0, 1},
            .mid_axis = {1, 0, 0},
            .start_correction = start,
            .mid_correction = mid,
            .reached = reached};
  }
  // Runs the job, applies its corrections and poses again.
  void solve(const TwoBoneIkJob& job) {
    ASSERT_TRUE(job.run());
    local[kShoulder].rotation = local[kShoulder].rotation * *job.start_correction;
    local[kElbow].rotation = local[kElbow].rotation * *job.mid_correction;
    update();
  }
};

float distance_to_line(glm::vec3 p, glm::vec3 origin, glm::vec3 dir) {
  return glm::length(glm::cross(p - origin, glm::normalize(dir)));
}

TEST(TwoBoneIk, ReachesTargetsWithinReach) {
  // Directions all around the shoulder, at distances from nearly folded to nearly straight.
  for (int i = 0; i < 40; ++i) {
    Arm arm;
    const glm::vec3 s = arm.at(kShoulder);
    const float yaw = 0.7f * static_cast<float>(i), pitch = 0.37f * static_cast<float>(i);
    const glm::vec3 dir(std::cos(pitch) * std::sin(yaw), std::sin(pitch),
                        std::cos(pitch) * std::cos(yaw));
    const float d = 0.25f + 1.5f * static_cast<float>(i) / 39.0f;  // |1 - 0.8| < d < 1.8
    const glm::vec3 target = s + d * dir;
    glm::quat start, mid;
    bool reached = false;
    arm.solve(arm.job(target, &start, &mid, &reached));
    EXPECT_TRUE(reached) << "i " << i;
    EXPECT_LT(glm::length(arm.at(kHand) - target), 1e-4f) << "i " << i;
    EXPECT_NEAR(glm::length(arm.at(kElbow) - s), kUpper, 1e-5f) << "bones keep their length";
  }
}

TEST(TwoBoneIk, OutOfReachPointsTheStraightChainAtTheTarget) {
  Arm arm;
  const glm::vec3 s = arm.at(kShoulder);
  const glm::vec3 target = s + glm::vec3(3, -1, 2);
  glm::quat start, mid;
  bool reached = true;
  arm.solve(arm.job(target, &start, &mid, &reached));
  EXPECT_FALSE(reached);
  expect_near(arm.at(kHand), s + (kUpper + kLower) * glm::normalize(target - s), 1e-4f);
  EXPECT_LT(distance_to_line(arm.at(kElbow), s, target - s), 1e-4f) << "the chain is straight";
}

TEST(TwoBoneIk, WeightBlendsFromTheUntouchedPose) {
  const glm::vec3 offset(0.4f, -0.9f, 0.6f);
  Arm none;
  glm::quat start, mid;
  TwoBoneIkJob job = none.job(none.at(kShoulder) + offset, &start, &mid, nullptr);
  job.weight = 0.0f;
  ASSERT_TRUE(job.run());
  EXPECT_EQ(start, glm::quat(1, 0, 0, 0));
  EXPECT_EQ(mid, glm::quat(1, 0, 0, 0));

  Arm full, half;
  const glm::vec3 target = full.at(kShoulder) + offset;
  const float before = glm::length(half.at(kHand) - target);
  glm::quat full_start, full_mid, half_start, half_mid;
  full.solve(full.job(target, &full_start, &full_mid, nullptr));
  TwoBoneIkJob halfway = half.job(target, &half_start, &half_mid, nullptr);
  halfway.weight = 0.5f;
  half.solve(halfway);
  const float after = glm::length(half.at(kHand) - target);
  EXPECT_GT(after, 1e-3f);
  EXPECT_LT(after, before);
  EXPECT_NEAR(glm::angle(half_start), 0.5f * glm::angle(full_start), 1e-4f);
  EXPECT_NEAR(glm::angle(half_mid), 0.5f * glm::angle(full_mid), 1e-4f);
}

TEST(TwoBoneIk, ThePoleVectorDecidesTheBendPlane) {
  for (const glm::vec3 pole : {glm::vec3(0, 0, 1), glm::vec3(0, 0, -1), glm::vec3(1, 0, 0)}) {
    Arm arm;
    const glm::vec3 s = arm.at(kShoulder);
    const glm::vec3 target = s + glm::vec3(0.2f, -1.2f, 0.1f);
    glm::quat start, mid;
    TwoBoneIkJob job = arm.job(target, &start, &mid, nullptr);
    job.pole_vector = pole;
    arm.solve(job);
    EXPECT_LT(glm::length(arm.at(kHand) - target), 1e-4f);
    // The elbow's offset from the shoulder-target line lies along the pole's perpendicular part.
    const glm::vec3 dir = glm::normalize(target - s);
    const glm::vec3 elbow = arm.at(kElbow) - s;
    const glm::vec3 out = elbow - glm::dot(elbow, dir) * dir;
    const glm::vec3 want = glm::normalize(pole - glm::dot(pole, dir) * dir);
    EXPECT_NEAR(glm::dot(glm::normalize(out), want), 1.0f, 1e-4f)
        << "pole " << pole.x << "," << pole.y << "," << pole.z;
  }
}

TEST(TwoBoneIk, SofteningEasesTheLastStretch) {
  Arm arm;
  const glm::vec3 s = arm.at(kShoulder);
  const glm::vec3 target = s + (kUpper + kLower) * glm::normalize(glm::vec3(1, -1, 0));
  glm::quat start, mid;
  bool reached = true;
  TwoBoneIkJob job = arm.job(target, &start, &mid, &reached);
  job.soften = 0.8f;
  arm.solve(job);
  EXPECT_FALSE(reached);
  const float short_by = glm::length(arm.at(kHand) - target);
  EXPECT_GT(short_by, 0.01f);
  EXPECT_LT(short_by, 0.2f * (kUpper + kLower));
  EXPECT_LT(distance_to_line(arm.at(kHand), s, target - s), 1e-4f) << "still on the target line";
}

TEST(TwoBoneIk, DegenerateInputsAreRefused) {
  Arm arm;
  glm::quat start, mid;
  const glm::vec3 target = arm.at(kShoulder) + glm::vec3(0.5f, -0.5f, 0);
  auto refused = [](const TwoBoneIkJob& job, const char* why) {
    const core::Status s = job.run();
    EXPECT_FALSE(s) << why;
    EXPECT_FALSE(s.message().empty()) << why;
  };
  refused(arm.job(arm.at(kShoulder), &start, &mid, nullptr), "target at the start");
  TwoBoneIkJob j = arm.job(target, &start, &mid, nullptr);
  j.end_joint = &arm.model[kElbow];
  refused(j, "zero-length lower bone");
  j = arm.job(target, &start, &mid, nullptr);
  j.mid_joint = &arm.model[kShoulder];
  refused(j, "zero-length upper bone");
  j = arm.job(glm::vec3(std::numeric_limits<float>::quiet_NaN()), &start, &mid, nullptr);
  refused(j, "NaN target");
  j = arm.job(target, &start, &mid, nullptr);
  glm::mat4 inf = arm.model[kElbow];
  inf[3][0] = std::numeric_limits<float>::infinity();
  j.mid_joint = &inf;
  refused(j, "infinite matrix");
  j = arm.job(target, &start, &mid, nullptr);
  j.mid_axis = {0, 1, 0};
  refused(j, "mid axis along the bones");
  j.mid_axis = {0, 0, 0};
  refused(j, "zero mid axis");
  j = arm.job(target, &start, &mid, nullptr);
  j.pole_vector = {0, 0, 0};
  refused(j, "zero pole");
  j = arm.job(target, &start, &mid, nullptr);
  j.weight = 1.5f;
  refused(j, "weight above 1");
  j.weight = 1.0f;
  j.soften = 0.0f;
  refused(j, "soften 0");
  refused(arm.job(target, nullptr, &mid, nullptr), "no output");
}

// A head at a rotated place looking down +z, eyes above and in front of the joint.
struct Head {
  glm::mat4 model = glm::translate(glm::mat4(1.0f), glm::vec3(0.1f, 1.6f, 0.2f)) *
                    glm::mat4_cast(axis_angle(40, {0.3f, 1, -0.2f}));
  AimIkJob job(glm::vec3 target, glm::quat* out, bool* reached = nullptr) const {
    return {.joint = &model,
            .target = target,
            .forward = {0, 0, 1},
            .offset = {0, 0.1f, 0.05f},
            .up = {0, 1, 0},
            .pole_vector = {0, 1, 0},
            .correction = out,
            .reached = reached};
  }
  // The joint's matrix after a local correction.
  glm::mat4 corrected(const glm::quat& c) const { return model * glm::mat4_cast(c); }
};

TEST(AimIk, TheOffsetRayPassesThroughTheTarget) {
  const Head head;
  for (const glm::vec3 target : {glm::vec3(2, 1.8f, 3), glm::vec3(-1, 0.5f, 0.4f),
                                 glm::vec3(0.1f, 1.6f, -2), glm::vec3(0.3f, 5, 0.2f)}) {
    glm::quat c;
    bool reached = false;
    ASSERT_TRUE(head.job(target, &c, &reached).run());
    EXPECT_TRUE(reached);
    const glm::mat4 m = head.corrected(c);
    const glm::vec3 eye(m * glm::vec4(0, 0.1f, 0.05f, 1));
    const glm::vec3 forward = glm::normalize(glm::mat3(m) * glm::vec3(0, 0, 1));
    EXPECT_NEAR(glm::dot(glm::normalize(target - eye), forward), 1.0f, 1e-5f);
    // Up leans toward the pole: up, forward and pole in one plane, up on the pole's side.
    const glm::vec3 up = glm::mat3(m) * glm::vec3(0, 1, 0);
    EXPECT_NEAR(glm::dot(glm::cross(forward, up), glm::vec3(0, 1, 0)), 0.0f, 1e-4f);
    EXPECT_GT(glm::dot(up, glm::vec3(0, 1, 0)), 0.0f);
  }
}

TEST(AimIk, WeightBlendsAndATooCloseTargetIsAimedFromTheJoint) {
  const Head head;
  const glm::vec3 target(2, 1.8f, 3);
  glm::quat full, half, none;
  ASSERT_TRUE(head.job(target, &full).run());
  AimIkJob j = head.job(target, &half);
  j.weight = 0.5f;
  ASSERT_TRUE(j.run());
  EXPECT_NEAR(glm::angle(half), 0.5f * glm::angle(full), 1e-4f);
  j.weight = 0.0f;
  j.correction = &none;
  ASSERT_TRUE(j.run());
  EXPECT_EQ(none, glm::quat(1, 0, 0, 0));

  // 5 cm from the joint, behind the eyes' ray: forward from the joint origin aims instead.
  const glm::vec3 near = glm::vec3(head.model * glm::vec4(0.03f, 0.0f, -0.04f, 1));
  glm::quat c;
  bool reached = true;
  ASSERT_TRUE(head.job(near, &c, &reached).run());
  EXPECT_FALSE(reached);
  const glm::mat4 m = head.corrected(c);
  const glm::vec3 forward = glm::normalize(glm::mat3(m) * glm::vec3(0, 0, 1));
  EXPECT_NEAR(glm::dot(glm::normalize(near - glm::vec3(m[3])), forward), 1.0f, 1e-5f);
}

TEST(AimIk, DegenerateInputsAreRefused) {
  const Head head;
  glm::quat c;
  EXPECT_FALSE(head.job(glm::vec3(head.model[3]), &c).run()) << "target at the joint";
  AimIkJob j = head.job({1, 1, 1}, &c);
  j.forward = {0, 0, 0};
  EXPECT_FALSE(j.run()) << "zero forward";
  j = head.job({1, 1, 1}, &c);
  j.up = {0, 0, 0};
  EXPECT_FALSE(j.run()) << "zero up";
  j = head.job({1, std::numeric_limits<float>::infinity(), 1}, &c);
  EXPECT_FALSE(j.run()) << "infinite target";
  j = head.job({1, 1, 1}, &c);
  j.offset.x = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(j.run()) << "NaN offset";
  j = head.job({1, 1, 1}, &c);
  j.weight = -0.1f;
  EXPECT_FALSE(j.run()) << "negative weight";
  EXPECT_FALSE(head.job({1, 1, 1}, nullptr).run()) << "no output";
}

}  // namespace
}  // namespace spindle::anim
