// Spindle's animation runtime next to ozz-animation on the workload of
// /work/shared/anim-anchor.md (bench/anim_workload.h), in one process, interleaved.
//
// Both runtimes get the same data: Spindle's make_anim_workload() builds the skeleton, the walk
// and idle clips and the skinned mesh, and this file converts them into ozz's offline raw data
// (RawSkeleton, RawAnimation) and ozz's skinning arrays. Each op then runs as
// bench/anim_bench.cpp's `ozz_workload/*` benchmarks define it, once with Spindle's jobs and once
// with ozz's:
//
//   pose                    both clips advance 1/60 s and wrap; sample walk and idle, blend
//                           0.7 / 0.3, local-to-model, palette = model x inverse bind
//   pose_compressed         the same, Spindle's clips Clip::compressed() (ozz: as above; ozz's
//                           runtime animation is always quantised)
//   pose_shipped            the same, clips keyframe-optimised (Spindle: KeyframeOptimizer 1 mm
//                           at 10 cm, then compressed; ozz: AnimationOptimizer, default 1 mm /
//                           10 cm)
//   sample_walk[...]        the walk clip alone at 60 Hz with wrap (float / compressed / shipped)
//   blend                   the walk (0.3 s) and idle (1.1 s) poses, 0.7 / 0.3; both sides
//                           in their SoA layout (Spindle: soa_pose.h; pose and local-to-model
//                           too), blend_jointtransform: Spindle's JointTransform arrays
//   local_to_model_palette  local-to-model and palette on the blended pose
//   skinning[_no_renorm]    2,000 vertices, 4 influences, positions + normals, the walk's palette
//                           at 0.3 s. ozz never renormalises normals; Spindle does by default
//                           (skinning) and can skip it (skinning_no_renorm).
//
// Timing: for each op, R rounds; each round times ozz and Spindle for ~S seconds each, in
// alternating order (ozz first in even rounds) so drift and turbo effects hit both sides alike.
// Run it pinned to one core (taskset -c 1). Options: --rounds R (11), --seconds S (0.25),
// --filter SUBSTRING (ops whose name contains it).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sched.h>

#include <ozz/animation/offline/animation_builder.h>
#include <ozz/animation/offline/animation_optimizer.h>
#include <ozz/animation/offline/raw_animation.h>
#include <ozz/animation/offline/raw_animation_utils.h>
#include <ozz/animation/offline/raw_skeleton.h>
#include <ozz/animation/offline/skeleton_builder.h>
#include <ozz/animation/runtime/animation.h>
#include <ozz/animation/runtime/blending_job.h>
#include <ozz/animation/runtime/local_to_model_job.h>
#include <ozz/animation/runtime/sampling_job.h>
#include <ozz/animation/runtime/skeleton.h>
#include <ozz/base/maths/simd_math.h>
#include <ozz/base/maths/soa_transform.h>
#include <ozz/base/span.h>
#include <ozz/geometry/runtime/skinning_job.h>

#include <spindle/anim/blending_job.h>
#include <spindle/anim/clip.h>
#include <spindle/anim/keyframe_optimizer.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skeleton.h>
#include <spindle/anim/skinned_mesh.h>
#include <spindle/anim/skinning_job.h>
#include <spindle/anim/soa_pose.h>

#include "anim_workload.h"

#ifndef SIDE_BY_SIDE_OZZ_VERSION
#define SIDE_BY_SIDE_OZZ_VERSION "unknown"
#endif
#ifndef SIDE_BY_SIDE_SPINDLE_COMMIT
#define SIDE_BY_SIDE_SPINDLE_COMMIT "unknown"
#endif

namespace {

using namespace spindle;
namespace oa = ozz::animation;
namespace oo = ozz::animation::offline;
namespace om = ozz::math;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "side_by_side: %s\n", what.c_str());
  std::exit(1);
}

// What google benchmark's DoNotOptimize / ClobberMemory do: the compiler must assume the value
// is read and memory is written, so no iteration's work can be dropped or hoisted.
template <class T>
inline void do_not_optimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
inline void clobber_memory() {
  asm volatile("" : : : "memory");
}

const bench::AnimWorkload& workload() {
  static const bench::AnimWorkload w = bench::make_anim_workload();
  return w;
}

// --- Spindle side: the clips and one character, as bench/anim_bench.cpp's OzzCharacter ---

template <class T>
T take(core::Result<T> r, const char* what) {
  if (!r) die(std::string(what) + ": " + r.message());
  return std::move(r.value());
}

struct SpindleClips {
  anim::Clip walk_compressed, idle_compressed;
  anim::Clip walk_quantized;
  anim::Clip walk_optimized;              // KeyframeOptimizer'd float clip, for its size
  anim::Clip walk_shipped, idle_shipped;  // optimised, then compressed (the bench's "shipped")
};

const SpindleClips& spindle_clips() {
  static const SpindleClips clips = [] {
    const bench::AnimWorkload& w = workload();
    // The bench's shipping settings: 1 mm at 10 cm, the same as ozz's optimizer defaults.
    const anim::KeyframeOptimizer optimizer{.tolerance = 0.001f, .distance = 0.1f};
    SpindleClips c;
    c.walk_compressed = take(w.walk.compressed(), "walk.compressed()");
    c.idle_compressed = take(w.idle.compressed(), "idle.compressed()");
    c.walk_quantized = take(w.walk.quantized(), "walk.quantized()");
    c.walk_optimized = take(optimizer.run(w.walk, w.skeleton), "optimize walk");
    c.walk_shipped = take(c.walk_optimized.compressed(), "shipped walk");
    c.idle_shipped =
        take(take(optimizer.run(w.idle, w.skeleton), "optimize idle").compressed(), "shipped idle");
    return c;
  }();
  return clips;
}

enum class Clips { Float, Compressed, Shipped };

