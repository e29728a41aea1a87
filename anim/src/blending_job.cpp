#include <spindle/anim/blending_job.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>

// SSE2 where the compiler targets it and the build allows intrinsics (SPINDLE_SIMD); otherwise
// every joint takes the per-joint path (the no-threads preset builds that, so CI runs both).
#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#define SPINDLE_BLEND_SSE 1
#include <emmintrin.h>
#include <xmmintrin.h>
#else
#define SPINDLE_BLEND_SSE 0
#endif

namespace spindle::anim {
namespace {

// The SIMD path reads a joint as 10 floats: translation [0, 3), rotation [3, 7), scale [7, 10).
static_assert(sizeof(JointTransform) == 10 * sizeof(float));
static_assert(offsetof(JointTransform, rotation) == 3 * sizeof(float));
static_assert(offsetof(JointTransform, scale) == 7 * sizeof(float));

// Opposite rotations of equal weight cancel; below this squared length the rest rotation is used.
constexpr float kMinRotationLength2 = 1e-12f;

core::Status check_layers(std::span<const BlendLayer> layers, std::size_t joints, bool soa,
                          const char* kind) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const BlendLayer& l = layers[i];
    // Built only on failure: run() validates every frame and must not allocate.
    const auto where = [&] {
      return std::string("BlendingJob: ") + kind + " " + std::to_string(i);
    };
    if (soa) {
      if (!l.pose.empty())
        return core::Status::error(where() +
                                   " is a JointTransform pose; the output is SoA "
                                   "(give every layer as soa_pose)");
      if (l.soa_pose.size() != soa_count(joints))
        return core::Status::error(where() + " has " + std::to_string(l.soa_pose.size()) +
                                   " SoA entries, " + std::to_string(joints) + " joints need " +
                                   std::to_string(soa_count(joints)));
    } else if (!l.soa_pose.empty()) {
      return core::Status::error(where() +
                                 " is an SoA pose; the output is JointTransform "
                                 "(set soa_output, or give the layer as pose)");
    } else if (l.pose.size() != joints) {
      return core::Status::error(where() + " has " + std::to_string(l.pose.size()) +
                                 " joints, rest pose has " + std::to_string(joints));
    }
    if (!(l.weight >= 0.0f && l.weight <= kMaxBlendWeight))
      return core::Status::error(where() + ": weight must be in [0, 1e6]");
    if (!l.joint_weights.empty() && l.joint_weights.size() != joints)
      return core::Status::error(where() + " has " + std::to_string(l.joint_weights.size()) +
                                 " joint weights, expected " + std::to_string(joints));
    for (float w : l.joint_weights)
      if (!(w >= 0.0f && w <= kMaxBlendWeight))
        return core::Status::error(where() + ": joint weights must be in [0, 1e6]");
  }
  return {};
}

float joint_weight(const BlendLayer& l, std::size_t j) {
  return l.joint_weights.empty() ? l.weight : l.weight * l.joint_weights[j];
}

// In memory order, summed as the SIMD path sums its lanes, so both give the same bits.
float dot4(const glm::quat& a, const glm::quat& b) {
  return (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]);
}

// One joint of the normal blend. Every operation matches blend_fours() lane for lane, so a joint
// gets the same bits whichever path blends it.
// pose_of(layer, j): joint j of that layer, whichever form it is in.
JointTransform aos_joint(const BlendLayer& l, std::size_t j) {
  return l.pose[j];
}
JointTransform soa_joint(const BlendLayer& l, std::size_t j) {
  return l.soa_pose[j / 4].get(static_cast<int>(j % 4));
}

