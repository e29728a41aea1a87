// Animation runtime throughput on one core, on procedural characters (issue 5 targets):
//   skinning/vertices:2000/joints:50  SkinningJob, 4 influences, positions + normals; counter
//                                     `vertices` = skinned vertices per second
//   character_pose/joints:50          sample walk + idle, blend 2 layers, local-to-model,
//                                     palette; the iteration time is the time per character
//   sample_walk/joints:50/quantized:Q SamplingJob on the walk clip alone, float (Q = 0) or
//                                     16-bit keys (Q = 1); time per character, `clip_bytes`
//
// The ozz-animation anchor (issue 16; workload and ozz's figures in
// /work/shared/anim-anchor.md, built by anim_workload.h), one row of its table each:
//   ozz_workload/pose                 per character: walk and idle advance 1/60 s and wrap,
//                                     sample both, blend 0.7 / 0.3, local-to-model, palette
//   ozz_workload/sample_walk          the walk clip alone at 60 Hz with wrap; `clip_bytes`
//   ozz_workload/*_shipped_clips      the same with the clips keyframe-optimised (1 mm at 10 cm)
//                                     and compressed, as a game ships them
//   ozz_workload/blend                BlendingJob alone, the two sampled poses, 0.7 / 0.3
//   ozz_workload/local_to_model_palette  LocalToModelJob + PaletteJob on the blended pose
//   ozz_workload/skinning             2,000 vertices, 4 influences, positions + normals, the
//                                     walk's palette at 0.3 s; `vertices` per second
//
//   ./build/release/bench/spindle_bench_anim --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true
//   ./build/release/bench/spindle_bench_anim --benchmark_filter='ozz_workload'
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <cmath>
#include <cstdlib>
#include <span>
#include <vector>

#include <benchmark/benchmark.h>

#include <spindle/anim/blending_job.h>
#include <spindle/anim/keyframe_optimizer.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skinning_job.h>

#include "anim_workload.h"