struct SpindleCharacter {
  static constexpr std::size_t kJoints = bench::kAnimWorkloadJoints;
  const bench::AnimWorkload& w = workload();
  const anim::Clip* walk_clip = &w.walk;
  const anim::Clip* idle_clip = &w.idle;
  std::vector<anim::JointTransform> walk = std::vector<anim::JointTransform>(kJoints);
  std::vector<anim::JointTransform> idle = std::vector<anim::JointTransform>(kJoints);
  std::vector<anim::JointTransform> blended = std::vector<anim::JointTransform>(kJoints);
  // The same poses as SoaTransform entries (soa_pose.h), as ozz keeps its own.
  static constexpr std::size_t kEntries = anim::soa_count(kJoints);
  std::vector<anim::SoaTransform> walk_soa = std::vector<anim::SoaTransform>(kEntries);
  std::vector<anim::SoaTransform> idle_soa = std::vector<anim::SoaTransform>(kEntries);
  std::vector<anim::SoaTransform> blended_soa = std::vector<anim::SoaTransform>(kEntries);
  std::vector<glm::mat4> model = std::vector<glm::mat4>(kJoints);
  std::vector<glm::mat4> palette = std::vector<glm::mat4>(kJoints);
  anim::SamplingCache walk_cache{bench::kAnimWorkloadJoints};
  anim::SamplingCache idle_cache{bench::kAnimWorkloadJoints};
  float walk_time = 0.0f;
  float idle_time = 0.0f;

  explicit SpindleCharacter(Clips clips = Clips::Float) {
    if (clips == Clips::Compressed) {
      walk_clip = &spindle_clips().walk_compressed;
      idle_clip = &spindle_clips().idle_compressed;
    } else if (clips == Clips::Shipped) {
      walk_clip = &spindle_clips().walk_shipped;
      idle_clip = &spindle_clips().idle_shipped;
    }
  }

  bool sample_walk() {
    return anim::SamplingJob{
        .clip = walk_clip, .time = walk_time, .cache = &walk_cache, .output = walk}
        .run()
        .ok();
  }
  bool sample() {
    return sample_walk() &&
           anim::SamplingJob{
               .clip = idle_clip, .time = idle_time, .cache = &idle_cache, .output = idle}
               .run()
               .ok();
  }
  bool blend() {
    const anim::BlendLayer layers[] = {{.pose = walk, .weight = 0.7f},
                                       {.pose = idle, .weight = 0.3f}};
    return anim::BlendingJob{
        .rest_pose = w.skeleton.rest_pose(), .layers = layers, .output = blended}
        .run()
        .ok();
  }
  // The SoA forms of the three: the same bits (tests/anim/soa_pose_test.cpp).
  bool sample_soa() {
    return anim::SamplingJob{
               .clip = walk_clip, .time = walk_time, .cache = &walk_cache, .soa_output = walk_soa}
               .run()
               .ok() &&
           anim::SamplingJob{
               .clip = idle_clip, .time = idle_time, .cache = &idle_cache, .soa_output = idle_soa}
               .run()
               .ok();
  }
  bool blend_soa() {
    const anim::BlendLayer layers[] = {{.soa_pose = walk_soa, .weight = 0.7f},
                                       {.soa_pose = idle_soa, .weight = 0.3f}};
    return anim::BlendingJob{
        .rest_pose = w.skeleton.rest_pose(), .layers = layers, .soa_output = blended_soa}
        .run()
        .ok();
  }
  bool model_and_palette_soa() {
    return anim::LocalToModelJob{
        .skeleton = &w.skeleton, .soa_local = blended_soa, .model = model, .palette = palette}
        .run()
        .ok();
  }
  // The bench's form: LocalToModelJob writing the palette in the same pass.
  bool model_and_palette(std::span<const anim::JointTransform> local) {
    return anim::LocalToModelJob{
        .skeleton = &w.skeleton, .local = local, .model = model, .palette = palette}
        .run()
        .ok();
  }
  // Both clips one 60 Hz frame on, wrapping like a looping player.
  void advance() {
    walk_time += 1.0f / 60.0f;
    if (walk_time >= walk_clip->duration()) walk_time -= walk_clip->duration();
    idle_time += 1.0f / 60.0f;
    if (idle_time >= idle_clip->duration()) idle_time -= idle_clip->duration();
  }
};

// --- ozz side: the same data converted to ozz's offline formats, then built ---

struct OzzData {
  ozz::unique_ptr<oa::Skeleton> skeleton;
  ozz::unique_ptr<oa::Animation> walk, idle;  // AnimationBuilder on the raw clips
  ozz::unique_ptr<oa::Animation> walk_optimized, idle_optimized;  // AnimationOptimizer first
  std::size_t walk_raw_bytes = 0, idle_raw_bytes = 0;             // RawAnimation::size()
  // The converted float walk, kept to check the conversion itself (ozz's offline sampler reads
  // the float keys; its runtime ones are quantised).
  oo::RawAnimation raw_walk;
  // ozz orders joints depth-first from the RawSkeleton; Spindle's order is depth-first too, but
  // the mapping is taken from the names so a different order could not go unnoticed.
  std::vector<int> to_ozz;                  // Spindle joint -> ozz joint
  std::vector<om::Float4x4> inverse_binds;  // ozz order, Spindle's matrices
  // Skinning arrays in ozz's layout: AoS xyz positions / normals, 4 indices and 3 weights per
  // vertex (ozz derives the last weight as 1 - the others).
  std::vector<float> positions, normals, weights;
  std::vector<std::uint16_t> indices;
  int vertex_count = 0;
};

om::Float4x4 to_ozz_matrix(const glm::mat4& m) {
  // Both are column-major: glm's m[c] and ozz's cols[c] are the same column.
  om::Float4x4 r;
  for (int c = 0; c < 4; ++c) r.cols[c] = om::simd_float4::LoadPtrU(&m[c][0]);
  return r;
}