template <class PoseOf>
JointTransform blend_joint(std::span<const BlendLayer> layers, const JointTransform& rest,
                           float threshold, std::size_t j, PoseOf pose_of) {
  glm::vec3 t(0.0f), s(0.0f);
  glm::quat q(0.0f, 0.0f, 0.0f, 0.0f);
  float total = 0.0f;
  bool first = true;
  const auto add = [&](const JointTransform& p, float w) {
    if (first) {
      t = p.translation * w;
      s = p.scale * w;
      q = w * p.rotation;
      first = false;
    } else {
      t = t + p.translation * w;
      s = s + p.scale * w;
      // Keep every contribution in the hemisphere of the sum so far.
      q = q + (dot4(q, p.rotation) < 0.0f ? -w : w) * p.rotation;
    }
    total += w;
  };
  for (const BlendLayer& l : layers) {
    const float w = joint_weight(l, j);
    if (w > 0.0f) add(pose_of(l, j), w);
  }
  if (total < threshold) add(rest, threshold - total);
  const float inv_total = 1.0f / total;
  JointTransform out;
  out.translation = t * inv_total;
  out.scale = s * inv_total;
  const float len2 = dot4(q, q);
  out.rotation = len2 > kMinRotationLength2 ? q * (1.0f / std::sqrt(len2)) : rest.rotation;
  return out;
}

#if SPINDLE_BLEND_SSE
// Weighted poses the four-joint path can blend: at most this many (layers with weight > 0, plus
// the rest pose); more take the per-joint path.
constexpr std::size_t kMaxUniformPoses = 8;

// When no layer has a mask every joint has the same weights, and so the same rest pose share: the
// blend is one list of (pose, weight) for all joints. `count` is 0 when that does not apply.
struct UniformBlend {
  const float* pose[kMaxUniformPoses];
  float weight[kMaxUniformPoses];
  std::size_t count = 0;
  float total = 0.0f;
};

// With soa, the poses are the layers' SoaTransform arrays, and the rest pose (when it fills in)
// is named by rest_at instead (its pointer left null); otherwise rest_at stays -1.
// Fills `u` (count 0: the uniform paths do not apply). Filled in place, not returned: a returned
// copy of the struct was read back before its parts had been stored (a store-forwarding stall
// that cost a tenth of a blend).
void uniform_blend(std::span<const BlendLayer> layers, std::span<const JointTransform> rest,
                   float threshold, UniformBlend& u, bool soa = false, int* rest_at = nullptr) {
  u.count = 0;
  u.total = 0.0f;
  for (const BlendLayer& l : layers)
    if (!l.joint_weights.empty()) return;
  // Same order and sums as blend_joint().
  for (const BlendLayer& l : layers) {
    if (!(l.weight > 0.0f)) continue;
    if (u.count == kMaxUniformPoses) {
      u.count = 0;
      return;
    }
    u.pose[u.count] = soa ? reinterpret_cast<const float*>(l.soa_pose.data())
                          : reinterpret_cast<const float*>(l.pose.data());
    u.weight[u.count++] = l.weight;
    u.total += l.weight;
  }
  if (u.total < threshold) {
    if (u.count == kMaxUniformPoses) {
      u.count = 0;
      return;
    }
    if (soa) *rest_at = static_cast<int>(u.count);
    u.pose[u.count] = soa ? nullptr : reinterpret_cast<const float*>(rest.data());
    u.weight[u.count++] = threshold - u.total;
    u.total += threshold - u.total;
  }
}

// A weighted sum of four joints' rotations, one register per component (x, y, z, w), and its
// squared lengths once summed. Every contribution after the first is kept in the hemisphere of
// the sum so far (-weight where their dot is < 0); the first is multiplied, not added to zero,
// as blend_joint() does, so the paths agree to the bit.
struct RotationSum {
  __m128 q0, q1, q2, q3, len2;

  void first(__m128 r0, __m128 r1, __m128 r2, __m128 r3, __m128 w) {
    q0 = _mm_mul_ps(r0, w);
    q1 = _mm_mul_ps(r1, w);
    q2 = _mm_mul_ps(r2, w);
    q3 = _mm_mul_ps(r3, w);
  }
  void add(__m128 r0, __m128 r1, __m128 r2, __m128 r3, __m128 w) {
    const __m128 dot = _mm_add_ps(_mm_add_ps(_mm_mul_ps(q0, r0), _mm_mul_ps(q1, r1)),
                                  _mm_add_ps(_mm_mul_ps(q2, r2), _mm_mul_ps(q3, r3)));
    const __m128 sw =
        _mm_xor_ps(w, _mm_and_ps(_mm_cmplt_ps(dot, _mm_setzero_ps()), _mm_set1_ps(-0.0f)));
    q0 = _mm_add_ps(q0, _mm_mul_ps(sw, r0));
    q1 = _mm_add_ps(q1, _mm_mul_ps(sw, r1));
    q2 = _mm_add_ps(q2, _mm_mul_ps(sw, r2));
    q3 = _mm_add_ps(q3, _mm_mul_ps(sw, r3));
  }
  void finish() {
    len2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(q0, q0), _mm_mul_ps(q1, q1)),
                      _mm_add_ps(_mm_mul_ps(q2, q2), _mm_mul_ps(q3, q3)));
  }
};

