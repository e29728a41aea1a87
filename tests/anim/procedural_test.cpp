#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <spindle/anim/blending_job.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skinning_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

Character make(const CharacterDesc& desc) {
  core::Result<Character> r = make_character(desc);
  EXPECT_TRUE(r) << r.message();
  return r ? std::move(r.value()) : Character{};
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

bool same_clip(const Clip& a, const Clip& b) {
  if (a.name() != b.name() || a.duration() != b.duration() || a.joint_count() != b.joint_count())
    return false;
  for (int j = 0; j < a.joint_count(); ++j) {
    const JointTrack& x = a.tracks()[j];
    const JointTrack& y = b.tracks()[j];
    if (!same_bits(x.translations, y.translations) || !same_bits(x.rotations, y.rotations) ||
        !same_bits(x.scales, y.scales))
      return false;
  }
  return true;
}

// Output buffers for one character, sized once.
struct Pose {
  std::vector<JointTransform> local;
  std::vector<glm::mat4> model, palette;
  std::vector<float> px, py, pz, nx, ny, nz;

  explicit Pose(const Character& c)
      : local(static_cast<std::size_t>(c.skeleton.joint_count())),
        model(local.size()),
        palette(local.size()) {
    for (auto* v : {&px, &py, &pz, &nx, &ny, &nz}) v->assign(c.mesh.vertex_count(), -99.0f);
  }

  // local -> model -> palette -> skinned vertices.
  void skin(const Character& c) {
    ASSERT_TRUE((LocalToModelJob{.skeleton = &c.skeleton, .local = local, .model = model}.run()));
    ASSERT_TRUE(
        (PaletteJob{.model = model, .inverse_binds = c.skeleton.inverse_binds(), .palette = palette}
             .run()));
    SkinningJob job;
    job.palette = palette;
    job.joint_indices = c.mesh.joint_indices;
    job.joint_weights = c.mesh.joint_weights;
    job.in_positions = c.mesh.positions();
    job.in_normals = c.mesh.normals();
    job.out_positions = {px, py, pz};
    job.out_normals = {nx, ny, nz};
    core::Status s = job.run();
    ASSERT_TRUE(s) << s.message();
  }
};

TEST(Procedural, DefaultCharacterHasRequestedSizes) {
  const Character c = make({});
  EXPECT_EQ(c.skeleton.joint_count(), 50);
  EXPECT_EQ(c.mesh.vertex_count(), 2000u);
  EXPECT_EQ(c.walk.name(), "walk");
  EXPECT_EQ(c.idle.name(), "idle");
  for (const char* name : {"pelvis", "head", "hand_l", "hand_r", "foot_l", "toe_r", "clavicle_l",
                           "finger_0_1_l", "spine_4", "neck_2"})
    EXPECT_GE(c.skeleton.find(name), 0) << name;
}

TEST(Procedural, JointCountsAcrossTheRangeParentsFirst) {
  for (int n : {16, 17, 18, 19, 23, 49, 50, 51, 52, 53, 57, 80, 200, 1023, 1024}) {
    SCOPED_TRACE(n);
    const Character c = make({.joint_count = n, .vertex_count = 300});
    ASSERT_EQ(c.skeleton.joint_count(), n);
    const auto parents = c.skeleton.parents();
    EXPECT_EQ(parents[0], -1);
    for (int j = 1; j < n; ++j) {
      EXPECT_GE(parents[j], 0) << "one root only, joint " << j;
      EXPECT_LT(parents[j], j) << "joint " << j;
    }
    EXPECT_TRUE(c.walk.check_skeleton(c.skeleton));
    EXPECT_TRUE(c.idle.check_skeleton(c.skeleton));
  }
}

TEST(Procedural, WeightsSumToOneAndIndicesInRange) {
  for (int n : {16, 50, 300}) {
    SCOPED_TRACE(n);
    const Character c = make({.seed = 3, .joint_count = n, .vertex_count = 1500});
    const SkinnedMesh& m = c.mesh;
    ASSERT_EQ(m.joint_indices.size(), m.vertex_count() * kMaxInfluences);
    ASSERT_EQ(m.joint_weights.size(), m.vertex_count() * kMaxInfluences);
    for (auto* v : {&m.py, &m.pz, &m.nx, &m.ny, &m.nz}) ASSERT_EQ(v->size(), m.vertex_count());
    int multi = 0;
    for (std::size_t v = 0; v < m.vertex_count(); ++v) {
      float sum = 0.0f;
      int nonzero = 0;
      for (int k = 0; k < kMaxInfluences; ++k) {
        const float w = m.joint_weights[kMaxInfluences * v + k];
        ASSERT_GE(w, 0.0f);
        ASSERT_LE(w, 1.0f);
        nonzero += w > 0.0f;
        sum += w;
        ASSERT_LT(m.joint_indices[kMaxInfluences * v + k], n) << "vertex " << v;
      }
      ASSERT_NEAR(sum, 1.0f, 1e-6f) << "vertex " << v;
      multi += nonzero > 1;
      const glm::vec3 normal(m.nx[v], m.ny[v], m.nz[v]);
      ASSERT_NEAR(glm::length(normal), 1.0f, 1e-5f);
      ASSERT_TRUE(std::isfinite(m.px[v]) && std::isfinite(m.py[v]) && std::isfinite(m.pz[v]));
    }
    EXPECT_GT(multi, static_cast<int>(m.vertex_count()) / 2) << "most vertices blend joints";
  }
}

// The skin is a mesh, not a cloud of points: triangles over the vertices, wound counter-clockwise
// seen from outside (their face normals agree with the vertex normals), made of whole rings, with
// every vertex in some triangle once the count fills whole rings.
TEST(Procedural, TheSkinIsTrianglesWoundOutward) {
  for (const auto& [joints, vertices] :
       {std::pair{50, 2000}, {16, 96}, {24, 900}, {300, 4000}, {50, 100}, {16, 1}}) {
    SCOPED_TRACE(std::to_string(joints) + " joints, " + std::to_string(vertices) + " vertices");
    const Character c = make({.seed = 6, .joint_count = joints, .vertex_count = vertices});
    const SkinnedMesh& m = c.mesh;
    ASSERT_EQ(m.vertex_count(), static_cast<std::size_t>(vertices));
    ASSERT_EQ(c.indices.size() % 3, 0u);
    std::vector<bool> used(m.vertex_count(), false);
    for (std::size_t t = 0; t < c.indices.size(); t += 3) {
      glm::vec3 p[3], n(0.0f);
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t v = c.indices[t + static_cast<std::size_t>(k)];
        ASSERT_LT(v, m.vertex_count());
        used[v] = true;
        p[k] = {m.px[v], m.py[v], m.pz[v]};
        n += glm::vec3(m.nx[v], m.ny[v], m.nz[v]);
      }
      const glm::vec3 face = glm::cross(p[1] - p[0], p[2] - p[0]);
      ASSERT_GT(glm::length(face), 0.0f) << "triangle " << t / 3 << " is degenerate";
      ASSERT_GT(glm::dot(face, n), 0.0f) << "triangle " << t / 3 << " faces inward";
    }
    const auto unused = static_cast<std::size_t>(std::count(used.begin(), used.end(), false));
    if (vertices >= 2 * 3 * 40) {
      EXPECT_GT(c.indices.size(), 0u);
      EXPECT_LT(unused, 8u) << "only what does not fill a ring stays out of the triangles";
    }
  }
  // The default humanoid: 8-sided tubes, about two triangles per vertex.
  const Character c = make({.seed = 1});
  EXPECT_GT(c.indices.size() / 3, 3u * 2000 / 2);
}