oo::RawAnimation to_raw(const anim::Clip& clip, const std::vector<int>& to_ozz) {
  oo::RawAnimation raw;
  raw.name = clip.name().c_str();
  // ozz's raw key times are seconds in [0, duration], like Spindle's; the runtime samples by
  // ratio = time / duration.
  raw.duration = clip.duration();
  raw.tracks.resize(to_ozz.size());
  const std::span<const anim::JointTrack> tracks = clip.tracks();
  for (std::size_t j = 0; j < tracks.size(); ++j) {
    oo::RawAnimation::JointTrack& out = raw.tracks[static_cast<std::size_t>(to_ozz[j])];
    for (const anim::Vec3Key& k : tracks[j].translations)
      out.translations.push_back({k.time, om::Float3(k.value.x, k.value.y, k.value.z)});
    // glm::quat's named members, not its storage order (which GLM_FORCE_QUAT_DATA_WXYZ flips).
    for (const anim::QuatKey& k : tracks[j].rotations)
      out.rotations.push_back({k.time, om::Quaternion(k.value.x, k.value.y, k.value.z, k.value.w)});
    for (const anim::Vec3Key& k : tracks[j].scales)
      out.scales.push_back({k.time, om::Float3(k.value.x, k.value.y, k.value.z)});
  }
  if (!raw.Validate()) die("RawAnimation " + std::string(clip.name()) + " is not valid");
  return raw;
}

const OzzData& ozz_data() {
  static const OzzData data = [] {
    const bench::AnimWorkload& w = workload();
    const anim::Skeleton& s = w.skeleton;
    const int n = s.joint_count();
    OzzData d;

    // RawSkeleton: a tree of joints, children in Spindle's order.
    std::vector<std::vector<int>> children(static_cast<std::size_t>(n));
    std::vector<int> roots;
    for (int j = 0; j < n; ++j)
      (s.parents()[j] < 0 ? roots : children[static_cast<std::size_t>(s.parents()[j])])
          .push_back(j);
    std::function<oo::RawSkeleton::Joint(int)> make_joint = [&](int j) {
      oo::RawSkeleton::Joint joint;
      joint.name = s.names()[j].c_str();
      const anim::JointTransform& rest = s.rest_pose()[j];
      joint.transform.translation =
          om::Float3(rest.translation.x, rest.translation.y, rest.translation.z);
      joint.transform.rotation =
          om::Quaternion(rest.rotation.x, rest.rotation.y, rest.rotation.z, rest.rotation.w);
      joint.transform.scale = om::Float3(rest.scale.x, rest.scale.y, rest.scale.z);
      for (int c : children[static_cast<std::size_t>(j)]) joint.children.push_back(make_joint(c));
      return joint;
    };
    oo::RawSkeleton raw_skeleton;
    for (int r : roots) raw_skeleton.roots.push_back(make_joint(r));
    if (!raw_skeleton.Validate()) die("RawSkeleton is not valid");
    d.skeleton = oo::SkeletonBuilder()(raw_skeleton);
    if (!d.skeleton || d.skeleton->num_joints() != n) die("SkeletonBuilder failed");

    d.to_ozz.assign(static_cast<std::size_t>(n), -1);
    for (int o = 0; o < n; ++o) {
      const int j = s.find(d.skeleton->joint_names()[o]);
      if (j < 0) die("ozz joint without a Spindle joint");
      d.to_ozz[static_cast<std::size_t>(j)] = o;
    }
    for (int j = 0; j < n; ++j) {
      const int p = s.parents()[j];
      const int op = d.skeleton->joint_parents()[d.to_ozz[j]];
      if ((p < 0 ? -1 : d.to_ozz[p]) != (op == oa::Skeleton::kNoParent ? -1 : op))
        die("ozz and Spindle hierarchies differ");
    }
    d.inverse_binds.resize(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) d.inverse_binds[d.to_ozz[j]] = to_ozz_matrix(s.inverse_binds()[j]);

    const oo::RawAnimation raw_walk = to_raw(w.walk, d.to_ozz);
    const oo::RawAnimation raw_idle = to_raw(w.idle, d.to_ozz);
    d.raw_walk = raw_walk;
    d.walk_raw_bytes = raw_walk.size();
    d.idle_raw_bytes = raw_idle.size();
    const oo::AnimationBuilder builder;
    d.walk = builder(raw_walk);
    d.idle = builder(raw_idle);
    // Default settings: 1 mm tolerance at 10 cm, the same as Spindle's shipped clips.
    const oo::AnimationOptimizer optimizer;
    oo::RawAnimation opt_walk, opt_idle;
    if (!optimizer(raw_walk, *d.skeleton, &opt_walk) ||
        !optimizer(raw_idle, *d.skeleton, &opt_idle))
      die("AnimationOptimizer failed");
    d.walk_optimized = builder(opt_walk);
    d.idle_optimized = builder(opt_idle);
    if (!d.walk || !d.idle || !d.walk_optimized || !d.idle_optimized)
      die("AnimationBuilder failed");

    const anim::SkinnedMesh& m = w.mesh;
    d.vertex_count = static_cast<int>(m.vertex_count());
    for (std::size_t v = 0; v < m.vertex_count(); ++v) {
      d.positions.insert(d.positions.end(), {m.px[v], m.py[v], m.pz[v]});
      d.normals.insert(d.normals.end(), {m.nx[v], m.ny[v], m.nz[v]});
      for (int k = 0; k < anim::kMaxInfluences; ++k) {
        const std::size_t i = v * anim::kMaxInfluences + static_cast<std::size_t>(k);
        d.indices.push_back(static_cast<std::uint16_t>(d.to_ozz[m.joint_indices[i]]));
        if (k < anim::kMaxInfluences - 1) d.weights.push_back(m.joint_weights[i]);
      }
    }
    return d;
  }();
  return data;
}