// Every joint (at least four), four at a time. Translation and scale are a weighted sum of four
// joints' 40 floats taken as 10 vectors (the rotation lanes of that pass are overwritten after);
// rotations are transposed to one register per component, so the hemisphere test and the
// normalisation need no horizontal sums. The first pose is multiplied, not added to zero:
// blend_joint() does the same, so the two paths agree to the bit. N > 0 fixes the pose count at
// compile time (the loops over poses unroll); N = 0 reads it from `u`.
template <std::size_t N>
void blend_fours(const UniformBlend& u, std::span<const JointTransform> rest,
                 std::span<JointTransform> output) {
  const std::size_t count = N > 0 ? N : u.count;
  __m128 w[kMaxUniformPoses];
  for (std::size_t p = 0; p < count; ++p) w[p] = _mm_set1_ps(u.weight[p]);
  const __m128 inv_total = _mm_set1_ps(1.0f / u.total);
  const bool unit_total = u.total == 1.0f;
  const __m128 min_len2 = _mm_set1_ps(kMinRotationLength2);

  // Translation and scale of joints [first, first + 4).
  const auto sums = [&](std::size_t first) {
    const std::size_t at = 10 * first;  // float offset of the joint
    auto* out = reinterpret_cast<float*>(output.data()) + at;
    for (std::size_t k = 0; k < 40; k += 4) {
      __m128 acc = _mm_mul_ps(_mm_loadu_ps(u.pose[0] + at + k), w[0]);
      for (std::size_t p = 1; p < count; ++p)
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(u.pose[p] + at + k), w[p]));
      // x * 1 is x: weights that sum to 1 (0.7 + 0.3 does in float) skip the multiply.
      _mm_storeu_ps(out + k, unit_total ? acc : _mm_mul_ps(acc, inv_total));
    }
  };
  // The rotations of joints [first, first + 4), summed, one register per component.
  const auto rotations = [&](std::size_t first) {
    const std::size_t at = 10 * first;
    RotationSum q;
    for (std::size_t p = 0; p < count; ++p) {
      const float* f = u.pose[p] + at + 3;
      __m128 r0 = _mm_loadu_ps(f), r1 = _mm_loadu_ps(f + 10), r2 = _mm_loadu_ps(f + 20),
             r3 = _mm_loadu_ps(f + 30);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      if (p == 0)
        q.first(r0, r1, r2, r3, w[0]);
      else
        q.add(r0, r1, r2, r3, w[p]);
    }
    q.finish();
    return q;
  };
  // Normalised and stored (after sums(): they overwrite its rotation lanes).
  const auto store = [&](std::size_t first, const RotationSum& q) {
    auto* out = reinterpret_cast<float*>(output.data()) + 10 * first;
    const __m128 inv_len = _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(q.len2));
    __m128 r0 = _mm_mul_ps(q.q0, inv_len), r1 = _mm_mul_ps(q.q1, inv_len),
           r2 = _mm_mul_ps(q.q2, inv_len), r3 = _mm_mul_ps(q.q3, inv_len);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(out + 3, r0);
    _mm_storeu_ps(out + 13, r1);
    _mm_storeu_ps(out + 23, r2);
    _mm_storeu_ps(out + 33, r3);
    // Cancelled (or NaN) rotations fall back to the rest rotation, as in blend_joint().
    const int ok = _mm_movemask_ps(_mm_cmpgt_ps(q.len2, min_len2));
    if (ok != 0xF) [[unlikely]]
      for (std::size_t k = 0; k < 4; ++k)
        if ((ok & (1 << k)) == 0) output[first + k].rotation = rest[first + k].rotation;
  };
  // Groups of four joints, the last n % 4 as the group ending at the last joint: it blends up to
  // three joints again, to the same bits (lanes are independent, and the output aliases no
  // input), which is cheaper than the per-joint path for the rest. Each batch of groups sums all
  // its rotations first and normalises them after, so the square roots and divisions of
  // different groups overlap instead of each waiting on its own sums (the chain through sqrt and
  // div was most of the time); the operations on each lane are the same either way.
  const std::size_t n = output.size();
  const std::size_t groups = (n + 3) / 4;
  const auto first_of = [n](std::size_t g) { return std::min(4 * g, n - 4); };
  constexpr std::size_t kBatch = 8;
  RotationSum batch[kBatch];
  for (std::size_t g0 = 0; g0 < groups; g0 += kBatch) {
    const std::size_t g1 = std::min(groups, g0 + kBatch);
    for (std::size_t g = g0; g < g1; ++g) {
      sums(first_of(g));
      batch[g - g0] = rotations(first_of(g));
    }
    for (std::size_t g = g0; g < g1; ++g) store(first_of(g), batch[g - g0]);
  }
}

