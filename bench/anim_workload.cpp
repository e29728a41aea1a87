#include "anim_workload.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

namespace spindle::bench {
namespace {

constexpr float kTwoPi = 6.28318530718f;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "make_anim_workload: %s\n", what.c_str());
  std::abort();
}

struct Joints {
  anim::SkeletonBuilder builder;
  int add(std::string name, int parent, glm::vec3 offset) {
    return builder.add_joint(
        {.name = std::move(name), .parent = parent, .rest = {.translation = offset}});
  }
};

// Clavicle, upper arm, forearm, hand, then 13 finger segments; side = +1 left, -1 right.
void add_arm(Joints& j, int spine_top, float side, const char* tag) {
  const std::string s(tag);
  const int clavicle = j.add("clavicle_" + s, spine_top, {side * 0.04f, 0.08f, 0.0f});
  const int upper = j.add("upper_arm_" + s, clavicle, {side * 0.14f, 0.0f, 0.0f});
  const int fore = j.add("forearm_" + s, upper, {side * 0.28f, 0.0f, 0.0f});
  const int hand = j.add("hand_" + s, fore, {side * 0.25f, 0.0f, 0.0f});
  struct Finger {
    const char* name;
    int segments;
    float z;
  };
  constexpr Finger kFingers[] = {{"thumb", 3, 0.04f},
                                 {"index", 3, 0.02f},
                                 {"middle", 3, 0.0f},
                                 {"ring", 2, -0.02f},
                                 {"little", 2, -0.04f}};
  for (const Finger& f : kFingers) {
    int parent = hand;
    for (int k = 0; k < f.segments; ++k) {
      const glm::vec3 offset =
          k == 0 ? glm::vec3(side * 0.08f, 0.0f, f.z) : glm::vec3(side * 0.03f, 0.0f, 0.0f);
      parent = j.add(std::string(f.name) + std::to_string(k) + "_" + s, parent, offset);
    }
  }
}

void add_leg(Joints& j, int pelvis, float side, const char* tag) {
  const std::string s(tag);
  const int thigh = j.add("thigh_" + s, pelvis, {side * 0.1f, -0.05f, 0.0f});
  const int shin = j.add("shin_" + s, thigh, {0.0f, -0.45f, 0.0f});
  const int foot = j.add("foot_" + s, shin, {0.0f, -0.42f, 0.0f});
  j.add("toe_" + s, foot, {0.0f, -0.05f, 0.12f});
}

anim::Skeleton make_skeleton() {
  Joints j;
  const int pelvis = j.add("pelvis", -1, {0.0f, 1.0f, 0.0f});
  int spine = pelvis;
  for (int k = 0; k < 4; ++k) spine = j.add("spine" + std::to_string(k), spine, {0, 0.1f, 0});
  int neck = spine;
  for (int k = 0; k < 2; ++k) neck = j.add("neck" + std::to_string(k), neck, {0, 0.07f, 0});
  j.add("head", neck, {0.0f, 0.1f, 0.0f});
  add_arm(j, spine, 1.0f, "l");
  add_arm(j, spine, -1.0f, "r");
  add_leg(j, pelvis, 1.0f, "l");
  add_leg(j, pelvis, -1.0f, "r");
  if (j.builder.joint_count() != kAnimWorkloadJoints)
    fail("skeleton has " + std::to_string(j.builder.joint_count()) + " joints");

  // Rebuilt with the inverse binds, now that the rest pose is known.
  core::Result<anim::Skeleton> first = j.builder.build();
  if (!first) fail(first.message());
  const anim::Skeleton& s = first.value();
  std::vector<glm::mat4> model(kAnimWorkloadJoints);
  anim::SkeletonBuilder b;
  for (int i = 0; i < kAnimWorkloadJoints; ++i) {
    const int p = s.parents()[i];
    const anim::JointTransform& rest = s.rest_pose()[i];
    model[i] = (p < 0 ? glm::mat4(1.0f) : model[p]) * rest.to_matrix();
    b.add_joint(
        {.name = s.names()[i], .parent = p, .rest = rest, .inverse_bind = glm::inverse(model[i])});
  }
  core::Result<anim::Skeleton> r = b.build();
  if (!r) fail(r.message());
  return std::move(r.value());
}