// One ozz character: the buffers and contexts a game would keep per character. Not movable
// (SamplingJob::Context is not).
struct OzzCharacter {
  const OzzData& d = ozz_data();
  const oa::Animation* walk_anim = d.walk.get();
  const oa::Animation* idle_anim = d.idle.get();
  const int soa = d.skeleton->num_soa_joints();
  const int joints = d.skeleton->num_joints();
  std::vector<om::SoaTransform> walk = std::vector<om::SoaTransform>(soa);
  std::vector<om::SoaTransform> idle = std::vector<om::SoaTransform>(soa);
  std::vector<om::SoaTransform> blended = std::vector<om::SoaTransform>(soa);
  std::vector<om::Float4x4> model = std::vector<om::Float4x4>(joints);
  std::vector<om::Float4x4> palette = std::vector<om::Float4x4>(joints);
  oa::SamplingJob::Context walk_context{joints};
  oa::SamplingJob::Context idle_context{joints};
  float walk_time = 0.0f;
  float idle_time = 0.0f;

  explicit OzzCharacter(bool optimized = false) {
    if (optimized) {
      walk_anim = d.walk_optimized.get();
      idle_anim = d.idle_optimized.get();
    }
  }
  OzzCharacter(const OzzCharacter&) = delete;
  OzzCharacter& operator=(const OzzCharacter&) = delete;

  bool sample_walk() {
    oa::SamplingJob job;
    job.animation = walk_anim;
    job.context = &walk_context;
    job.ratio = walk_time / walk_anim->duration();
    job.output = ozz::make_span(walk);
    return job.Run();
  }
  bool sample() {
    oa::SamplingJob job;
    job.animation = idle_anim;
    job.context = &idle_context;
    job.ratio = idle_time / idle_anim->duration();
    job.output = ozz::make_span(idle);
    return sample_walk() && job.Run();
  }
  bool blend() {
    oa::BlendingJob::Layer layers[2];
    layers[0].transform = ozz::make_span(walk);
    layers[0].weight = 0.7f;
    layers[1].transform = ozz::make_span(idle);
    layers[1].weight = 0.3f;
    oa::BlendingJob job;
    job.layers = layers;
    job.rest_pose = d.skeleton->joint_rest_poses();
    job.output = ozz::make_span(blended);
    return job.Run();
  }
  // ozz has no palette job: the multiply is the caller's loop, as in ozz's skinning sample.
  bool model_and_palette(const std::vector<om::SoaTransform>& local) {
    oa::LocalToModelJob job;
    job.skeleton = d.skeleton.get();
    job.input = ozz::make_span(local);
    job.output = ozz::make_span(model);
    if (!job.Run()) return false;
    for (int j = 0; j < joints; ++j) palette[j] = model[j] * d.inverse_binds[j];
    return true;
  }
  void advance() {
    walk_time += 1.0f / 60.0f;
    if (walk_time >= walk_anim->duration()) walk_time -= walk_anim->duration();
    idle_time += 1.0f / 60.0f;
    if (idle_time >= idle_anim->duration()) idle_time -= idle_anim->duration();
  }
};

// --- Agreement checks: both runtimes on the same inputs, largest absolute difference ---

float max_matrix_diff(const std::vector<glm::mat4>& spindle, const std::vector<om::Float4x4>& ozz,
                      const std::vector<int>& to_ozz) {
  float worst = 0.0f;
  for (std::size_t j = 0; j < spindle.size(); ++j) {
    const om::Float4x4& o = ozz[static_cast<std::size_t>(to_ozz[j])];
    for (int c = 0; c < 4; ++c) {
      float col[4];
      om::StorePtrU(o.cols[c], col);
      for (int r = 0; r < 4; ++r) worst = std::max(worst, std::fabs(col[r] - spindle[j][c][r]));
    }
  }
  return worst;
}

// Local pose difference: translation / scale components, and rotation as 1 - |dot| (q and -q
// are the same rotation).
struct LocalDiff {
  float translation = 0, rotation = 0, scale = 0;
};
LocalDiff max_local_diff(const std::vector<anim::JointTransform>& spindle,
                         const std::vector<om::SoaTransform>& ozz, const std::vector<int>& to_ozz) {
  LocalDiff worst;
  auto lane = [](om::SimdFloat4 v, int l) {
    float f[4];
    om::StorePtrU(v, f);
    return f[l];
  };
  for (std::size_t j = 0; j < spindle.size(); ++j) {
    const om::SoaTransform& o = ozz[static_cast<std::size_t>(to_ozz[j] / 4)];
    const int l = to_ozz[j] % 4;
    const anim::JointTransform& s = spindle[j];
    const glm::vec3 t(lane(o.translation.x, l), lane(o.translation.y, l), lane(o.translation.z, l));
    const glm::vec3 sc(lane(o.scale.x, l), lane(o.scale.y, l), lane(o.scale.z, l));
    const glm::quat q(lane(o.rotation.w, l), lane(o.rotation.x, l), lane(o.rotation.y, l),
                      lane(o.rotation.z, l));
    for (int c = 0; c < 3; ++c) {
      worst.translation = std::max(worst.translation, std::fabs(t[c] - s.translation[c]));
      worst.scale = std::max(worst.scale, std::fabs(sc[c] - s.scale[c]));
    }
    worst.rotation = std::max(worst.rotation, 1.0f - std::fabs(glm::dot(q, s.rotation)));
  }
  return worst;
}

// Plays both characters frame by frame for 3.5 s (the idle wraps once, the walk three times)
// and returns the largest difference of any model-space matrix over all frames.
float pose_agreement(Clips spindle_clips_kind, bool ozz_optimized) {
  SpindleCharacter s(spindle_clips_kind);
  OzzCharacter o(ozz_optimized);
  float worst = 0.0f;
  for (int frame = 0; frame < 210; ++frame) {
    s.advance();
    o.advance();
    if (!s.sample() || !s.blend() || !s.model_and_palette(s.blended)) die("Spindle pose failed");
    if (!o.sample() || !o.blend() || !o.model_and_palette(o.blended)) die("ozz pose failed");
    worst = std::max(worst, max_matrix_diff(s.model, o.model, o.d.to_ozz));
    // The SoA pose the timings use must be the same pose, to the bit.
    const std::vector<glm::mat4> palette = s.palette;
    if (!s.sample_soa() || !s.blend_soa() || !s.model_and_palette_soa())
      die("Spindle SoA pose failed");
    if (std::memcmp(palette.data(), s.palette.data(), palette.size() * sizeof(glm::mat4)) != 0)
      die("Spindle's SoA pose differs from its JointTransform pose");
  }
  return worst;
}