TEST(Procedural, MeshPassesCheckMeshAndBrokenCopiesAreNamed) {
  const Character c = make({.seed = 4, .joint_count = 20, .vertex_count = 200});
  ASSERT_TRUE(check_mesh(c.mesh, 20)) << check_mesh(c.mesh, 20).message();
  EXPECT_FALSE(check_mesh(c.mesh, 19)) << "some vertex uses joint 19";

  struct Case {
    const char* expect;
    void (*corrupt)(SkinnedMesh&);
  };
  const Case cases[] = {
      {"no vertices", [](SkinnedMesh& m) { m = SkinnedMesh{}; }},
      {"position streams", [](SkinnedMesh& m) { m.pz.pop_back(); }},
      {"normal streams", [](SkinnedMesh& m) { m.nx.pop_back(); }},
      {"joint indices", [](SkinnedMesh& m) { m.joint_weights.pop_back(); }},
      {"vertex 7: position is not finite", [](SkinnedMesh& m) { m.py[7] = NAN; }},
      {"vertex 8: normal is not finite", [](SkinnedMesh& m) { m.nz[8] = INFINITY; }},
      {"vertex 9: joint index 20 out of range",
       [](SkinnedMesh& m) { m.joint_indices[9 * kMaxInfluences + 2] = 20; }},
      {"vertex 10: weight 0 is -",
       [](SkinnedMesh& m) { m.joint_weights[10 * kMaxInfluences] = -0.5f; }},
      {"vertex 11: weights sum to",
       [](SkinnedMesh& m) {
         for (int k = 0; k < kMaxInfluences; ++k) m.joint_weights[11 * kMaxInfluences + k] *= 0.5f;
       }},
  };
  for (const Case& tc : cases) {
    SkinnedMesh m = c.mesh;
    tc.corrupt(m);
    const core::Status s = check_mesh(m, 20);
    ASSERT_FALSE(s) << tc.expect;
    EXPECT_NE(s.message().find(tc.expect), std::string::npos) << s.message();
  }
  SkinnedMesh no_normals = c.mesh;
  no_normals.nx.clear();
  no_normals.ny.clear();
  no_normals.nz.clear();
  EXPECT_TRUE(check_mesh(no_normals, 20)) << "normals are optional";
}

