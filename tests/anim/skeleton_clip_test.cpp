#include <gtest/gtest.h>

#include <limits>

#include <spindle/anim/clip.h>
#include <spindle/anim/skeleton.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

TEST(Skeleton, BuildKeepsOrderParentsNamesAndNormalisesRest) {
  SkeletonBuilder b;
  JointDesc root{.name = "root"};
  root.rest.rotation = glm::quat(2.0f, 0.0f, 0.0f, 0.0f);
  root.inverse_bind = glm::mat4(2.0f);
  EXPECT_EQ(b.add_joint(root), 0);
  EXPECT_EQ(b.add_joint({.name = "a", .parent = 0}), 1);
  EXPECT_EQ(b.add_joint({.name = "b", .parent = 1}), 2);
  EXPECT_EQ(b.add_joint({.name = "c", .parent = 0}), 3);
  core::Result<Skeleton> r = b.build();
  ASSERT_TRUE(r) << r.message();
  const Skeleton& s = r.value();
  ASSERT_EQ(s.joint_count(), 4);
  EXPECT_EQ(std::vector<int>(s.parents().begin(), s.parents().end()),
            (std::vector<int>{-1, 0, 1, 0}));
  EXPECT_EQ(s.names()[2], "b");
  EXPECT_EQ(s.find("c"), 3);
  EXPECT_EQ(s.find("nope"), -1);
  EXPECT_FLOAT_EQ(s.rest_pose()[0].rotation.w, 1.0f);
  EXPECT_FLOAT_EQ(s.inverse_binds()[0][1][1], 2.0f);
}

core::Result<Skeleton> build(std::vector<JointDesc> joints) {
  SkeletonBuilder b;
  for (JointDesc& j : joints) b.add_joint(std::move(j));
  return b.build();
}

TEST(Skeleton, RejectsBadHierarchiesWithClearMessages) {
  EXPECT_EQ(build({}).message(), "skeleton: no joints");
  EXPECT_EQ(build({{.name = "root"}, {.name = "a", .parent = 5}}).message(),
            "skeleton: joint 'a' (1): parent 5 out of range [-1, 1]");
  EXPECT_EQ(build({{.name = "root", .parent = -2}}).message(),
            "skeleton: joint 'root' (0): parent -2 out of range [-1, 0]");
  EXPECT_EQ(build({{.name = "root"}, {.name = "a", .parent = 1}}).message(),
            "skeleton: joint 'a' (1): is its own parent (cycle)");
  // 1 -> 2 -> 1: a real cycle.
  EXPECT_EQ(
      build({{.name = "root"}, {.name = "a", .parent = 2}, {.name = "b", .parent = 1}}).message(),
      "skeleton: joint 'a' (1): cycle in the parent chain");
  // 1 -> 2 -> root: acyclic but out of order.
  EXPECT_EQ(
      build({{.name = "root"}, {.name = "a", .parent = 2}, {.name = "b", .parent = 0}}).message(),
      "skeleton: joint 'a' (1): parent 2 comes after it (parents must come before children)");
  EXPECT_EQ(build({{.name = "root"}, {.name = "root", .parent = 0}}).message(),
            "skeleton: joint 'root' (1): duplicate name");
  EXPECT_EQ(build({{.name = ""}}).message(), "skeleton: joint 0 has no name");
  JointDesc nan{.name = "n"};
  nan.rest.translation.y = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(build({nan}).message(), "skeleton: joint 'n' (0): rest pose is not finite");
  JointDesc zero{.name = "z"};
  zero.rest.rotation = glm::quat(0.0f, 0.0f, 0.0f, 0.0f);
  EXPECT_EQ(build({zero}).message(), "skeleton: joint 'z' (0): rest rotation has zero length");
}

std::vector<JointTrack> constant_tracks(int joints) {
  std::vector<JointTrack> tracks(joints);
  for (JointTrack& t : tracks) {
    t.translations = {{0.0f, glm::vec3(0.0f)}};
    t.rotations = {{0.0f, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)}};
    t.scales = {{0.0f, glm::vec3(1.0f)}};
  }
  return tracks;
}

TEST(Clip, CreateNormalisesRotationsAndChecksSkeleton) {
  std::vector<JointTrack> tracks = constant_tracks(2);
  tracks[1].rotations = {{0.0f, glm::quat(0.0f, 0.0f, 3.0f, 0.0f)}, {0.5f, glm::quat(1, 0, 0, 0)}};
  core::Result<Clip> c = Clip::create("walk", 1.0f, tracks);
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c.value().joint_count(), 2);
  EXPECT_FLOAT_EQ(c.value().tracks()[1].rotations[0].value.y, 1.0f);
  core::Result<Skeleton> s = build({{.name = "root"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(c.value().check_skeleton(s.value()).message(),
            "clip 'walk': animates 2 joints, skeleton has 1");
}

TEST(Clip, RejectsBadTracksWithClearMessages) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Clip::create("c", 0.0f, constant_tracks(1)).message(),
            "clip 'c': duration 0.000000 must be finite and > 0");
  EXPECT_EQ(Clip::create("c", 1.0f, {}).message(), "clip 'c': no joint tracks");

  std::vector<JointTrack> t = constant_tracks(2);
  t[1].scales.clear();
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(), "clip 'c': joint 1 scale track has no keys");

  t = constant_tracks(2);
  t[1].translations = {{0.5f, glm::vec3(0)}, {0.5f, glm::vec3(1)}};
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(),
            "clip 'c': joint 1 translation track key 1: times not strictly increasing");

  t = constant_tracks(1);
  t[0].translations = {{0.5f, glm::vec3(0)}, {0.25f, glm::vec3(1)}};
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(),
            "clip 'c': joint 0 translation track key 1: times not strictly increasing");

  t = constant_tracks(1);
  t[0].rotations = {{0.0f, glm::quat(1, 0, 0, 0)}, {2.0f, glm::quat(1, 0, 0, 0)}};
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(),
            "clip 'c': joint 0 rotation track key 1: time 2.000000 outside [0, 1.000000]");

  t = constant_tracks(1);
  t[0].scales[0].value.z = nan;
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(),
            "clip 'c': joint 0 scale track key 0: value is not finite");

  t = constant_tracks(1);
  t[0].translations[0].time = nan;
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(),
            "clip 'c': joint 0 translation track key 0: time is not finite");

  t = constant_tracks(1);
  t[0].rotations[0].value = glm::quat(0, 0, 0, 0);
  EXPECT_EQ(Clip::create("c", 1.0f, t).message(),
            "clip 'c': joint 0 rotation track key 0: zero-length rotation");
}

}  // namespace
}  // namespace spindle::anim