void print_agreement() {
  const OzzData& d = ozz_data();
  std::printf("\n== Agreement (max abs difference, Spindle vs ozz, same inputs) ==\n");
  {
    // The conversion alone: ozz's offline sampler on the converted float keys against Spindle's
    // float clip, every 60 Hz frame of the walk. Should be float rounding only.
    SpindleCharacter s;
    std::vector<om::Transform> raw(d.to_ozz.size());
    float t_err = 0, r_err = 0, s_err = 0;
    for (int frame = 0; frame <= 60; ++frame) {
      s.walk_time = static_cast<float>(frame) / 60.0f;
      if (!s.sample_walk() || !oo::SampleAnimation(d.raw_walk, s.walk_time, ozz::make_span(raw)))
        die("raw sampling failed");
      for (std::size_t j = 0; j < s.walk.size(); ++j) {
        const om::Transform& o = raw[static_cast<std::size_t>(d.to_ozz[j])];
        const anim::JointTransform& x = s.walk[j];
        const glm::vec3 ot(o.translation.x, o.translation.y, o.translation.z);
        const glm::vec3 os(o.scale.x, o.scale.y, o.scale.z);
        const glm::quat oq(o.rotation.w, o.rotation.x, o.rotation.y, o.rotation.z);
        for (int c = 0; c < 3; ++c) {
          t_err = std::max(t_err, std::fabs(ot[c] - x.translation[c]));
          s_err = std::max(s_err, std::fabs(os[c] - x.scale[c]));
        }
        r_err = std::max(r_err, 1.0f - std::fabs(glm::dot(oq, x.rotation)));
      }
    }
    std::printf(
        "conversion check, walk at 61 frames, ozz offline SampleAnimation (float keys): "
        "translation %.2e m, rotation 1-|dot| %.2e, scale %.2e\n",
        t_err, r_err, s_err);
  }
  {
    SpindleCharacter s;
    OzzCharacter o;
    s.walk_time = o.walk_time = 0.3f;
    s.idle_time = o.idle_time = 1.1f;
    if (!s.sample() || !o.sample()) die("sampling failed");
    const LocalDiff walk = max_local_diff(s.walk, o.walk, d.to_ozz);
    const LocalDiff idle = max_local_diff(s.idle, o.idle, d.to_ozz);
    std::printf(
        "sampled local pose, float clips (walk 0.3 s / idle 1.1 s): translation %.2e / %.2e m, "
        "rotation 1-|dot| %.2e / %.2e, scale %.2e / %.2e\n",
        walk.translation, idle.translation, walk.rotation, idle.rotation, walk.scale, idle.scale);
    if (!s.blend() || !o.blend() || !s.model_and_palette(s.blended) ||
        !o.model_and_palette(o.blended))
      die("blend / local-to-model failed");
    std::printf("blended pose, model matrices: %.2e; palette: %.2e\n",
                max_matrix_diff(s.model, o.model, d.to_ozz),
                max_matrix_diff(s.palette, o.palette, d.to_ozz));
  }
  std::printf(
      "pose over 210 frames at 60 Hz, model matrices: float clips %.2e; "
      "Spindle compressed vs ozz built %.2e; shipped (both optimised) %.2e\n",
      pose_agreement(Clips::Float, false), pose_agreement(Clips::Compressed, false),
      pose_agreement(Clips::Shipped, true));

  // Skinning with each side's own palette of the walk at 0.3 s (float clips).
  SpindleCharacter s;
  OzzCharacter o;
  s.walk_time = o.walk_time = 0.3f;
  if (!s.sample_walk() || !s.model_and_palette(s.walk) || !o.sample_walk() ||
      !o.model_and_palette(o.walk))
    die("walk palette failed");
  const anim::SkinnedMesh& m = workload().mesh;
  const std::size_t n = m.vertex_count();
  std::vector<float> px(n), py(n), pz(n), nx(n), ny(n), nz(n);
  std::vector<float> op(3 * n), on(3 * n);
  // Spindle's palette in ozz's order, to tell skinning differences from palette differences.
  std::vector<om::Float4x4> shared_palette(s.palette.size());
  for (std::size_t j = 0; j < s.palette.size(); ++j)
    shared_palette[static_cast<std::size_t>(d.to_ozz[j])] = to_ozz_matrix(s.palette[j]);
  float pos = 0, nrm_raw = 0, nrm_renorm = 0, renorm_len = 0, pos_shared = 0, nrm_shared = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const bool renorm = pass == 1;
    const bool shared = pass == 2;
    anim::SkinningJob job{.palette = s.palette,
                          .joint_indices = m.joint_indices,
                          .joint_weights = m.joint_weights,
                          .in_positions = m.positions(),
                          .in_normals = m.normals(),
                          .out_positions = {px, py, pz},
                          .out_normals = {nx, ny, nz},
                          .normalize_normals = renorm};
    if (!job.run()) die("Spindle skinning failed");
    ozz::geometry::SkinningJob oj;
    oj.vertex_count = d.vertex_count;
    oj.influences_count = 4;
    oj.joint_matrices = shared ? ozz::make_span(shared_palette) : ozz::make_span(o.palette);
    oj.joint_indices = ozz::make_span(d.indices);
    oj.joint_indices_stride = 4 * sizeof(std::uint16_t);
    oj.joint_weights = ozz::make_span(d.weights);
    oj.joint_weights_stride = 3 * sizeof(float);
    oj.in_positions = ozz::make_span(d.positions);
    oj.in_positions_stride = 3 * sizeof(float);
    oj.in_normals = ozz::make_span(d.normals);
    oj.in_normals_stride = 3 * sizeof(float);
    oj.out_positions = ozz::make_span(op);
    oj.out_positions_stride = 3 * sizeof(float);
    oj.out_normals = ozz::make_span(on);
    oj.out_normals_stride = 3 * sizeof(float);
    if (!oj.Run()) die("ozz skinning failed");
    for (std::size_t v = 0; v < n; ++v) {
      const float sp[3] = {px[v], py[v], pz[v]};
      const float sn[3] = {nx[v], ny[v], nz[v]};
      for (int c = 0; c < 3; ++c) {
        const float dn = std::fabs(sn[c] - on[3 * v + c]);
        if (shared) {
          pos_shared = std::max(pos_shared, std::fabs(sp[c] - op[3 * v + c]));
          nrm_shared = std::max(nrm_shared, dn);
        } else if (!renorm) {
          pos = std::max(pos, std::fabs(sp[c] - op[3 * v + c]));
          nrm_raw = std::max(nrm_raw, dn);
        } else {
          nrm_renorm = std::max(nrm_renorm, dn);
        }
      }
      if (pass == 0) {
        const float len = std::sqrt(on[3 * v] * on[3 * v] + on[3 * v + 1] * on[3 * v + 1] +
                                    on[3 * v + 2] * on[3 * v + 2]);
        renorm_len = std::max(renorm_len, std::fabs(1.0f - len));
      }
    }
  }
  std::printf(
      "skinning (walk 0.3 s, 2,000 vertices): positions %.2e m; normals %.2e vs Spindle "
      "without renormalising, %.2e vs Spindle renormalising (ozz's normals are up to "
      "%.2e off unit length)\n",
      pos, nrm_raw, nrm_renorm, renorm_len);
  std::printf(
      "skinning with the same palette (Spindle's, converted), no renormalising: positions "
      "%.2e m, normals %.2e\n",
      pos_shared, nrm_shared);
}

