// Animation in the world: skeletons, clips, meshes and masks live in the Animation resource
// (added between frames, referred to by ids); entities play them through an AnimationPlayer and
// skin a mesh through a SkinnedMeshInstance. Three stages run them every frame.
//
// Usage:
//
//   auto& anim = engine.add_plugin<spindle::anim::AnimationPlugin>().animation();
//   spindle::anim::SkeletonId sk = anim.add_skeleton(std::move(c.skeleton)).value();
//   spindle::anim::ClipId walk = anim.add_clip(std::move(c.walk), sk).value();
//   spindle::anim::MeshId mesh = anim.add_mesh(std::move(c.mesh), sk).value();
//   spindle::core::Entity e = world.create();
//   spindle::anim::AnimationPlayer player{.skeleton = sk};
//   player.layers[0] = {.clip = walk, .speed = 1.0f, .weight = 1.0f};
//   world.add<spindle::anim::AnimationPlayer>(e, player);
//   world.add<spindle::anim::SkinnedMeshInstance>(e, spindle::anim::SkinnedMeshInstance{mesh});
//   world.add<spindle::anim::SkinnedBounds>(e);              // optional: bounds as a component
//   spindle::anim::FloatTrackId left = anim.add_float_track(std::move(contact), walk).value();
//   world.add<spindle::anim::AnimationTracks>(e, {.tracks = {left}});  // optional: events
//   ...
//   for (const spindle::anim::AnimationEvent& ev :                    // in the next step
//        world.read_events<spindle::anim::AnimationEvent>()) footstep(ev.entity, ev.time);
//   spindle::anim::CharacterView v = anim.view(e);           // after the frame: what to draw
//   draw(v.positions, v.normals, world.get<WorldTransform>(e));
//   // In a stage declaring read<SkinTargets>() (after anim_pose, beside anim_skin): where the
//   // vertices will be, for a draw that its renderer reads after anim_skin (read<Animation>()).
//   spindle::anim::SkinTargets where = anim.skin_targets(e);
//
// Stages (kAnimationPhase):
//   anim_advance  simulation, per entity: each layer's time += dt * speed, wrapped into
//                 [0, duration) when looping (any speed sign), clamped to [0, duration] otherwise;
//                 a non-finite time restarts at 0. First, for an entity with AnimationTracks,
//                 each listed float track's threshold crossings over that step's range
//                 [time, time + dt * speed) of every layer playing the track's clip become
//                 AnimationEvents (TrackTriggeringJob; read in the next step, events.h).
//   anim_pose     presentation, parallel over characters: sample every layer (one cursor cache
//                 per layer), blend (normal layers by weight and mask, then additive layers),
//                 local to model, palette (model x inverse bind).
//   anim_skin     presentation, after anim_pose, parallel over batches of skin_batch_vertices
//                 vertices from all characters: positions and normals, and each batch's bounds;
//                 then each character's bounds (SkinnedBounds, if the entity has one).
// anim_pose first does the serial bookkeeping: a character appears when an entity has an
// AnimationPlayer, and its buffers are allocated then (and when its skeleton or mesh changes);
// one that lost its player or died is dropped. Steady frames allocate nothing. Access: anim_pose
// writes Animation, SkinnedBounds and SkinTargets (the buffers); anim_skin writes Animation and
// SkinnedBounds only, so a stage reading SkinTargets may run beside it.
//
// Bad references never crash a frame: a player whose skeleton id is unknown, or a mesh made for
// another skeleton, makes the character `rejected` (logged once, counted, retried when its
// components change or assets are added); a layer whose clip or mask is unknown or made for
// another skeleton, or whose time is not finite or weight not in [0, kMaxBlendWeight], is skipped
// (logged once per character). Assets are immutable once added and live as long as the
// resource; add them between frames (main thread), never while a frame runs.
//
// Determinism: every character is computed from its own player and assets only, and bounds are
// min/max reductions, so results are bit-identical in every job mode and worker count. Events go
// through the stage's command buffers, so they arrive in the order anim_advance visits entities
// (the players' storage order), and within an entity in playback time order (ties: layer, then
// track list order), in every mode.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <glm/glm.hpp>

#include <spindle/anim/clip.h>
#include <spindle/anim/float_track.h>
#include <spindle/anim/skeleton.h>
#include <spindle/anim/skinned_mesh.h>
#include <spindle/base/result.h>
#include <spindle/ecs/world.h>
#include <spindle/engine/engine.h>