TEST(Procedural, ClipsLoopWithIrregularKeys) {
  const CharacterDesc desc{.seed = 11, .walk_duration = 1.2f, .idle_duration = 2.5f};
  const Character c = make(desc);
  for (const Clip* clip : {&c.walk, &c.idle}) {
    SCOPED_TRACE(clip->name());
    EXPECT_TRUE(clip->check_skeleton(c.skeleton));
    EXPECT_FLOAT_EQ(clip->duration(), clip == &c.walk ? 1.2f : 2.5f);
    bool irregular = false;
    for (const JointTrack& t : clip->tracks()) {
      ASSERT_GE(t.rotations.size(), static_cast<std::size_t>(desc.min_keys));
      ASSERT_LE(t.rotations.size(), static_cast<std::size_t>(2 * desc.min_keys));
      EXPECT_EQ(t.rotations.front().time, 0.0f);
      EXPECT_EQ(t.rotations.back().time, clip->duration());
      EXPECT_EQ(t.rotations.front().value, t.rotations.back().value);  // bit-exact loop
      EXPECT_EQ(t.translations.front().value, t.translations.back().value);
      const float slot = clip->duration() / static_cast<float>(t.rotations.size() - 1);
      for (std::size_t k = 1; k < t.rotations.size(); ++k)
        irregular |= std::abs(t.rotations[k].time - t.rotations[k - 1].time - slot) > 1e-3f * slot;
    }
    EXPECT_TRUE(irregular);
  }
  // The walk actually moves: the left thigh swings between quarter and three-quarter cycle.
  const int thigh = c.skeleton.find("thigh_l");
  ASSERT_GE(thigh, 0);
  SamplingCache cache(c.skeleton.joint_count());
  std::vector<JointTransform> a(static_cast<std::size_t>(c.skeleton.joint_count())), b(a.size());
  ASSERT_TRUE((SamplingJob{.clip = &c.walk, .time = 0.3f, .cache = &cache, .output = a}.run()));
  ASSERT_TRUE((SamplingJob{.clip = &c.walk, .time = 0.9f, .cache = &cache, .output = b}.run()));
  EXPECT_LT(std::abs(glm::dot(a[thigh].rotation, b[thigh].rotation)), 0.99f);
}

TEST(Procedural, SameDescSameDataOtherSeedOtherData) {
  const CharacterDesc desc{.seed = 42, .joint_count = 61, .vertex_count = 777};
  const Character a = make(desc), b = make(desc);
  ASSERT_EQ(a.skeleton.joint_count(), b.skeleton.joint_count());
  EXPECT_TRUE(std::equal(a.skeleton.parents().begin(), a.skeleton.parents().end(),
                         b.skeleton.parents().begin()));
  EXPECT_TRUE(
      std::equal(a.skeleton.names().begin(), a.skeleton.names().end(), b.skeleton.names().begin()));
  EXPECT_EQ(std::memcmp(a.skeleton.rest_pose().data(), b.skeleton.rest_pose().data(),
                        a.skeleton.rest_pose().size_bytes()),
            0);
  EXPECT_EQ(std::memcmp(a.skeleton.inverse_binds().data(), b.skeleton.inverse_binds().data(),
                        a.skeleton.inverse_binds().size_bytes()),
            0);
  for (auto field : {&SkinnedMesh::px, &SkinnedMesh::py, &SkinnedMesh::pz, &SkinnedMesh::nx,
                     &SkinnedMesh::ny, &SkinnedMesh::nz, &SkinnedMesh::joint_weights})
    EXPECT_TRUE(same_bits(a.mesh.*field, b.mesh.*field));
  EXPECT_TRUE(same_bits(a.mesh.joint_indices, b.mesh.joint_indices));
  EXPECT_TRUE(same_clip(a.walk, b.walk));
  EXPECT_TRUE(same_clip(a.idle, b.idle));

  CharacterDesc other = desc;
  other.seed = 43;
  const Character c = make(other);
  EXPECT_FALSE(same_bits(a.mesh.px, c.mesh.px));
  EXPECT_FALSE(same_clip(a.walk, c.walk));
}