void print_sizes() {
  const OzzData& d = ozz_data();
  const bench::AnimWorkload& w = workload();
  const SpindleClips& c = spindle_clips();
  std::printf("\n== Clip sizes (bytes) ==\n");
  std::printf("%-46s %10s %10s\n", "", "walk", "idle");
  std::printf("%-46s %10zu %10zu\n", "ozz RawAnimation::size() (offline input)", d.walk_raw_bytes,
              d.idle_raw_bytes);
  std::printf("%-46s %10zu %10zu\n", "ozz Animation::size(), AnimationBuilder", d.walk->size(),
              d.idle->size());
  std::printf("%-46s %10zu %10zu\n", "ozz Animation::size(), AnimationOptimizer first",
              d.walk_optimized->size(), d.idle_optimized->size());
  std::printf("%-46s %10zu %10zu\n", "Spindle Clip::memory_bytes(), float", w.walk.memory_bytes(),
              w.idle.memory_bytes());
  std::printf("%-46s %10zu %10s\n", "Spindle quantized()", c.walk_quantized.memory_bytes(), "-");
  std::printf("%-46s %10zu %10zu\n", "Spindle compressed()", c.walk_compressed.memory_bytes(),
              c.idle_compressed.memory_bytes());
  std::printf("%-46s %10zu %10s\n", "Spindle KeyframeOptimizer (float)",
              c.walk_optimized.memory_bytes(), "-");
  std::printf("%-46s %10zu %10zu\n", "Spindle KeyframeOptimizer + compressed (shipped)",
              c.walk_shipped.memory_bytes(), c.idle_shipped.memory_bytes());
}

// --- Timing ---

// Runs the op `iterations` times; the loop lives in the lambda so each side's body is inlined.
using Loop = std::function<void(std::int64_t iterations)>;

struct Op {
  std::string name;
  Loop ozz;
  Loop spindle;
  int vertices = 0;  // > 0: also report vertices per second
  std::string note;
};

double seconds_per_iteration(const Loop& loop, std::int64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  loop(iterations);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(iterations);
}

// Iterations for ~`seconds`, after a warm-up of about that long.
std::int64_t calibrate(const Loop& loop, double seconds) {
  std::int64_t n = 1;
  double total = 0.0;
  for (;;) {
    const double per = seconds_per_iteration(loop, n);
    total += per * static_cast<double>(n);
    if (per * static_cast<double>(n) > 0.02 && total > seconds) {
      return std::max<std::int64_t>(1, static_cast<std::int64_t>(seconds / per));
    }
    n *= 2;
  }
}

struct Stats {
  double median, min, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

void run_op(const Op& op, int rounds, double seconds) {
  const std::int64_t n_ozz = calibrate(op.ozz, seconds);
  const std::int64_t n_spindle = calibrate(op.spindle, seconds);
  std::vector<double> t_ozz, t_spindle;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      t_ozz.push_back(seconds_per_iteration(op.ozz, n_ozz));
      t_spindle.push_back(seconds_per_iteration(op.spindle, n_spindle));
    } else {
      t_spindle.push_back(seconds_per_iteration(op.spindle, n_spindle));
      t_ozz.push_back(seconds_per_iteration(op.ozz, n_ozz));
    }
  }
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) ratios.push_back(t_ozz[r] / t_spindle[r]);
  const Stats o = stats(t_ozz), s = stats(t_spindle), q = stats(ratios);
  std::printf("%-30s %8.3f [%7.3f ..%7.3f] %8.3f [%7.3f ..%7.3f]  %6.2f (%4.2f..%4.2f)\n",
              op.name.c_str(), o.median * 1e6, o.min * 1e6, o.max * 1e6, s.median * 1e6,
              s.min * 1e6, s.max * 1e6, o.median / s.median, q.min, q.max);
  if (op.vertices > 0) {
    const double v = op.vertices;
    std::printf(
        "%-30s %8.1f M vertices/s (ozz)  %8.1f M vertices/s (Spindle)  rate ozz/Spindle "
        "%.2f\n",
        "", v / o.median * 1e-6, v / s.median * 1e-6, s.median / o.median);
  }
  if (!op.note.empty()) std::printf("%-30s %s\n", "", op.note.c_str());
  std::fflush(stdout);
}

