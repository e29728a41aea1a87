#include <spindle/anim/procedural.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include <glm/gtc/matrix_transform.hpp>

namespace spindle::anim {
namespace {

constexpr float kPi = std::numbers::pi_v<float>;
// Positions below are for this height and scaled to desc.height.
constexpr float kReferenceHeight = 1.8f;
constexpr int kFingers = 5;
constexpr int kFingerSegments = 3;
// Twist chains in round-robin order (one joint per side each); a 5th slot grows the spine.
constexpr int kTwistBones = 4;

// splitmix64: tiny, well mixed, and the same on every platform (no std distributions).
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed, std::uint64_t stream)
      : state(seed ^ (stream * 0x9E3779B97F4A7C15ull)) {}
  std::uint64_t next_u64() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float next() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  int next_int(int lo, int hi) {                                                        // [lo, hi]
    return lo + static_cast<int>(next_u64() % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

enum class Kind {
  Pelvis,
  Spine,
  Neck,
  Head,
  Clavicle,
  UpperArm,
  Forearm,
  Hand,
  Finger,
  Thigh,
  Shin,
  Foot,
  Toe
};

float radius_of(Kind k) {
  switch (k) {
    case Kind::Pelvis:
      return 0.12f;
    case Kind::Spine:
      return 0.12f;
    case Kind::Neck:
      return 0.05f;
    case Kind::Head:
      return 0.09f;
    case Kind::Clavicle:
      return 0.05f;
    case Kind::UpperArm:
      return 0.045f;
    case Kind::Forearm:
      return 0.035f;
    case Kind::Hand:
      return 0.03f;
    case Kind::Finger:
      return 0.008f;
    case Kind::Thigh:
      return 0.07f;
    case Kind::Shin:
      return 0.05f;
    case Kind::Foot:
      return 0.04f;
    case Kind::Toe:
      return 0.03f;
  }
  return 0.05f;
}

// How the joints beyond the 16 core ones are spent (see procedural.h).
struct Plan {
  bool clavicles = false;
  bool toes = false;
  int spine = 1;
  int neck = 1;
  int finger_segments[kFingers] = {};  // per hand
  int twists[kTwistBones] = {};        // per side: upper arm, forearm, thigh, shin
};

Plan plan_for(int joint_count) {
  Plan p;
  int rem = joint_count - kMinCharacterJoints;
  if (rem >= 2) p.clavicles = true, rem -= 2;
  if (rem >= 2) p.toes = true, rem -= 2;
  while (p.spine < 4 && rem >= 1) ++p.spine, --rem;
  if (rem >= 1) ++p.neck, --rem;
  for (int level = 0; level < kFingerSegments; ++level)
    for (int f = 0; f < kFingers && rem >= 2; ++f) ++p.finger_segments[f], rem -= 2;
  for (int slot = 0; rem > 0; slot = (slot + 1) % (kTwistBones + 1)) {
    if (slot == kTwistBones || rem == 1) {
      ++p.spine;
      --rem;
    } else {
      ++p.twists[slot];
      rem -= 2;
    }
  }
  return p;
}

struct GenJoint {
  std::string name;
  int parent = -1;
  glm::vec3 pos{0.0f};  // model space, bind pose
  Kind kind = Kind::Pelvis;
  float side = 0.0f;   // +1 left (+X), -1 right, 0 centre
  float phase = 0.0f;  // seeded, for secondary sway
  glm::vec3 sway_axis{1.0f, 0.0f, 0.0f};
};

struct Rig {
  std::vector<GenJoint> joints;
  int add(std::string name, int parent, glm::vec3 pos, Kind kind, float side) {
    joints.push_back({std::move(name), parent, pos, kind, side});
    return static_cast<int>(joints.size()) - 1;
  }
  // `count` joints evenly between from (exclusive) and to (exclusive), chained from `parent`;
  // returns the last one (or parent when count is 0).
  int chain(const std::string& base, const std::string& suffix, int parent, glm::vec3 from,
            glm::vec3 to, int count, Kind kind, float side) {
    for (int i = 1; i <= count; ++i)
      parent = add(base + std::to_string(i) + suffix, parent,
                   from + (to - from) * (static_cast<float>(i) / static_cast<float>(count + 1)),
                   kind, side);
    return parent;
  }
};

Rig build_rig(const CharacterDesc& desc) {
  const Plan plan = plan_for(desc.joint_count);
  Rig rig;
  rig.joints.reserve(static_cast<std::size_t>(desc.joint_count));
  const int pelvis = rig.add("pelvis", -1, {0.0f, 1.0f, 0.0f}, Kind::Pelvis, 0.0f);
  int chest = pelvis;
  for (int i = 1; i <= plan.spine; ++i)
    chest =
        rig.add("spine_" + std::to_string(i), chest,
                {0.0f, 1.0f + 0.45f * static_cast<float>(i) / static_cast<float>(plan.spine), 0.0f},
                Kind::Spine, 0.0f);
  int neck = chest;
  for (int i = 1; i <= plan.neck; ++i)
    neck = rig.add(
        "neck_" + std::to_string(i), neck,
        {0.0f, 1.48f + 0.12f * static_cast<float>(i - 1) / static_cast<float>(plan.neck), 0.0f},
        Kind::Neck, 0.0f);
  rig.add("head", neck, {0.0f, 1.6f, 0.0f}, Kind::Head, 0.0f);

  for (const float s : {1.0f, -1.0f}) {
    const std::string sx = s > 0 ? "_l" : "_r";
    int shoulder = chest;
    if (plan.clavicles)
      shoulder = rig.add("clavicle" + sx, chest, {s * 0.04f, 1.42f, 0.0f}, Kind::Clavicle, s);
    const glm::vec3 p_upper{s * 0.18f, 1.42f, 0.0f}, p_fore{s * 0.45f, 1.42f, 0.0f},
        p_hand{s * 0.70f, 1.42f, 0.0f};
    int j = rig.add("upper_arm" + sx, shoulder, p_upper, Kind::UpperArm, s);
    j = rig.chain("upper_arm_twist_", sx, j, p_upper, p_fore, plan.twists[0], Kind::UpperArm, s);
    j = rig.add("forearm" + sx, j, p_fore, Kind::Forearm, s);
    j = rig.chain("forearm_twist_", sx, j, p_fore, p_hand, plan.twists[1], Kind::Forearm, s);
    const int hand = rig.add("hand" + sx, j, p_hand, Kind::Hand, s);
    for (int f = 0; f < kFingers; ++f) {
      // Thumb points forward, the others outward, spread front to back.
      const float spread[kFingers] = {0.04f, 0.025f, 0.008f, -0.009f, -0.026f};
      const glm::vec3 base =
          p_hand + glm::vec3(s * (f == 0 ? 0.03f : 0.08f), f == 0 ? -0.01f : 0.0f, spread[f]);
      const glm::vec3 step =
          f == 0 ? glm::vec3(s * 0.01f, 0.0f, 0.025f) : glm::vec3(s * 0.03f, 0.0f, 0.0f);
      int parent = hand;
      for (int k = 0; k < plan.finger_segments[f]; ++k)
        parent = rig.add("finger_" + std::to_string(f) + "_" + std::to_string(k + 1) + sx, parent,
                         base + step * static_cast<float>(k), Kind::Finger, s);
    }
    const glm::vec3 p_thigh{s * 0.1f, 0.95f, 0.0f}, p_shin{s * 0.1f, 0.5f, 0.0f},
        p_foot{s * 0.1f, 0.08f, 0.0f};
    j = rig.add("thigh" + sx, pelvis, p_thigh, Kind::Thigh, s);
    j = rig.chain("thigh_twist_", sx, j, p_thigh, p_shin, plan.twists[2], Kind::Thigh, s);
    j = rig.add("shin" + sx, j, p_shin, Kind::Shin, s);
    j = rig.chain("shin_twist_", sx, j, p_shin, p_foot, plan.twists[3], Kind::Shin, s);
    const int foot = rig.add("foot" + sx, j, p_foot, Kind::Foot, s);
    if (plan.toes) rig.add("toe" + sx, foot, {s * 0.1f, 0.02f, 0.13f}, Kind::Toe, s);
  }

  const float scale = desc.height / kReferenceHeight;
  Rng rng(desc.seed, 1);
  for (GenJoint& g : rig.joints) {
    g.pos *= scale;
    g.phase = 2.0f * kPi * rng.next();
    g.sway_axis =
        glm::normalize(glm::vec3(rng.next() - 0.5f, rng.next() - 0.5f, rng.next() - 0.5f) +
                       glm::vec3(0.0f, 0.0f, 0.01f));
  }
  return rig;
}

core::Result<Skeleton> build_skeleton(const Rig& rig) {
  SkeletonBuilder b;
  for (const GenJoint& g : rig.joints) {
    const glm::vec3 parent_pos = g.parent < 0 ? glm::vec3(0.0f) : rig.joints[g.parent].pos;
    b.add_joint({.name = g.name,
                 .parent = g.parent,
                 .rest = {.translation = g.pos - parent_pos},
                 .inverse_bind = glm::translate(glm::mat4(1.0f), -g.pos)});
  }
  return b.build();
}

// ---- mesh ----

struct Segment {
  int joint = 0;   // drives the segment
  int child = -1;  // joint at the far end, -1 for a leaf cap
  glm::vec3 a{0.0f}, b{0.0f};
  float radius = 0.0f;
};

std::vector<Segment> segments_of(const Rig& rig, float scale) {
  std::vector<Segment> segs;
  std::vector<bool> has_child(rig.joints.size(), false);
  for (std::size_t c = 0; c < rig.joints.size(); ++c) {
    const GenJoint& g = rig.joints[c];
    if (g.parent < 0) continue;
    has_child[static_cast<std::size_t>(g.parent)] = true;
    const GenJoint& p = rig.joints[static_cast<std::size_t>(g.parent)];
    segs.push_back({g.parent, static_cast<int>(c), p.pos, g.pos, radius_of(p.kind) * scale});
  }
  // Leaves get a short cap pointing where the limb ends (head up, feet and toes forward).
  for (std::size_t j = 0; j < rig.joints.size(); ++j) {
    if (has_child[j]) continue;
    const GenJoint& g = rig.joints[j];
    glm::vec3 dir{0.0f, 1.0f, 0.0f};
    float length = 0.2f;
    if (g.kind == Kind::Foot || g.kind == Kind::Toe) {
      dir = {0.0f, 0.0f, 1.0f};
      length = g.kind == Kind::Foot ? 0.15f : 0.05f;
    } else if (g.kind != Kind::Head && g.parent >= 0) {
      dir = glm::normalize(g.pos - rig.joints[static_cast<std::size_t>(g.parent)].pos);
      length = g.kind == Kind::Finger ? 0.025f : 0.08f;
    }
    segs.push_back({static_cast<int>(j), -1, g.pos, g.pos + dir * (length * scale),
                    radius_of(g.kind) * scale});
  }
  return segs;
}

float smoothstep(float e0, float e1, float x) {
  const float t = std::clamp((x - e0) / (e1 - e0), 0.0f, 1.0f);
  return t * t * (3.0f - 2.0f * t);
}

// The skin: one tube per segment, rings of `sides` vertices from the segment's start to its end,
// joined into quads (two triangles each, counter-clockwise seen from outside). Vertex counts that
// do not fill whole rings leave a few vertices off the tubes' triangles.
struct Skin {
  SkinnedMesh mesh;
  std::vector<std::uint32_t> indices;
};

Skin build_mesh(const CharacterDesc& desc, const Rig& rig) {
  const float scale = desc.height / kReferenceHeight;
  const std::vector<Segment> segs = segments_of(rig, scale);
  const auto n = static_cast<std::size_t>(desc.vertex_count);
  const std::size_t count = segs.size();

  // Sides per ring: 8, fewer (at least 3) when the vertices cannot give every segment two rings.
  std::size_t sides = 8;
  while (sides > 3 && n < 2 * sides * count) --sides;
  // Rings per segment: two each while they last (largest surfaces first), the rest in proportion
  // to each segment's surface (length x radius), largest remainders first.
  std::vector<double> area(count);
  double total = 0.0;
  for (std::size_t i = 0; i < count; ++i)
    total += area[i] = glm::length(segs[i].b - segs[i].a) * segs[i].radius + 1e-9;
  std::vector<std::size_t> by_area(count);
  for (std::size_t i = 0; i < count; ++i) by_area[i] = i;
  std::stable_sort(by_area.begin(), by_area.end(),
                   [&](std::size_t a, std::size_t b) { return area[a] > area[b]; });
  std::vector<std::size_t> rings(count, 0);
  std::size_t left = n / sides;
  for (std::size_t i : by_area) {
    if (left < 2) break;
    rings[i] = 2;
    left -= 2;
  }
  if (left > 0 && n / sides >= 2 * count) {  // every segment has its two: share out the rest
    const std::size_t extra = left;
    std::vector<std::pair<double, std::size_t>> remainder;
    for (std::size_t i = 0; i < count; ++i) {
      const double share = static_cast<double>(extra) * area[i] / total;
      const auto whole = static_cast<std::size_t>(share);
      rings[i] += whole;
      left -= whole;
      remainder.push_back({share - static_cast<double>(whole), i});
    }
    std::stable_sort(remainder.begin(), remainder.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; left > 0; ++k, --left) ++rings[remainder[k % count].second];
  }

  Skin skin;
  SkinnedMesh& m = skin.mesh;
  for (auto* v : {&m.px, &m.py, &m.pz, &m.nx, &m.ny, &m.nz}) v->reserve(n);
  m.joint_indices.reserve(n * kMaxInfluences);
  m.joint_weights.reserve(n * kMaxInfluences);
  Rng rng(desc.seed, 2);
  // A vertex on segment s at t along it (0: its start, 1: its end), angle theta around it.
  const auto add_vertex = [&](const Segment& s, float t, float theta) {
    const glm::vec3 axis = s.b - s.a;
    const glm::vec3 e = glm::normalize(axis);
    const glm::vec3 helper = std::abs(e.y) < 0.9f ? glm::vec3(0, 1, 0) : glm::vec3(1, 0, 0);
    const glm::vec3 side_u = glm::normalize(glm::cross(e, helper));
    const glm::vec3 side_w = glm::cross(e, side_u);
    const glm::vec3 normal = std::cos(theta) * side_u + std::sin(theta) * side_w;
    const glm::vec3 pos = s.a + axis * t + normal * s.radius;
    m.px.push_back(pos.x), m.py.push_back(pos.y), m.pz.push_back(pos.z);
    m.nx.push_back(normal.x), m.ny.push_back(normal.y), m.nz.push_back(normal.z);

    // Owner weight 1; the child fades in over the far half and the parent over the near half,
    // so weights match across a joint; a small seeded share goes to a fourth neighbour.
    const int parent = rig.joints[static_cast<std::size_t>(s.joint)].parent;
    int idx[kMaxInfluences] = {s.joint, s.joint, s.joint, s.joint};
    float w[kMaxInfluences] = {1.0f, 0.0f, 0.0f, 0.0f};
    int used = 1;
    if (s.child >= 0) idx[used] = s.child, w[used++] = smoothstep(0.5f, 1.0f, t);
    if (parent >= 0) {
      idx[used] = parent, w[used++] = 1.0f - smoothstep(0.0f, 0.5f, t);
      const int grand = rig.joints[static_cast<std::size_t>(parent)].parent;
      if (grand >= 0) idx[used] = grand, w[used++] = 0.1f * rng.next();
    }
    float sum = 0.0f;
    for (int k = 0; k < kMaxInfluences; ++k) sum += w[k];
    // Normalise; the largest slot takes the rounding so the four add up to 1 as closely as floats
    // allow.
    int largest = 0;
    for (int k = 0; k < kMaxInfluences; ++k) {
      w[k] /= sum;
      if (w[k] > w[largest]) largest = k;
    }
    float others = 0.0f;
    for (int k = 0; k < kMaxInfluences; ++k)
      if (k != largest) others += w[k];
    w[largest] = 1.0f - others;
    for (int k = 0; k < kMaxInfluences; ++k) {
      m.joint_indices.push_back(static_cast<std::uint16_t>(idx[k]));
      m.joint_weights.push_back(w[k]);
    }
  };

  for (std::size_t i = 0; i < count; ++i) {
    if (rings[i] < 2) continue;
    const auto base = static_cast<std::uint32_t>(m.px.size());
    const float twist = 2.0f * kPi * rng.next();  // where each tube's seam lies: seeded
    for (std::size_t r = 0; r < rings[i]; ++r)
      for (std::size_t k = 0; k < sides; ++k)
        add_vertex(segs[i], static_cast<float>(r) / static_cast<float>(rings[i] - 1),
                   twist + 2.0f * kPi * static_cast<float>(k) / static_cast<float>(sides));
    const auto ring = static_cast<std::uint32_t>(sides);
    for (std::uint32_t r = 0; r + 1 < rings[i]; ++r)
      for (std::uint32_t k = 0; k < ring; ++k) {
        const std::uint32_t v00 = base + r * ring + k, v01 = base + r * ring + (k + 1) % ring;
        const std::uint32_t v10 = v00 + ring, v11 = v01 + ring;
        skin.indices.insert(skin.indices.end(), {v00, v01, v11, v00, v11, v10});
      }
  }
  // What whole rings did not take: points around the first segment's middle, in no triangle.
  for (std::size_t k = 0; m.px.size() < n; ++k)
    add_vertex(segs[0], 0.5f, 2.0f * kPi * static_cast<float>(k) / 8.0f);
  return skin;
}

// ---- clips ----

enum class Motion { Walk, Idle };

glm::quat axis_angle(float radians, glm::vec3 axis) {
  return glm::angleAxis(radians, axis);
}

constexpr glm::vec3 kX{1, 0, 0}, kY{0, 1, 0}, kZ{0, 0, 1};

// Local rotation of joint g at cycle phase ph (radians, one cycle = 2 pi). Only whole multiples
// of ph appear, so phase 0 and 2 pi give the same pose.
glm::quat rotation_at(const GenJoint& g, int spine_count, Motion motion, float ph) {
  const float s = g.side;
  const float sway = std::sin(ph + g.phase);
  const float spine_share = 1.0f / static_cast<float>(spine_count);
  if (motion == Motion::Walk) {
    const float step = std::sin(ph);  // > 0: left leg forward
    switch (g.kind) {
      case Kind::Pelvis:
        return axis_angle(0.08f * step, kY) * axis_angle(0.03f * std::sin(2 * ph), kZ);
      case Kind::Spine:
        return axis_angle(-0.12f * step * spine_share, kY) * axis_angle(0.06f * spine_share, kX);
      case Kind::Neck:
      case Kind::Head:
        return axis_angle(0.03f * step, kY);
      case Kind::Clavicle:
        return axis_angle(0.05f * step * s, kX);
      case Kind::UpperArm:  // lower from the T-pose, swing against the same-side leg
        return axis_angle(0.4f * step * s, kX) * axis_angle(-s * 1.2f, kZ);
      case Kind::Forearm:
        return axis_angle(-s * (0.3f + 0.1f * (1.0f + step)), kY);
      case Kind::Hand:
        return axis_angle(0.1f * sway, kX);
      case Kind::Finger:
        return axis_angle(-s * (0.3f + 0.1f * sway), kZ);
      case Kind::Thigh:
        return axis_angle(-s * 0.45f * step, kX);
      case Kind::Shin:
        return axis_angle(0.1f + 0.6f * (0.5f - 0.5f * std::cos(ph + (s > 0 ? 0.0f : kPi) - 0.5f)),
                          kX);
      case Kind::Foot:
        return axis_angle(0.2f * std::sin(ph + (s > 0 ? 0.0f : kPi) + 0.8f), kX);
      case Kind::Toe:
        return axis_angle(-0.15f * (0.5f - 0.5f * std::cos(ph + (s > 0 ? 0.0f : kPi))), kX);
    }
  } else {
    const float breath = std::sin(ph);
    switch (g.kind) {
      case Kind::Pelvis:
        return axis_angle(0.02f * breath, kZ);
      case Kind::Spine:
        return axis_angle(0.03f * breath * spine_share, kX);
      case Kind::Neck:
        return axis_angle(0.05f * sway, kY);
      case Kind::Head:
        return axis_angle(0.15f * std::sin(ph + g.phase), kY);
      case Kind::UpperArm:
        return axis_angle(0.03f * sway, kX) * axis_angle(-s * 1.3f, kZ);
      case Kind::Forearm:
        return axis_angle(-s * (0.15f + 0.03f * sway), kY);
      case Kind::Finger:
        return axis_angle(-s * (0.4f + 0.05f * sway), kZ);
      case Kind::Thigh:
        return axis_angle(s * 0.03f * breath, kZ);
      default:
        return axis_angle(0.02f * sway, g.sway_axis);
    }
  }
  return {1.0f, 0.0f, 0.0f, 0.0f};
}

// Seeded, irregular key times: 0, duration, and one jittered key per slot in between (jitter
// +-0.4 slot keeps them strictly increasing).
std::vector<float> key_times(Rng& rng, int min_keys, float duration) {
  const int count = rng.next_int(min_keys, 2 * min_keys);
  std::vector<float> times(static_cast<std::size_t>(count));
  times.front() = 0.0f;
  times.back() = duration;
  for (int i = 1; i + 1 < count; ++i)
    times[static_cast<std::size_t>(i)] = duration *
                                         (static_cast<float>(i) + 0.8f * (rng.next() - 0.5f)) /
                                         static_cast<float>(count - 1);
  return times;
}

core::Result<Clip> build_clip(const CharacterDesc& desc, const Rig& rig, const Skeleton& skeleton,
                              Motion motion) {
  const bool walk = motion == Motion::Walk;
  const float duration = walk ? desc.walk_duration : desc.idle_duration;
  const float scale = desc.height / kReferenceHeight;
  int spine_count = 0;
  for (const GenJoint& g : rig.joints) spine_count += g.kind == Kind::Spine;
  Rng rng(desc.seed, walk ? 3 : 4);

  std::vector<JointTrack> tracks(rig.joints.size());
  for (std::size_t j = 0; j < rig.joints.size(); ++j) {
    const GenJoint& g = rig.joints[j];
    const JointTransform& rest = skeleton.rest_pose()[j];
    JointTrack& track = tracks[j];
    const std::vector<float> times = key_times(rng, desc.min_keys, duration);
    for (const float t : times) {
      const float ph = 2.0f * kPi * t / duration;
      track.rotations.push_back({t, rotation_at(g, spine_count, motion, ph)});
    }
    if (g.parent < 0) {  // the root bobs twice per stride and shifts sideways once
      for (const float t : times) {
        const float ph = 2.0f * kPi * t / duration;
        const glm::vec3 offset =
            walk ? glm::vec3(0.02f * std::sin(ph), 0.03f * std::cos(2 * ph), 0.0f)
                 : glm::vec3(0.02f * std::sin(ph), 0.005f * std::cos(2 * ph), 0.0f);
        track.translations.push_back({t, rest.translation + offset * scale});
      }
      track.translations.back().value = track.translations.front().value;
    } else {
      track.translations.push_back({0.0f, rest.translation});
    }
    track.rotations.back().value = track.rotations.front().value;  // exact loop
    track.scales.push_back({0.0f, glm::vec3(1.0f)});
  }
  return Clip::create(walk ? "walk" : "idle", duration, std::move(tracks));
}

std::string range_error(const char* field, double value, double lo, double hi, bool open_lo) {
  auto num = [](double x) {
    std::string s = std::to_string(x);
    if (s.find('.') != std::string::npos) {
      s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s.pop_back();
    }
    return s;
  };
  return std::string("make_character: ") + field + " " + num(value) + " outside " +
         (open_lo ? "(" : "[") + num(lo) + ", " + num(hi) + "]";
}

}  // namespace

core::Status validate(const CharacterDesc& desc) {
  if (desc.joint_count < kMinCharacterJoints || desc.joint_count > kMaxCharacterJoints)
    return core::Status::error(range_error("joint_count", desc.joint_count, kMinCharacterJoints,
                                           kMaxCharacterJoints, false));
  if (desc.vertex_count < kMinCharacterVertices || desc.vertex_count > kMaxCharacterVertices)
    return core::Status::error(range_error("vertex_count", desc.vertex_count, kMinCharacterVertices,
                                           kMaxCharacterVertices, false));
  if (!std::isfinite(desc.height) || desc.height <= 0.0f || desc.height > 100.0f)
    return core::Status::error(range_error("height", desc.height, 0, 100, true));
  if (!std::isfinite(desc.walk_duration) || desc.walk_duration <= 0.0f ||
      desc.walk_duration > 1000.0f)
    return core::Status::error(range_error("walk_duration", desc.walk_duration, 0, 1000, true));
  if (!std::isfinite(desc.idle_duration) || desc.idle_duration <= 0.0f ||
      desc.idle_duration > 1000.0f)
    return core::Status::error(range_error("idle_duration", desc.idle_duration, 0, 1000, true));
  if (desc.min_keys < 2 || desc.min_keys > 1000)
    return core::Status::error(range_error("min_keys", desc.min_keys, 2, 1000, false));
  return {};
}

core::Result<Character> make_character(const CharacterDesc& desc) {
  if (core::Status s = validate(desc); !s) return s;
  const Rig rig = build_rig(desc);
  core::Result<Skeleton> skeleton = build_skeleton(rig);
  // Generator bugs, not bad input: the desc was valid. Reported, never asserted.
  if (!skeleton) return core::Status::error("make_character: " + skeleton.message());
  Character c;
  c.skeleton = std::move(skeleton.value());
  Skin skin = build_mesh(desc, rig);
  c.mesh = std::move(skin.mesh);
  c.indices = std::move(skin.indices);
  core::Result<Clip> walk = build_clip(desc, rig, c.skeleton, Motion::Walk);
  if (!walk) return core::Status::error("make_character: " + walk.message());
  core::Result<Clip> idle = build_clip(desc, rig, c.skeleton, Motion::Idle);
  if (!idle) return core::Status::error("make_character: " + idle.message());
  c.walk = std::move(walk.value());
  c.idle = std::move(idle.value());
  return c;
}

}  // namespace spindle::anim