TEST(Procedural, BadDescsAreRejectedWithMessages) {
  struct Case {
    CharacterDesc desc;
    const char* message;
  };
  const float nan = std::nanf("");
  const Case cases[] = {
      {{.joint_count = 3}, "make_character: joint_count 3 outside [16, 1024]"},
      {{.joint_count = 5000}, "make_character: joint_count 5000 outside [16, 1024]"},
      {{.vertex_count = 0}, "make_character: vertex_count 0 outside [1, 1000000]"},
      {{.vertex_count = -5}, "make_character: vertex_count -5 outside [1, 1000000]"},
      {{.height = 0.0f}, "make_character: height 0 outside (0, 100]"},
      {{.height = nan}, "make_character: height nan outside (0, 100]"},
      {{.walk_duration = -1.0f}, "make_character: walk_duration -1 outside (0, 1000]"},
      {{.idle_duration = 1e9f}, "make_character: idle_duration 1000000000 outside (0, 1000]"},
      {{.min_keys = 1}, "make_character: min_keys 1 outside [2, 1000]"},
  };
  for (const Case& c : cases) {
    core::Result<Character> r = make_character(c.desc);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.message(), c.message);
    EXPECT_EQ(validate(c.desc).message(), c.message);
  }
  EXPECT_TRUE(validate({}));
}

TEST(Procedural, RestPoseSkinningReproducesTheMesh) {
  for (const CharacterDesc& desc :
       {CharacterDesc{},
        CharacterDesc{.seed = 9, .joint_count = 200, .vertex_count = 3000, .height = 2.5f}}) {
    const Character c = make(desc);
    Pose pose(c);
    std::copy(c.skeleton.rest_pose().begin(), c.skeleton.rest_pose().end(), pose.local.begin());
    pose.skin(c);
    const SkinnedMesh& m = c.mesh;
    for (std::size_t v = 0; v < m.vertex_count(); ++v) {
      SCOPED_TRACE(v);
      test::expect_near({pose.px[v], pose.py[v], pose.pz[v]}, {m.px[v], m.py[v], m.pz[v]}, 1e-4f);
      test::expect_near({pose.nx[v], pose.ny[v], pose.nz[v]}, {m.nx[v], m.ny[v], m.nz[v]}, 1e-4f);
      if (HasFailure()) return;
    }
  }
}

TEST(Procedural, WalkSampleBlendSkinGivesFiniteMovedVertices) {
  const Character c = make({.seed = 5});
  Pose pose(c);
  const auto n = static_cast<std::size_t>(c.skeleton.joint_count());
  std::vector<JointTransform> walk(n), idle(n);
  SamplingCache walk_cache(c.skeleton.joint_count()), idle_cache(c.skeleton.joint_count());
  for (float t : {0.0f, 0.37f, 0.999f, 1.0f}) {
    SCOPED_TRACE(t);
    ASSERT_TRUE(
        (SamplingJob{.clip = &c.walk, .time = t, .cache = &walk_cache, .output = walk}.run()));
    ASSERT_TRUE(
        (SamplingJob{.clip = &c.idle, .time = t, .cache = &idle_cache, .output = idle}.run()));
    const BlendLayer layers[] = {{.pose = walk, .weight = 0.8f}, {.pose = idle, .weight = 0.2f}};
    ASSERT_TRUE(
        (BlendingJob{.rest_pose = c.skeleton.rest_pose(), .layers = layers, .output = pose.local}
             .run()));
    pose.skin(c);
    float moved = 0.0f;
    for (std::size_t v = 0; v < c.mesh.vertex_count(); ++v) {
      ASSERT_TRUE(std::isfinite(pose.px[v]) && std::isfinite(pose.py[v]) &&
                  std::isfinite(pose.pz[v]))
          << "vertex " << v;
      ASSERT_NEAR(glm::length(glm::vec3(pose.nx[v], pose.ny[v], pose.nz[v])), 1.0f, 1e-4f);
      moved = std::max(moved,
                       glm::length(glm::vec3(pose.px[v] - c.mesh.px[v], pose.py[v] - c.mesh.py[v],
                                             pose.pz[v] - c.mesh.pz[v])));
      // The figure stays about where it stands (arms lowered, nothing flung away).
      ASSERT_LT(std::abs(pose.px[v]), 1.0f);
      ASSERT_GT(pose.py[v], -0.2f);
      ASSERT_LT(pose.py[v], 2.0f);
    }
    EXPECT_GT(moved, 0.1f) << "arms come down from the T-pose";
  }
  // The walk is sampled alone at t too: the end-to-end path without blending.
  ASSERT_TRUE(
      (SamplingJob{.clip = &c.walk, .time = 0.5f, .cache = &walk_cache, .output = pose.local}
           .run()));
  pose.skin(c);
  for (std::size_t v = 0; v < c.mesh.vertex_count(); ++v)
    ASSERT_TRUE(std::isfinite(pose.px[v]) && std::isfinite(pose.nz[v]));
}

}  // namespace
}  // namespace spindle::anim