// Pose per character: advance, sample both, blend, local-to-model, palette.
Loop spindle_pose(Clips clips) {
  return [clips](std::int64_t n) {
    // One character per clip kind, kept across calls so playback goes on from round to round.
    static SpindleCharacter chars[3] = {SpindleCharacter(Clips::Float),
                                        SpindleCharacter(Clips::Compressed),
                                        SpindleCharacter(Clips::Shipped)};
    SpindleCharacter& c = chars[static_cast<int>(clips)];
    for (std::int64_t i = 0; i < n; ++i) {
      c.advance();
      if (!(c.sample_soa() && c.blend_soa() && c.model_and_palette_soa()))
        die("Spindle pose failed");
      do_not_optimize(c.palette.data());
      clobber_memory();
    }
  };
}

OzzCharacter& ozz_character(bool optimized) {
  static OzzCharacter plain(false), opt(true);
  return optimized ? opt : plain;
}

Loop ozz_pose(bool optimized) {
  return [optimized](std::int64_t n) {
    OzzCharacter& c = ozz_character(optimized);
    for (std::int64_t i = 0; i < n; ++i) {
      c.advance();
      if (!(c.sample() && c.blend() && c.model_and_palette(c.blended))) die("ozz pose failed");
      do_not_optimize(c.palette.data());
      clobber_memory();
    }
  };
}

// Blending alone: the walk at 0.3 s and the idle at 1.1 s, sampled once, blended 0.7 / 0.3.
Loop ozz_blend() {
  return [](std::int64_t n) {
    static OzzCharacter c;
    static const bool ready = [] {
      c.walk_time = 0.3f;
      c.idle_time = 1.1f;
      return c.sample();
    }();
    if (!ready) die("ozz sampling failed");
    for (std::int64_t i = 0; i < n; ++i) {
      if (!c.blend()) die("ozz blend failed");
      do_not_optimize(c.blended.data());
      clobber_memory();
    }
  };
}

// soa: Spindle's SoA poses (soa_pose.h), else its JointTransform arrays.
Loop spindle_blend(bool soa) {
  return [soa](std::int64_t n) {
    static SpindleCharacter chars[2];
    static const bool ready = [] {
      for (SpindleCharacter& c : chars) {
        c.walk_time = 0.3f;
        c.idle_time = 1.1f;
      }
      return chars[0].sample() && chars[1].sample_soa();
    }();
    if (!ready) die("Spindle sampling failed");
    SpindleCharacter& c = chars[soa ? 1 : 0];
    for (std::int64_t i = 0; i < n; ++i) {
      if (!(soa ? c.blend_soa() : c.blend())) die("Spindle blend failed");
      do_not_optimize(soa ? static_cast<const void*>(c.blended_soa.data()) : c.blended.data());
      clobber_memory();
    }
  };
}

Loop spindle_sample_walk(Clips clips) {
  return [clips](std::int64_t n) {
    static SpindleCharacter chars[3] = {SpindleCharacter(Clips::Float),
                                        SpindleCharacter(Clips::Compressed),
                                        SpindleCharacter(Clips::Shipped)};
    SpindleCharacter& c = chars[static_cast<int>(clips)];
    for (std::int64_t i = 0; i < n; ++i) {
      c.advance();
      if (!c.sample_walk()) die("Spindle sampling failed");
      do_not_optimize(c.walk.data());
      clobber_memory();
    }
  };
}

Loop ozz_sample_walk(bool optimized) {
  return [optimized](std::int64_t n) {
    // Separate characters from the pose ops so each op's playback starts at 0.
    static OzzCharacter plain(false), opt(true);
    OzzCharacter& c = optimized ? opt : plain;
    for (std::int64_t i = 0; i < n; ++i) {
      c.advance();
      if (!c.sample_walk()) die("ozz sampling failed");
      do_not_optimize(c.walk.data());
      clobber_memory();
    }
  };
}