namespace spindle::anim {

// Ids of assets in the Animation resource; None (0) refers to nothing.
enum class SkeletonId : std::uint32_t { None = 0 };
enum class ClipId : std::uint32_t { None = 0 };
enum class MeshId : std::uint32_t { None = 0 };
enum class MaskId : std::uint32_t { None = 0 };
enum class FloatTrackId : std::uint32_t { None = 0 };

inline constexpr int kMaxPlayerLayers = 4;
inline constexpr int kMaxEntityTracks = 4;
// Events one entity can raise in one step; more are dropped and counted
// (AnimationStats::event_overflows).
inline constexpr int kMaxEntityEventsPerStep = 32;

// One clip playing on a character. A layer with clip None is off. (No padding: the world's
// state hash reads the bytes.)
struct AnimationLayer {
  ClipId clip = ClipId::None;
  float time = 0.0f;           // seconds into the clip
  float speed = 1.0f;          // clip seconds per game second; negative plays backwards
  float weight = 1.0f;         // normal layers: blend weight; additive layers: strength
  MaskId mask = MaskId::None;  // per-joint weights; None: every joint 1
  bool loop = true;            // wrap the time; false: hold the end
  bool additive = false;       // the clip holds deltas applied after the normal blend
  std::uint8_t reserved[2]{};
};

struct AnimationPlayer {
  SkeletonId skeleton = SkeletonId::None;
  std::array<AnimationLayer, kMaxPlayerLayers> layers{};
};

// The float tracks whose crossings become AnimationEvents for this entity; None entries are
// unused. A track fires for every layer of the entity's player that plays the track's clip.
struct AnimationTracks {
  std::array<FloatTrackId, kMaxEntityTracks> tracks{};
};

// A float track crossed its threshold on an entity during a simulation step.
struct AnimationEvent {
  core::Entity entity{};
  FloatTrackId track = FloatTrackId::None;
  float time = 0.0f;       // clip time of the crossing
  std::uint8_t layer = 0;  // the player's layer that played it
  bool rising = false;     // in the playback direction (TrackEdge::rising)
};

// The mesh the character's palette skins (made for the player's skeleton).
struct SkinnedMeshInstance {
  MeshId mesh = MeshId::None;
};

// Level of detail in time: the character is posed and skinned every `every` frames (0 and 1:
// every frame), in the frames where (frame + entity index) % every == 0, so that a crowd's far
// characters share the work out evenly over the frames. In between, its view (pose, skinned
// vertices, bounds) stays what it last was; its layers still advance every step, so it is never
// behind when it updates. A character posed for the first time, or whose skeleton or mesh changed,
// updates at once. Deterministic: the frame count is the plugin's own.
struct AnimationLod {
  std::uint32_t every = 1;
};

// Model-space bounds of the skinned vertices, written by anim_skin; empty() (min > max) while the
// character has no skinned mesh, is rejected or has lost its player.
struct SkinnedBounds {
  glm::vec3 min{0.0f};
  glm::vec3 max{0.0f};

  static SkinnedBounds empty();
  bool is_empty() const { return min.x > max.x; }
};

struct AnimationConfig {
  // Vertices per skinning job chunk item, [64, 1 << 20]: small enough to balance, large enough
  // that a batch's fixed cost (palette lookups warm, bounds) stays small.
  std::uint32_t skin_batch_vertices = 1024;
  bool skin_normals = true;
  // Skin with streaming stores (SkinningJob::streaming_stores) once a frame's skinned output
  // (24 bytes a vertex with normals) exceeds this many bytes, i.e. no longer fits in cache.
  std::uint64_t streaming_above_bytes = 8u << 20;
  // BlendingJob::threshold.
  float blend_threshold = 0.1f;
};

// What the stages produced for one character: valid until the next frame's anim_pose, even if
// the entity is destroyed in between (the character is dropped by that anim_pose).
struct CharacterView {
  bool valid = false;  // false: no such character, or rejected
  std::span<const JointTransform> local{};
  std::span<const glm::mat4> model{};
  std::span<const glm::mat4> palette{};
  ConstStream3 positions{};  // empty without a mesh
  ConstStream3 normals{};    // empty without a mesh or with skin_normals off
  SkinnedBounds bounds{};
};

// Where a character's skinned vertices go: the buffers, fixed by anim_pose (which allocates them)
// until the next frame's anim_pose, before anim_skin has written what is in them. A stage that
// only needs the addresses (a draw pointing at them) declares read<SkinTargets>() and runs beside
// anim_skin; whatever reads the vertices themselves declares read<Animation>() and runs after it.
struct SkinTargets {
  bool valid = false;        // false: no such character, or rejected
  ConstStream3 positions{};  // empty without a mesh
  ConstStream3 normals{};    // empty without a mesh or with skin_normals off
};

struct AnimationStats {
  std::uint32_t characters = 0;       // animated characters (not rejected)
  std::uint32_t updated = 0;          // of which posed and skinned last frame (AnimationLod)
  std::uint32_t skinned = 0;          // of which with a mesh
  std::uint64_t vertices = 0;         // skinned last frame
  std::uint32_t batches = 0;          // skinning batches last frame
  std::uint32_t rejected = 0;         // characters currently rejected
  std::uint64_t bad_layers = 0;       // layers skipped (unknown clip/mask, other skeleton), total
  std::uint64_t rebuilds = 0;         // times a character's buffers were (re)allocated, total
  std::uint64_t events = 0;           // AnimationEvents raised, total
  std::uint64_t event_overflows = 0;  // entity steps with more than kMaxEntityEventsPerStep
};

class Animation {
 public:
  // An invalid config is logged and replaced by the defaults.
  explicit Animation(AnimationConfig config, std::uint32_t entity_capacity);
  ~Animation();
  Animation(const Animation&) = delete;
  Animation& operator=(const Animation&) = delete;