// Blends every joint with `u` (at least four joints).
void blend_uniform(const UniformBlend& u, std::span<const JointTransform> rest,
                   std::span<JointTransform> output) {
  switch (u.count) {
    case 1:
      blend_fours<1>(u, rest, output);
      break;
    case 2:
      blend_fours<2>(u, rest, output);
      break;
    case 3:
      blend_fours<3>(u, rest, output);
      break;
    default:
      blend_fours<0>(u, rest, output);
      break;
  }
}

// blend_fours() for SoA poses: the same operations lane for lane (so the same bits), four joints
// to a register as the entries hold them, so nothing is transposed. `u` lists the layers'
// entries (UniformBlend's poses point at SoaTransform arrays); a rest pose in it (the threshold
// filling in) is read from `rest` into a scratch entry, joint by joint.
template <std::size_t N, bool kUnitTotal>
void blend_soa_entries(const UniformBlend& u, int rest_at, std::span<const JointTransform> rest,
                       std::span<SoaTransform> output) {
  const std::size_t count = N > 0 ? N : u.count;
  const std::size_t joints = rest.size();
  __m128 w[kMaxUniformPoses];
  for (std::size_t p = 0; p < count; ++p) w[p] = _mm_set1_ps(u.weight[p]);
  const __m128 inv_total = _mm_set1_ps(1.0f / u.total);
  const __m128 min_len2 = _mm_set1_ps(kMinRotationLength2);
  SoaTransform rest_entry;
  // Pass one, entry e: translation and scale stored, and the rotation's weighted sum stored
  // unnormalised in the rotation lanes.
  // has_rest: a std::bool_constant, so the loop without a rest pose has no trace of it.
  const auto sums = [&](std::size_t e, auto has_rest) __attribute__((always_inline)) {
    const SoaTransform* in[kMaxUniformPoses] = {};
    for (std::size_t p = 0; p < count; ++p)
      in[p] = reinterpret_cast<const SoaTransform*>(u.pose[p]) + e;
    if constexpr (decltype(has_rest)::value) {
      for (int k = 0; k < 4; ++k) {
        const std::size_t j = 4 * e + static_cast<std::size_t>(k);
        rest_entry.set(k, j < joints ? rest[j] : JointTransform{});
      }
      in[rest_at] = &rest_entry;
    }
    SoaTransform& out = output[e];
    const auto sum = [&](float(SoaTransform::*part)[4]) {
      __m128 acc = _mm_mul_ps(_mm_load_ps(in[0]->*part), w[0]);
      for (std::size_t p = 1; p < count; ++p)
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_load_ps(in[p]->*part), w[p]));
      // x * 1 is x: weights that sum to 1 (0.7 + 0.3 does in float) skip the multiply.
      _mm_store_ps(out.*part, kUnitTotal ? acc : _mm_mul_ps(acc, inv_total));
    };
    sum(&SoaTransform::tx);
    sum(&SoaTransform::ty);
    sum(&SoaTransform::tz);
    sum(&SoaTransform::sx);
    sum(&SoaTransform::sy);
    sum(&SoaTransform::sz);
    RotationSum q;
    q.first(_mm_load_ps(in[0]->qx), _mm_load_ps(in[0]->qy), _mm_load_ps(in[0]->qz),
            _mm_load_ps(in[0]->qw), w[0]);
    for (std::size_t p = 1; p < count; ++p)
      q.add(_mm_load_ps(in[p]->qx), _mm_load_ps(in[p]->qy), _mm_load_ps(in[p]->qz),
            _mm_load_ps(in[p]->qw), w[p]);
    _mm_store_ps(out.qx, q.q0);
    _mm_store_ps(out.qy, q.q1);
    _mm_store_ps(out.qz, q.q2);
    _mm_store_ps(out.qw, q.q3);
  };
  // Pass two, entry e: the stored sum normalised in place.
  const auto normalise = [&](std::size_t e) __attribute__((always_inline)) {
    SoaTransform& out = output[e];
    RotationSum q;
    q.q0 = _mm_load_ps(out.qx);
    q.q1 = _mm_load_ps(out.qy);
    q.q2 = _mm_load_ps(out.qz);
    q.q3 = _mm_load_ps(out.qw);
    q.finish();
    const __m128 inv_len = _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(q.len2));
    _mm_store_ps(out.qx, _mm_mul_ps(q.q0, inv_len));
    _mm_store_ps(out.qy, _mm_mul_ps(q.q1, inv_len));
    _mm_store_ps(out.qz, _mm_mul_ps(q.q2, inv_len));
    _mm_store_ps(out.qw, _mm_mul_ps(q.q3, inv_len));
    // Cancelled (or NaN) rotations fall back to the rest rotation, as in blend_joint().
    const int ok = _mm_movemask_ps(_mm_cmpgt_ps(q.len2, min_len2));
    if (ok != 0xF) [[unlikely]] {
      for (int k = 0; k < 4; ++k) {
        if ((ok & (1 << k)) != 0) continue;
        const std::size_t j = 4 * e + static_cast<std::size_t>(k);
        JointTransform t = out.get(k);
        t.rotation = j < joints ? rest[j].rotation : glm::quat(1.0f, 0.0f, 0.0f, 0.0f);
        out.set(k, t);
      }
    }
  };
  // Every entry's sums first, then every normalisation: the square roots and divisions of
  // different entries then overlap instead of each waiting on its own sums (the chain through
  // them was most of the time, as in blend_fours()). The operations on each lane are the same.
  if (rest_at >= 0)
    for (std::size_t e = 0; e < output.size(); ++e) sums(e, std::true_type{});
  else
    for (std::size_t e = 0; e < output.size(); ++e) sums(e, std::false_type{});
  for (std::size_t e = 0; e < output.size(); ++e) normalise(e);
}