std::vector<Op> make_ops() {
  std::vector<Op> ops;
  ops.push_back({"pose", ozz_pose(false), spindle_pose(Clips::Float), 0,
                 "ozz built (quantised) clips vs Spindle float clips"});
  ops.push_back({"pose_compressed", ozz_pose(false), spindle_pose(Clips::Compressed), 0,
                 "ozz built clips vs Spindle compressed()"});
  ops.push_back({"pose_shipped", ozz_pose(true), spindle_pose(Clips::Shipped), 0,
                 "ozz AnimationOptimizer'd vs Spindle KeyframeOptimizer + compressed()"});
  ops.push_back({"sample_walk", ozz_sample_walk(false), spindle_sample_walk(Clips::Float), 0,
                 "ozz built walk vs Spindle float walk"});
  ops.push_back({"sample_walk_compressed", ozz_sample_walk(false),
                 spindle_sample_walk(Clips::Compressed), 0,
                 "ozz built walk vs Spindle compressed() walk"});
  ops.push_back({"sample_walk_shipped", ozz_sample_walk(true), spindle_sample_walk(Clips::Shipped),
                 0, "optimised walks on both sides"});

  ops.push_back({"blend", ozz_blend(), spindle_blend(true), 0, ""});
  ops.push_back({"blend_jointtransform", ozz_blend(), spindle_blend(false), 0,
                 "Spindle with JointTransform arrays (transposed per four joints)"});

  ops.push_back({"local_to_model_palette",
                 [](std::int64_t n) {
                   static OzzCharacter c;
                   static const bool ready = [] {
                     c.walk_time = 0.3f;
                     c.idle_time = 1.1f;
                     return c.sample() && c.blend();
                   }();
                   if (!ready) die("ozz pose failed");
                   for (std::int64_t i = 0; i < n; ++i) {
                     if (!c.model_and_palette(c.blended)) die("ozz local-to-model failed");
                     do_not_optimize(c.palette.data());
                     clobber_memory();
                   }
                 },
                 [](std::int64_t n) {
                   static SpindleCharacter c;
                   static const bool ready = [] {
                     c.walk_time = 0.3f;
                     c.idle_time = 1.1f;
                     return c.sample_soa() && c.blend_soa();
                   }();
                   if (!ready) die("Spindle pose failed");
                   for (std::int64_t i = 0; i < n; ++i) {
                     if (!c.model_and_palette_soa()) die("Spindle local-to-model failed");
                     do_not_optimize(c.palette.data());
                     clobber_memory();
                   }
                 },
                 0, "ozz: LocalToModelJob + Float4x4 multiply loop; Spindle: fused job"});

  // Skinning: each side's palette of the walk at 0.3 s, outputs kept between runs (in cache).
  struct OzzSkin {
    OzzCharacter c;
    std::vector<float> positions, normals;
    ozz::geometry::SkinningJob job;
    OzzSkin() {
      const OzzData& d = c.d;
      c.walk_time = 0.3f;
      if (!c.sample_walk() || !c.model_and_palette(c.walk)) die("ozz walk palette failed");
      positions.resize(d.positions.size());
      normals.resize(d.normals.size());
      job.vertex_count = d.vertex_count;
      job.influences_count = 4;  // 4 indices, 3 stored weights per vertex
      job.joint_matrices = ozz::make_span(c.palette);
      job.joint_indices = ozz::make_span(d.indices);
      job.joint_indices_stride = 4 * sizeof(std::uint16_t);
      job.joint_weights = ozz::make_span(d.weights);
      job.joint_weights_stride = 3 * sizeof(float);
      job.in_positions = ozz::make_span(d.positions);
      job.in_positions_stride = 3 * sizeof(float);
      job.in_normals = ozz::make_span(d.normals);
      job.in_normals_stride = 3 * sizeof(float);
      job.out_positions = ozz::make_span(positions);
      job.out_positions_stride = 3 * sizeof(float);
      job.out_normals = ozz::make_span(normals);
      job.out_normals_stride = 3 * sizeof(float);
    }
  };
  struct SpindleSkin {
    SpindleCharacter c;
    std::vector<float> px, py, pz, nx, ny, nz;
    anim::SkinningJob job;
    explicit SpindleSkin(bool renormalize) {
      const anim::SkinnedMesh& m = c.w.mesh;
      c.walk_time = 0.3f;
      if (!c.sample_walk() || !c.model_and_palette(c.walk)) die("Spindle walk palette failed");
      for (auto* v : {&px, &py, &pz, &nx, &ny, &nz}) v->resize(m.vertex_count());
      job.palette = c.palette;
      job.joint_indices = m.joint_indices;
      job.joint_weights = m.joint_weights;
      job.in_positions = m.positions();
      job.in_normals = m.normals();
      job.out_positions = {px, py, pz};
      job.out_normals = {nx, ny, nz};
      job.normalize_normals = renormalize;
    }
  };
  const Loop ozz_skin = [](std::int64_t n) {
    static OzzSkin s;
    for (std::int64_t i = 0; i < n; ++i) {
      if (!s.job.Run()) die("ozz skinning failed");
      do_not_optimize(s.positions.data());
      do_not_optimize(s.normals.data());
      clobber_memory();
    }
  };
  const auto spindle_skin = [](bool renormalize) -> Loop {
    return [renormalize](std::int64_t n) {
      static SpindleSkin with(true), without(false);
      SpindleSkin& s = renormalize ? with : without;
      for (std::int64_t i = 0; i < n; ++i) {
        if (!s.job.run()) die("Spindle skinning failed");
        do_not_optimize(s.px.data());
        do_not_optimize(s.nz.data());
        clobber_memory();
      }
    };
  };
  ops.push_back({"skinning", ozz_skin, spindle_skin(true), bench::kAnimWorkloadVertices,
                 "Spindle renormalises normals (its default); ozz does not. ozz AoS, Spindle SoA"});
  ops.push_back({"skinning_no_renorm", ozz_skin, spindle_skin(false), bench::kAnimWorkloadVertices,
                 "Spindle normalize_normals = false"});
  return ops;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11;
  double seconds = 0.25;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::max(0.001, std::atof(argv[++i]));
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--rounds R] [--seconds S] [--filter SUBSTRING]\n", argv[0]);
      return 2;
    }
  }

  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
  std::printf("ozz-animation %s vs Spindle %s; compiler %s; CPUs allowed %d (on CPU %d)\n",
              SIDE_BY_SIDE_OZZ_VERSION, SIDE_BY_SIDE_SPINDLE_COMMIT, __VERSION__, allowed,
              sched_getcpu());
  if (allowed != 1) std::printf("warning: not pinned to one core (run under taskset -c N)\n");
  std::printf("workload: %d joints, walk %.0f s, idle %.0f s, %.0f keys/s, %d vertices\n",
              bench::kAnimWorkloadJoints, workload().walk.duration(), workload().idle.duration(),
              bench::kAnimWorkloadKeysPerSecond, bench::kAnimWorkloadVertices);

  print_sizes();
  print_agreement();

  std::printf(
      "\n== Timing: %d rounds x ~%.2f s per side, alternating order; us per op, "
      "median [min .. max] ==\n",
      rounds, seconds);
  std::printf("%-30s %29s %29s  %s\n", "op", "ozz", "Spindle",
              "ozz/Spindle time: median ratio (per-round min..max)");
  for (const Op& op : make_ops())
    if (filter.empty() || op.name.find(filter) != std::string::npos) run_op(op, rounds, seconds);
  return 0;
}