// One clip: a sine period per duration, phases shifted by `phase` so walk and idle differ.
anim::Clip make_clip(const anim::Skeleton& s, const char* name, float duration, float phase) {
  const int keys = static_cast<int>(std::lround(duration * kAnimWorkloadKeysPerSecond)) + 1;
  const float omega = kTwoPi / duration;
  std::vector<anim::JointTrack> tracks(static_cast<std::size_t>(s.joint_count()));
  for (int j = 0; j < s.joint_count(); ++j) {
    const float jf = static_cast<float>(j);
    const float p = phase + 0.7f * jf;
    const glm::vec3 rest = s.rest_pose()[j].translation;
    const float reach = j == 0 ? 0.05f : 0.01f;
    // Amplitudes in [0.2, 0.5] rad; the second axis alternates between Y and Z.
    const float a0 = 0.2f + 0.3f * std::fmod(0.37f * jf, 1.0f);
    const float a1 = 0.2f + 0.3f * std::fmod(0.61f * jf + 0.5f, 1.0f);
    const glm::vec3 axis1 = j % 2 == 0 ? glm::vec3(0, 1, 0) : glm::vec3(0, 0, 1);
    anim::JointTrack& track = tracks[static_cast<std::size_t>(j)];
    for (int k = 0; k < keys; ++k) {
      const bool last = k == keys - 1;
      const float t = last ? duration : static_cast<float>(k) / kAnimWorkloadKeysPerSecond;
      if (last) {  // exactly the first key, so the clip loops without a seam
        track.translations.push_back({t, track.translations[0].value});
        track.rotations.push_back({t, track.rotations[0].value});
        track.scales.push_back({t, track.scales[0].value});
        continue;
      }
      const float x = omega * t + p;
      track.translations.push_back(
          {t, rest + reach * glm::vec3(std::sin(x), std::sin(x + 2.1f), std::sin(x + 4.2f))});
      track.rotations.push_back({t, glm::angleAxis(a0 * std::sin(x), glm::vec3(1, 0, 0)) *
                                        glm::angleAxis(a1 * std::sin(2.0f * x + 1.0f), axis1)});
      track.scales.push_back({t, glm::vec3(1.0f + 0.05f * std::sin(x + 0.5f))});
    }
  }
  core::Result<anim::Clip> r = anim::Clip::create(name, duration, std::move(tracks));
  if (!r) fail(r.message());
  return std::move(r.value());
}

// Vertex v sits 5 cm from joint v % 50 along its normal, weighted over that joint, its parent and
// two other joints, all four weights non-zero.
anim::SkinnedMesh make_mesh(const anim::Skeleton& s) {
  const int joints = s.joint_count();
  std::vector<glm::vec3> rest_model(static_cast<std::size_t>(joints));
  for (int j = 0; j < joints; ++j) {
    const int p = s.parents()[j];
    rest_model[j] = (p < 0 ? glm::vec3(0.0f) : rest_model[p]) + s.rest_pose()[j].translation;
  }
  anim::SkinnedMesh m;
  for (int v = 0; v < kAnimWorkloadVertices; ++v) {
    const int j0 = v % joints;
    const float vf = static_cast<float>(v);
    // Directions spread over the sphere (a golden-angle spiral).
    const float y = 1.0f - 2.0f * (vf + 0.5f) / kAnimWorkloadVertices;
    const float r = std::sqrt(1.0f - y * y);
    const float a = 2.39996323f * vf;
    const glm::vec3 n(r * std::cos(a), y, r * std::sin(a));
    const glm::vec3 pos = rest_model[j0] + 0.05f * n;
    m.px.push_back(pos.x);
    m.py.push_back(pos.y);
    m.pz.push_back(pos.z);
    m.nx.push_back(n.x);
    m.ny.push_back(n.y);
    m.nz.push_back(n.z);

    int idx[anim::kMaxInfluences] = {j0, s.parents()[j0] < 0 ? 1 : s.parents()[j0],
                                     (j0 + 17) % joints, (j0 + 33) % joints};
    const auto taken = [&](int k) {
      for (int other = 0; other < k; ++other)
        if (idx[other] == idx[k]) return true;
      return false;
    };
    for (int k = 2; k < anim::kMaxInfluences; ++k)
      while (taken(k)) idx[k] = (idx[k] + 1) % joints;
    const float w0 = 0.4f + 0.2f * std::fmod(0.13f * vf, 1.0f);
    const float rest_w = 1.0f - w0;
    const float ws[anim::kMaxInfluences] = {w0, 0.5f * rest_w, 0.3f * rest_w, 0.2f * rest_w};
    for (int k = 0; k < anim::kMaxInfluences; ++k) {
      m.joint_indices.push_back(static_cast<std::uint16_t>(idx[k]));
      m.joint_weights.push_back(ws[k]);
    }
  }
  if (core::Status st = anim::check_mesh(m, joints); !st) fail(st.message());
  return m;
}

}  // namespace

AnimWorkload make_anim_workload() {
  AnimWorkload w;
  w.skeleton = make_skeleton();
  w.walk = make_clip(w.skeleton, "walk", 1.0f, 0.0f);
  w.idle = make_clip(w.skeleton, "idle", 3.0f, 1.3f);
  w.mesh = make_mesh(w.skeleton);
  if (core::Status st = w.walk.check_skeleton(w.skeleton); !st) fail(st.message());
  if (core::Status st = w.idle.check_skeleton(w.skeleton); !st) fail(st.message());
  return w;
}

}  // namespace spindle::bench