  static core::Status validate(const AnimationConfig& config);

  // Assets. Errors name the problem; nothing is added on error.
  core::Result<SkeletonId> add_skeleton(Skeleton skeleton);
  // The clip must animate exactly the skeleton's joints.
  core::Result<ClipId> add_clip(Clip clip, SkeletonId skeleton);
  // The mesh must pass check_mesh() for the skeleton.
  core::Result<MeshId> add_mesh(SkinnedMesh mesh, SkeletonId skeleton);
  // One weight per joint of the skeleton, each in [0, kMaxBlendWeight].
  core::Result<MaskId> add_mask(std::vector<float> joint_weights, SkeletonId skeleton);
  // A float track for the clip (same duration); `threshold` (finite) is where its edges are.
  core::Result<FloatTrackId> add_float_track(FloatTrack track, ClipId clip, float threshold = 0.5f);

  const Skeleton* skeleton(SkeletonId id) const;
  const Clip* clip(ClipId id) const;
  // The skeleton a clip / mesh / mask was added for (None for an unknown id).
  SkeletonId clip_skeleton(ClipId id) const;
  const SkinnedMesh* mesh(MeshId id) const;
  SkeletonId mesh_skeleton(MeshId id) const;
  const FloatTrack* float_track(FloatTrackId id) const;
  // The clip a float track was added for (None for an unknown id).
  ClipId float_track_clip(FloatTrackId id) const;

  CharacterView view(core::Entity entity) const;
  // The buffers view() will show, without their contents or bounds: safe to call while anim_skin
  // runs (a stage declaring read<SkinTargets>()).
  SkinTargets skin_targets(core::Entity entity) const;
  const AnimationStats& stats() const { return stats_; }
  const AnimationConfig& config() const { return config_; }

  // Moves the player's layer times by dt seconds (anim_advance runs it for every player).
  void advance(float dt, AnimationPlayer& player) const;
  // Records the AnimationEvents of advancing the player by dt (anim_advance runs it first, for
  // every player with AnimationTracks). Unknown track ids and clips are skipped.
  void trigger(float dt, core::Entity entity, const AnimationPlayer& player,
               const AnimationTracks& tracks, core::CommandBuffer& commands) const;
  // The other stages' work (AnimationPlugin registers them).
  void pose(core::StageContext& ctx);
  void skin(core::StageContext& ctx);

 private:
  struct Impl;
  AnimationConfig config_;
  AnimationStats stats_;
  std::atomic<std::uint64_t> bad_layers_{0};
  mutable std::atomic<std::uint64_t> events_{0};
  mutable std::atomic<std::uint64_t> event_overflows_{0};
  std::uint64_t assets_added_ = 0;  // rejected characters are retried when this changes
  std::unique_ptr<Impl> impl_;
};

// Where the animation stages run: after gameplay, physics and transforms (400), before render
// preparation.
inline constexpr core::Phase kAnimationPhase{"animation", 500};

// Registers the components (animation_player, skinned_mesh, skinned_bounds, animation_tracks,
// animation_lod),
// the AnimationEvent queue, the Animation resource and the three stages.
class AnimationPlugin final : public core::Plugin {
 public:
  explicit AnimationPlugin(AnimationConfig config = {}) : config_(config) {}
  const char* name() const override { return "animation"; }
  void build(core::Engine& engine) override;
  Animation& animation() { return *animation_; }

 private:
  AnimationConfig config_;
  Animation* animation_ = nullptr;
};

}  // namespace spindle::anim