// Blends SoA layers with `u` (built from the layers' soa_pose, no masks).
void blend_uniform_soa(const UniformBlend& u, int rest_at, std::span<const JointTransform> rest,
                       std::span<SoaTransform> output) {
  if (u.total == 1.0f) {
    if (u.count == 2) return blend_soa_entries<2, true>(u, rest_at, rest, output);
    return blend_soa_entries<0, true>(u, rest_at, rest, output);
  }
  switch (u.count) {
    case 1:
      blend_soa_entries<1, false>(u, rest_at, rest, output);
      break;
    case 2:
      blend_soa_entries<2, false>(u, rest_at, rest, output);
      break;
    case 3:
      blend_soa_entries<3, false>(u, rest_at, rest, output);
      break;
    default:
      blend_soa_entries<0, false>(u, rest_at, rest, output);
      break;
  }
}
#endif

// One additive delta d at weight w on top of out.
void add_delta(JointTransform& out, const JointTransform& d, float w) {
  out.translation += d.translation * w;
  glm::quat r = d.rotation;
  if (r.w < 0.0f) r = -r;  // shortest path from identity
  const glm::quat id(1.0f, 0.0f, 0.0f, 0.0f);
  out.rotation = glm::normalize(out.rotation * glm::normalize(id * (1.0f - w) + r * w));
  out.scale *= glm::vec3(1.0f) + (d.scale - glm::vec3(1.0f)) * w;
}