namespace {

using namespace spindle;

anim::Character character(int joints, int vertices) {
  core::Result<anim::Character> r =
      anim::make_character({.seed = 1, .joint_count = joints, .vertex_count = vertices});
  if (!r) std::abort();  // fixed, valid desc
  return std::move(r.value());
}

// Skins `m` with `palette` (positions and normals, SoA) once per iteration; counter `vertices` =
// skinned vertices per second. run() includes validate(): one pass over the joint indices, as
// the stage would pay.
void skin_repeatedly(benchmark::State& state, const anim::SkinnedMesh& m,
                     std::span<const glm::mat4> palette) {
  std::vector<float> px(m.vertex_count()), py(px.size()), pz(px.size()), nx(px.size()),
      ny(px.size()), nz(px.size());
  anim::SkinningJob job;
  job.palette = palette;
  job.joint_indices = m.joint_indices;
  job.joint_weights = m.joint_weights;
  job.in_positions = m.positions();
  job.in_normals = m.normals();
  job.out_positions = {px, py, pz};
  job.out_normals = {nx, ny, nz};
  for (auto _ : state) {
    if (!job.run()) state.SkipWithError("SkinningJob failed");
    benchmark::DoNotOptimize(px.data());
    benchmark::DoNotOptimize(nz.data());
    benchmark::ClobberMemory();
  }
  state.counters["vertices"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(m.vertex_count()),
      benchmark::Counter::kIsRate);
}

void skinning(benchmark::State& state) {
  const auto joints = static_cast<int>(state.range(1));
  const anim::Character c = character(joints, static_cast<int>(state.range(0)));
  const anim::SkinnedMesh& m = c.mesh;
  const auto n = static_cast<std::size_t>(joints);

  // A real walking palette, so the blended matrices are not identities.
  std::vector<anim::JointTransform> local(n);
  std::vector<glm::mat4> model(n), palette(n);
  anim::SamplingCache cache(joints);
  if (!anim::SamplingJob{.clip = &c.walk, .time = 0.3f, .cache = &cache, .output = local}.run() ||
      !anim::LocalToModelJob{.skeleton = &c.skeleton, .local = local, .model = model}.run() ||
      !anim::PaletteJob{
          .model = model, .inverse_binds = c.skeleton.inverse_binds(), .palette = palette}
           .run())
    std::abort();

  skin_repeatedly(state, m, palette);
}
BENCHMARK(skinning)->Args({2000, 50})->ArgNames({"vertices", "joints"});

void character_pose(benchmark::State& state) {
  const auto joints = static_cast<int>(state.range(0));
  const anim::Character c = character(joints, 16);
  const auto n = static_cast<std::size_t>(joints);
  std::vector<anim::JointTransform> walk(n), idle(n), blended(n);
  std::vector<glm::mat4> model(n), palette(n);
  anim::SamplingCache walk_cache(joints), idle_cache(joints);
  float t = 0.0f;
  for (auto _ : state) {
    // Steady forward playback at 60 Hz, wrapping like a looping player.
    t += 1.0f / 60.0f;
    if (t >= c.walk.duration()) t -= c.walk.duration();
    const float t_idle = std::fmod(t * 1.7f, c.idle.duration());
    const anim::BlendLayer layers[] = {{.pose = walk, .weight = 0.7f},
                                       {.pose = idle, .weight = 0.3f}};
    const bool ok =
        anim::SamplingJob{.clip = &c.walk, .time = t, .cache = &walk_cache, .output = walk}.run() &&
        anim::SamplingJob{.clip = &c.idle, .time = t_idle, .cache = &idle_cache, .output = idle}
            .run() &&
        anim::BlendingJob{.rest_pose = c.skeleton.rest_pose(), .layers = layers, .output = blended}
            .run() &&
        anim::LocalToModelJob{.skeleton = &c.skeleton, .local = blended, .model = model}.run() &&
        anim::PaletteJob{
            .model = model, .inverse_binds = c.skeleton.inverse_binds(), .palette = palette}
            .run();
    if (!ok) state.SkipWithError("animation job failed");
    benchmark::DoNotOptimize(palette.data());
    benchmark::ClobberMemory();
  }
  state.counters["characters"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(character_pose)->Arg(50)->ArgName("joints");

// Sampling only: the walk clip at 60 Hz forward playback, float keys or 16-bit quantised keys
// (Clip::quantized()); the iteration time is the time per character.
void sample_walk(benchmark::State& state) {
  const auto joints = static_cast<int>(state.range(0));
  const anim::Character c = character(joints, 16);
  core::Result<anim::Clip> quantized = c.walk.quantized();
  if (!quantized) std::abort();
  const anim::Clip& clip = state.range(1) != 0 ? quantized.value() : c.walk;
  std::vector<anim::JointTransform> pose(static_cast<std::size_t>(joints));
  anim::SamplingCache cache(joints);
  float t = 0.0f;
  for (auto _ : state) {
    t += 1.0f / 60.0f;
    if (t >= clip.duration()) t -= clip.duration();
    if (!anim::SamplingJob{.clip = &clip, .time = t, .cache = &cache, .output = pose}.run())
      state.SkipWithError("SamplingJob failed");
    benchmark::DoNotOptimize(pose.data());
    benchmark::ClobberMemory();
  }
  state.counters["clip_bytes"] = static_cast<double>(clip.memory_bytes());
}
BENCHMARK(sample_walk)->Args({50, 0})->Args({50, 1})->ArgNames({"joints", "quantized"});

// --- The ozz-animation anchor workload (anim_workload.h) ---

const bench::AnimWorkload& workload() {
  static const bench::AnimWorkload w = bench::make_anim_workload();
  return w;
}

// The workload's clips as a game would ship them: keyframe-optimised (1 mm at 10 cm from each
// joint), then compressed. Built once.
struct ShippedClips {
  anim::Clip walk;
  anim::Clip idle;
};
const ShippedClips& shipped_clips() {
  static const ShippedClips clips = [] {
    const bench::AnimWorkload& w = workload();
    const anim::KeyframeOptimizer optimizer{.tolerance = 0.001f, .distance = 0.1f};
    auto ship = [&](const anim::Clip& clip) {
      core::Result<anim::Clip> optimized = optimizer.run(clip, w.skeleton);
      if (!optimized) std::abort();
      core::Result<anim::Clip> compressed = optimized.value().compressed();
      if (!compressed) std::abort();
      return std::move(compressed).value();
    };
    return ShippedClips{ship(w.walk), ship(w.idle)};
  }();
  return clips;
}

// One character's buffers and caches, set up once as a game would.
struct OzzCharacter {
  static constexpr std::size_t kJoints = bench::kAnimWorkloadJoints;
  const bench::AnimWorkload& w = workload();
  const anim::Clip* walk_clip = &w.walk;
  const anim::Clip* idle_clip = &w.idle;
  std::vector<anim::JointTransform> walk = std::vector<anim::JointTransform>(kJoints);
  std::vector<anim::JointTransform> idle = std::vector<anim::JointTransform>(kJoints);
  std::vector<anim::JointTransform> blended = std::vector<anim::JointTransform>(kJoints);
  std::vector<glm::mat4> model = std::vector<glm::mat4>(kJoints);
  std::vector<glm::mat4> palette = std::vector<glm::mat4>(kJoints);
  anim::SamplingCache walk_cache{bench::kAnimWorkloadJoints};
  anim::SamplingCache idle_cache{bench::kAnimWorkloadJoints};
  float walk_time = 0.0f;
  float idle_time = 0.0f;

  bool sample() {
    return anim::SamplingJob{
               .clip = walk_clip, .time = walk_time, .cache = &walk_cache, .output = walk}
               .run() &&
           anim::SamplingJob{
               .clip = idle_clip, .time = idle_time, .cache = &idle_cache, .output = idle}
               .run();
  }
  bool blend() {
    const anim::BlendLayer layers[] = {{.pose = walk, .weight = 0.7f},
                                       {.pose = idle, .weight = 0.3f}};
    return anim::BlendingJob{
        .rest_pose = w.skeleton.rest_pose(), .layers = layers, .output = blended}
        .run()
        .ok();
  }
  bool model_and_palette(std::span<const anim::JointTransform> local) {
    // One pass: the palette product is taken while the model matrix is in registers.
    return anim::LocalToModelJob{
        .skeleton = &w.skeleton, .local = local, .model = model, .palette = palette}
        .run()
        .ok();
  }
  // Both clips one 60 Hz frame on, wrapping like a looping player.
  void advance() {
    walk_time += 1.0f / 60.0f;
    if (walk_time >= w.walk.duration()) walk_time -= w.walk.duration();
    idle_time += 1.0f / 60.0f;
    if (idle_time >= w.idle.duration()) idle_time -= w.idle.duration();
  }
};

// The float clips, or the shipped ones (optimised and compressed).
OzzCharacter character_with(bool shipped) {
  OzzCharacter c;
  if (shipped) {
    c.walk_clip = &shipped_clips().walk;
    c.idle_clip = &shipped_clips().idle;
  }
  return c;
}

void ozz_pose(benchmark::State& state, bool shipped) {
  OzzCharacter c = character_with(shipped);
  for (auto _ : state) {
    c.advance();
    if (!(c.sample() && c.blend() && c.model_and_palette(c.blended)))
      state.SkipWithError("animation job failed");
    benchmark::DoNotOptimize(c.palette.data());
    benchmark::ClobberMemory();
  }
  state.counters["characters"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
void ozz_pose_float(benchmark::State& state) {
  ozz_pose(state, false);
}
void ozz_pose_shipped(benchmark::State& state) {
  ozz_pose(state, true);
}
BENCHMARK(ozz_pose_float)->Name("ozz_workload/pose");
BENCHMARK(ozz_pose_shipped)->Name("ozz_workload/pose_shipped_clips");

void ozz_sample_walk(benchmark::State& state, bool shipped) {
  OzzCharacter c = character_with(shipped);
  for (auto _ : state) {
    c.advance();
    if (!anim::SamplingJob{
            .clip = c.walk_clip, .time = c.walk_time, .cache = &c.walk_cache, .output = c.walk}
             .run())
      state.SkipWithError("SamplingJob failed");
    benchmark::DoNotOptimize(c.walk.data());
    benchmark::ClobberMemory();
  }
  state.counters["clip_bytes"] = static_cast<double>(c.walk_clip->memory_bytes());
}
void ozz_sample_walk_float(benchmark::State& state) {
  ozz_sample_walk(state, false);
}
void ozz_sample_walk_shipped(benchmark::State& state) {
  ozz_sample_walk(state, true);
}
BENCHMARK(ozz_sample_walk_float)->Name("ozz_workload/sample_walk");
BENCHMARK(ozz_sample_walk_shipped)->Name("ozz_workload/sample_walk_shipped_clips");

// The poses of one frame (walk 0.3 s, idle 1.1 s), blended over and over.
void ozz_blend(benchmark::State& state) {
  OzzCharacter c;
  c.walk_time = 0.3f;
  c.idle_time = 1.1f;
  if (!c.sample()) std::abort();
  for (auto _ : state) {
    if (!c.blend()) state.SkipWithError("BlendingJob failed");
    benchmark::DoNotOptimize(c.blended.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(ozz_blend)->Name("ozz_workload/blend");

void ozz_local_to_model_palette(benchmark::State& state) {
  OzzCharacter c;
  c.walk_time = 0.3f;
  c.idle_time = 1.1f;
  if (!c.sample() || !c.blend()) std::abort();
  for (auto _ : state) {
    if (!c.model_and_palette(c.blended)) state.SkipWithError("LocalToModelJob failed");
    benchmark::DoNotOptimize(c.palette.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(ozz_local_to_model_palette)->Name("ozz_workload/local_to_model_palette");

void ozz_skinning(benchmark::State& state) {
  OzzCharacter c;
  c.walk_time = 0.3f;
  if (!c.sample() || !c.model_and_palette(c.walk)) std::abort();
  skin_repeatedly(state, c.w.mesh, c.palette);
}
BENCHMARK(ozz_skinning)->Name("ozz_workload/skinning");

}  // namespace

BENCHMARK_MAIN();
