// SoaTransform: four joints' local transforms, one array per component (structure of arrays).
//
// Usage:
//
//   std::vector<spindle::anim::SoaTransform> walk(spindle::anim::soa_count(joints)),
//       idle(walk.size()), blended(walk.size());
//   SamplingJob{.clip = &walk_clip, .time = t, .cache = &c1, .soa_output = walk}.run();
//   SamplingJob{.clip = &idle_clip, .time = u, .cache = &c2, .soa_output = idle}.run();
//   BlendLayer layers[] = {{.soa_pose = walk, .weight = 0.7f}, {.soa_pose = idle, .weight = 0.3f}};
//   BlendingJob{.rest_pose = skeleton.rest_pose(), .layers = layers, .soa_output = blended}.run();
//   LocalToModelJob{.skeleton = &skeleton, .soa_local = blended, .model = model}.run();
//
// Joint j of a pose is lane j % 4 of entry j / 4, so a pose of n joints takes soa_count(n)
// entries. The jobs' SIMD paths work on four joints per register without transposing, which is
// where an array of JointTransform spends much of a blend. Every job that writes an SoA pose
// gives the same bits as its JointTransform form, and puts the identity in the last entry's lanes
// past the last joint.
#pragma once

#include <cstddef>
#include <span>

#include <spindle/anim/skeleton.h>

namespace spindle::anim {

struct alignas(16) SoaTransform {
  float tx[4], ty[4], tz[4];         // translation
  float qx[4], qy[4], qz[4], qw[4];  // rotation, unit length
  float sx[4], sy[4], sz[4];         // scale

  JointTransform get(int lane) const {
    return {{tx[lane], ty[lane], tz[lane]},
            glm::quat(qw[lane], qx[lane], qy[lane], qz[lane]),
            {sx[lane], sy[lane], sz[lane]}};
  }
  void set(int lane, const JointTransform& t) {
    tx[lane] = t.translation.x, ty[lane] = t.translation.y, tz[lane] = t.translation.z;
    qx[lane] = t.rotation.x, qy[lane] = t.rotation.y, qz[lane] = t.rotation.z;
    qw[lane] = t.rotation.w;
    sx[lane] = t.scale.x, sy[lane] = t.scale.y, sz[lane] = t.scale.z;
  }
};

// Entries for a pose of `joints` joints.
constexpr std::size_t soa_count(std::size_t joints) {
  return (joints + 3) / 4;
}

// Copies a pose between the two layouts; out.size() must be soa_count(in.size()) (to_soa) or
// in.size() covers out (from_soa: soa_count(out.size()) entries read). to_soa fills the spare
// lanes with the identity.
void to_soa(std::span<const JointTransform> in, std::span<SoaTransform> out);
void from_soa(std::span<const SoaTransform> in, std::span<JointTransform> out);

}  // namespace spindle::anim