// Additive layers on top of the normal blend, joint by joint, in array order.
void apply_additive(std::span<const BlendLayer> additive_layers, std::span<JointTransform> output) {
  for (const BlendLayer& l : additive_layers) {
    for (std::size_t j = 0; j < output.size(); ++j) {
      const float w = joint_weight(l, j);
      if (w > 0.0f) add_delta(output[j], l.pose[j], w);
    }
  }
}

void apply_additive_soa(std::span<const BlendLayer> additive_layers, std::size_t joints,
                        std::span<SoaTransform> output) {
  for (const BlendLayer& l : additive_layers) {
    for (std::size_t j = 0; j < joints; ++j) {
      const float w = joint_weight(l, j);
      if (!(w > 0.0f)) continue;
      const int lane = static_cast<int>(j % 4);
      JointTransform out = output[j / 4].get(lane);
      add_delta(out, l.soa_pose[j / 4].get(lane), w);
      output[j / 4].set(lane, out);
    }
  }
}

}  // namespace

core::Status BlendingJob::validate() const {
  if (rest_pose.empty()) return core::Status::error("BlendingJob: empty rest pose");
  const bool soa = !soa_output.empty();
  if (soa && !output.empty())
    return core::Status::error("BlendingJob: both output and soa_output (set one)");
  if (soa && soa_output.size() != soa_count(rest_pose.size()))
    return core::Status::error("BlendingJob: soa_output has " + std::to_string(soa_output.size()) +
                               " entries, " + std::to_string(rest_pose.size()) + " joints need " +
                               std::to_string(soa_count(rest_pose.size())));
  if (!soa && output.size() != rest_pose.size())
    return core::Status::error("BlendingJob: output has " + std::to_string(output.size()) +
                               " joints, rest pose has " + std::to_string(rest_pose.size()));
  if (!std::isfinite(threshold) || threshold <= 0.0f)
    return core::Status::error("BlendingJob: threshold must be finite and > 0");
  if (core::Status s = check_layers(layers, rest_pose.size(), soa, "layer"); !s) return s;
  return check_layers(additive_layers, rest_pose.size(), soa, "additive layer");
}

core::Status BlendingJob::run() const {
  if (core::Status s = validate(); !s) return s;
  const std::size_t n = rest_pose.size();
  if (!soa_output.empty()) {
    bool done = false;
#if SPINDLE_BLEND_SSE
    int rest_at = -1;
    UniformBlend u;
    uniform_blend(layers, rest_pose, threshold, u, true, &rest_at);
    if (u.count > 0) {
      blend_uniform_soa(u, rest_at, rest_pose, soa_output);
      done = true;
    }
#endif
    if (!done) {
      for (std::size_t j = 0; j < 4 * soa_output.size(); ++j)
        soa_output[j / 4].set(
            static_cast<int>(j % 4),
            j < n ? blend_joint(layers, rest_pose[j], threshold, j, soa_joint) : JointTransform{});
    }
    apply_additive_soa(additive_layers, n, soa_output);
    return {};
  }
  std::size_t j = 0;
#if SPINDLE_BLEND_SSE
  // Without masks every joint has the same weights: four joints at a time (the common case, e.g.
  // walk 0.7 / idle 0.3), with the same results as the per-joint path.
  if (n >= 4) {
    UniformBlend u;
    uniform_blend(layers, rest_pose, threshold, u);
    if (u.count > 0) {
      blend_uniform(u, rest_pose, output);
      j = n;
    }
  }
#endif
  for (; j < n; ++j) output[j] = blend_joint(layers, rest_pose[j], threshold, j, aos_joint);
  apply_additive(additive_layers, output);
  return {};
}

}  // namespace spindle::anim
