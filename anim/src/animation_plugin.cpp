#include <spindle/anim/animation_plugin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include <spindle/anim/blending_job.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skinning_job.h>
#include <spindle/base/log.h>

namespace spindle::anim {

namespace {

using core::Entity;
using core::Status;
using std::to_string;

constexpr std::uint32_t kNone = ~0u;

template <class T>
struct Asset {
  T value;
  SkeletonId skeleton = SkeletonId::None;
};

// Id n refers to element n - 1.
template <class T, class Id>
const Asset<T>* find_asset(const std::vector<std::unique_ptr<Asset<T>>>& assets, Id id) {
  const auto n = static_cast<std::uint32_t>(id);
  return n == 0 || n > assets.size() ? nullptr : assets[n - 1].get();
}

template <class Id, class T>
Id push(std::vector<std::unique_ptr<Asset<T>>>& assets, T value, SkeletonId skeleton) {
  assets.push_back(std::make_unique<Asset<T>>(Asset<T>{std::move(value), skeleton}));
  return static_cast<Id>(assets.size());
}

}  // namespace

// One animated entity (a character): its buffers, allocated when it appears or its skeleton or mesh
// changes.
struct Animated {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  SkeletonId skeleton_id = SkeletonId::None;
  MeshId mesh_id = MeshId::None;
  const Skeleton* skeleton = nullptr;
  const SkinnedMesh* mesh = nullptr;
  bool rejected = false;
  bool layer_reported = false;  // a skipped layer was logged since the last configure
  bool fresh = true;            // configured since it was last posed: update whatever its LOD
  bool due = true;              // posed and skinned this frame (AnimationLod)
  // The skinned streams next to what skin_targets() checks before it takes them: a draw's
  // submission reads these few lines of every character while anim_skin streams vertices.
  std::vector<float> px, py, pz, nx, ny, nz;
  std::array<SamplingCache, kMaxPlayerLayers> caches;
  std::vector<JointTransform> layer_poses;  // kMaxPlayerLayers x joints
  std::vector<JointTransform> local;
  std::vector<glm::mat4> model;
  std::vector<glm::mat4> palette;
  SkinnedBounds bounds{};
  std::uint32_t first_batch = 0;
  std::uint32_t batch_count = 0;
  // anim_skin: its batches still to skin this frame (set by anim_pose); the batch that ends last
  // merges their bounds.
  std::atomic<std::uint32_t> batches_left{0};
};

// A float track in the Animation resource: the clip it belongs to and where its edges are.
struct TrackAsset {
  FloatTrack track;
  ClipId clip = ClipId::None;
  float threshold = 0.5f;
};

struct SkinBatch {
  Animated* character = nullptr;
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
  SkinnedBounds bounds{};
};

struct Animation::Impl {
  std::vector<std::unique_ptr<Asset<Skeleton>>> skeletons;
  std::vector<std::unique_ptr<Asset<Clip>>> clips;
  std::vector<std::unique_ptr<Asset<SkinnedMesh>>> meshes;
  std::vector<std::unique_ptr<Asset<std::vector<float>>>> masks;
  std::vector<std::unique_ptr<Asset<TrackAsset>>> tracks;

  std::vector<std::uint32_t> slot_of;  // entity index -> position in `characters`, or kNone
  std::vector<std::unique_ptr<Animated>> characters;
  std::vector<Animated*> posed;  // characters not rejected, in `characters` order
  std::vector<SkinBatch> batches;
  std::uint64_t assets_seen = 0;  // Animation::assets_added_ at the last bookkeeping
  std::uint64_t frame = 0;        // pose() calls: AnimationLod's clock
};

SkinnedBounds SkinnedBounds::empty() {
  const float inf = std::numeric_limits<float>::infinity();
  return {glm::vec3(inf), glm::vec3(-inf)};
}

Animation::Animation(AnimationConfig config, std::uint32_t entity_capacity)
    : config_(config), impl_(std::make_unique<Impl>()) {
  if (const Status ok = validate(config); !ok) {
    SPINDLE_LOG_ERROR(Anim, "%s; using the defaults", ok.c_str());
    config_ = AnimationConfig{};
  }
  impl_->slot_of.assign(entity_capacity, kNone);
}

Animation::~Animation() = default;

Status Animation::validate(const AnimationConfig& c) {
  if (c.skin_batch_vertices < 64 || c.skin_batch_vertices > (1u << 20))
    return Status::error("AnimationConfig: skin_batch_vertices " +
                         to_string(c.skin_batch_vertices) + " outside [64, 1048576]");
  if (!std::isfinite(c.blend_threshold) || c.blend_threshold <= 0.0f)
    return Status::error("AnimationConfig: blend_threshold must be finite and > 0");
  return {};
}

core::Result<SkeletonId> Animation::add_skeleton(Skeleton skeleton) {
  if (skeleton.joint_count() == 0) return Status::error("add_skeleton: empty skeleton");
  ++assets_added_;
  return push<SkeletonId>(impl_->skeletons, std::move(skeleton), SkeletonId::None);
}

core::Result<ClipId> Animation::add_clip(Clip clip, SkeletonId skeleton) {
  const Skeleton* s = this->skeleton(skeleton);
  if (s == nullptr)
    return Status::error("add_clip '" + clip.name() + "': unknown skeleton id " +
                         to_string(static_cast<std::uint32_t>(skeleton)));
  if (Status ok = clip.check_skeleton(*s); !ok) return Status::error("add_clip: " + ok.message());
  ++assets_added_;
  return push<ClipId>(impl_->clips, std::move(clip), skeleton);
}

core::Result<MeshId> Animation::add_mesh(SkinnedMesh mesh, SkeletonId skeleton) {
  const Skeleton* s = this->skeleton(skeleton);
  if (s == nullptr)
    return Status::error("add_mesh: unknown skeleton id " +
                         to_string(static_cast<std::uint32_t>(skeleton)));
  if (Status ok = check_mesh(mesh, s->joint_count()); !ok)
    return Status::error("add_mesh: " + ok.message());
  ++assets_added_;
  return push<MeshId>(impl_->meshes, std::move(mesh), skeleton);
}

core::Result<MaskId> Animation::add_mask(std::vector<float> joint_weights, SkeletonId skeleton) {
  const Skeleton* s = this->skeleton(skeleton);
  if (s == nullptr)
    return Status::error("add_mask: unknown skeleton id " +
                         to_string(static_cast<std::uint32_t>(skeleton)));
  if (joint_weights.size() != static_cast<std::size_t>(s->joint_count()))
    return Status::error("add_mask: " + to_string(joint_weights.size()) + " weights for " +
                         to_string(s->joint_count()) + " joints");
  for (std::size_t j = 0; j < joint_weights.size(); ++j)
    if (!(joint_weights[j] >= 0.0f && joint_weights[j] <= kMaxBlendWeight))
      return Status::error("add_mask: joint " + to_string(j) + ": weight must be in [0, 1e6]");
  ++assets_added_;
  return push<MaskId>(impl_->masks, std::move(joint_weights), skeleton);
}

core::Result<FloatTrackId> Animation::add_float_track(FloatTrack track, ClipId clip,
                                                      float threshold) {
  const Clip* c = this->clip(clip);
  if (c == nullptr)
    return Status::error("add_float_track '" + track.name() + "': unknown clip id " +
                         to_string(static_cast<std::uint32_t>(clip)));
  if (track.keys().empty())
    return Status::error("add_float_track: a default-constructed track (use FloatTrack::create)");
  if (track.duration() != c->duration())
    return Status::error("add_float_track '" + track.name() + "': duration " +
                         to_string(track.duration()) + " differs from clip '" + c->name() + "' (" +
                         to_string(c->duration()) + ")");
  if (!std::isfinite(threshold))
    return Status::error("add_float_track '" + track.name() + "': threshold is not finite");
  return push<FloatTrackId>(impl_->tracks, TrackAsset{std::move(track), clip, threshold},
                            clip_skeleton(clip));
}

const FloatTrack* Animation::float_track(FloatTrackId id) const {
  const auto* a = find_asset(impl_->tracks, id);
  return a != nullptr ? &a->value.track : nullptr;
}

ClipId Animation::float_track_clip(FloatTrackId id) const {
  const auto* a = find_asset(impl_->tracks, id);
  return a != nullptr ? a->value.clip : ClipId::None;
}

const Skeleton* Animation::skeleton(SkeletonId id) const {
  const auto* a = find_asset(impl_->skeletons, id);
  return a ? &a->value : nullptr;
}
const Clip* Animation::clip(ClipId id) const {
  const auto* a = find_asset(impl_->clips, id);
  return a ? &a->value : nullptr;
}
SkeletonId Animation::clip_skeleton(ClipId id) const {
  const auto* a = find_asset(impl_->clips, id);
  return a ? a->skeleton : SkeletonId::None;
}
const SkinnedMesh* Animation::mesh(MeshId id) const {
  const auto* a = find_asset(impl_->meshes, id);
  return a ? &a->value : nullptr;
}
SkeletonId Animation::mesh_skeleton(MeshId id) const {
  const auto* a = find_asset(impl_->meshes, id);
  return a ? a->skeleton : SkeletonId::None;
}

// The entity's character, or null (none, another generation, or rejected): fields anim_pose's
// bookkeeping writes only, so this is safe beside anim_skin.
static const Animated* find_character(const std::vector<std::uint32_t>& slot_of,
                                      const std::vector<std::unique_ptr<Animated>>& characters,
                                      Entity entity) {
  if (entity.index >= slot_of.size() || slot_of[entity.index] == kNone) return nullptr;
  const Animated* c = characters[slot_of[entity.index]].get();
  return c->generation == entity.generation && !c->rejected ? c : nullptr;
}

// A found character's skinned streams: only what anim_pose's bookkeeping writes (anim_skin may be
// writing the rest).
static SkinTargets targets_of(const Animated& c, bool normals) {
  SkinTargets t{.valid = true};
  if (c.mesh != nullptr) {
    t.positions = {c.px, c.py, c.pz};
    if (normals) t.normals = {c.nx, c.ny, c.nz};
  }
  return t;
}

CharacterView Animation::view(Entity entity) const {
  const Animated* c = find_character(impl_->slot_of, impl_->characters, entity);
  if (c == nullptr) return {};
  const SkinTargets t = targets_of(*c, config_.skin_normals);
  return {.valid = true,
          .local = c->local,
          .model = c->model,
          .palette = c->palette,
          .positions = t.positions,
          .normals = t.normals,
          .bounds = c->mesh != nullptr ? c->bounds : SkinnedBounds{}};
}

SkinTargets Animation::skin_targets(Entity entity) const {
  const Animated* c = find_character(impl_->slot_of, impl_->characters, entity);
  return c != nullptr ? targets_of(*c, config_.skin_normals) : SkinTargets{};
}

void Animation::advance(float dt, AnimationPlayer& player) const {
  for (AnimationLayer& layer : player.layers) {
    const Clip* c = clip(layer.clip);
    if (c == nullptr) continue;
    const float d = c->duration();
    float t = layer.time + dt * layer.speed;
    if (!std::isfinite(t)) t = 0.0f;
    if (layer.loop) {
      t = std::fmod(t, d);
      if (t < 0.0f) t += d;
      if (t >= d) t = 0.0f;  // -tiny + d rounds to d
    } else {
      t = std::clamp(t, 0.0f, d);
    }
    layer.time = t;
  }
}

void Animation::trigger(float dt, Entity entity, const AnimationPlayer& player,
                        const AnimationTracks& tracks, core::CommandBuffer& commands) const {
  // The entity's events, each with how far into the step's playback it lies (the sort key).
  struct Pending {
    float progress = 0.0f;
    AnimationEvent event{};
  };
  std::array<Pending, kMaxEntityEventsPerStep> pending{};
  std::array<TrackEdge, kMaxEntityEventsPerStep> edges{};
  std::size_t n = 0;
  bool overflowed = false;
  for (std::size_t k = 0; k < player.layers.size(); ++k) {
    const AnimationLayer& layer = player.layers[k];
    const Clip* c = clip(layer.clip);
    const float to = layer.time + dt * layer.speed;
    if (c == nullptr || !std::isfinite(layer.time) || !std::isfinite(to)) continue;
    const float duration = c->duration();
    for (const FloatTrackId id : tracks.tracks) {
      const auto* asset = find_asset(impl_->tracks, id);
      if (asset == nullptr || asset->value.clip != layer.clip) continue;
      std::size_t count = 0;
      bool full = false;
      const TrackTriggeringJob job{.track = &asset->value.track,
                                   .from = layer.time,
                                   .to = to,
                                   .loop = layer.loop,
                                   .threshold = asset->value.threshold,
                                   .edges = std::span(edges).first(pending.size() - n),
                                   .count = &count,
                                   .overflowed = &full};
      if (!job.run()) continue;  // a step playing over 1024 loops: nothing sensible to report
      overflowed = overflowed || full;
      for (std::size_t i = 0; i < count; ++i) {
        const TrackEdge& e = edges[i];
        float progress = to >= layer.time ? e.time - layer.time : layer.time - e.time;
        if (layer.loop && progress < 0.0f) progress += duration;
        pending[n++] = {std::abs(progress),
                        {entity, id, e.time, static_cast<std::uint8_t>(k), e.rising}};
      }
    }
  }
  // Insertion sort: stable (ties keep layer, then track order) and allocation-free.
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = i; j > 0 && pending[j].progress < pending[j - 1].progress; --j)
      std::swap(pending[j], pending[j - 1]);
  for (std::size_t i = 0; i < n; ++i) commands.emit(pending[i].event);
  events_.fetch_add(n, std::memory_order_relaxed);
  if (overflowed && event_overflows_.fetch_add(1, std::memory_order_relaxed) == 0)
    SPINDLE_LOG_ERROR(Anim,
                      "animation: entity %u raised more than %d events in one step; the rest are "
                      "dropped (counted in AnimationStats::event_overflows, logged once)",
                      entity.index, kMaxEntityEventsPerStep);
}

namespace {

// Points the character at its assets and sizes its buffers; false (with the reason logged) when
// the references are bad.
bool configure(Animated& c, const Animation& anim, SkeletonId skeleton, MeshId mesh) {
  c.skeleton_id = skeleton;
  c.mesh_id = mesh;
  c.layer_reported = false;
  c.fresh = true;
  c.bounds = SkinnedBounds::empty();
  c.skeleton = anim.skeleton(skeleton);
  c.mesh = mesh == MeshId::None ? nullptr : anim.mesh(mesh);
  std::string why;
  if (c.skeleton == nullptr)
    why = "unknown skeleton id " + to_string(static_cast<std::uint32_t>(skeleton));
  else if (mesh != MeshId::None && c.mesh == nullptr)
    why = "unknown mesh id " + to_string(static_cast<std::uint32_t>(mesh));
  else if (c.mesh != nullptr && anim.mesh_skeleton(mesh) != skeleton)
    why = "mesh " + to_string(static_cast<std::uint32_t>(mesh)) + " was made for another skeleton";
  c.rejected = !why.empty();
  if (c.rejected) {
    SPINDLE_LOG_ERROR(Anim, "animation: entity %u rejected: %s", c.index, why.c_str());
    return false;
  }
  const std::size_t joints = static_cast<std::size_t>(c.skeleton->joint_count());
  for (SamplingCache& cache : c.caches) cache.resize(static_cast<int>(joints));
  c.layer_poses.assign(joints * kMaxPlayerLayers, JointTransform{});
  c.local.assign(joints, JointTransform{});
  c.model.assign(joints, glm::mat4(1.0f));
  c.palette.assign(joints, glm::mat4(1.0f));
  const std::size_t n = c.mesh != nullptr ? c.mesh->vertex_count() : 0;
  const std::size_t nn = n > 0 && anim.config().skin_normals && !c.mesh->nx.empty() ? n : 0;
  for (auto* v : {&c.px, &c.py, &c.pz}) v->assign(n, 0.0f);
  for (auto* v : {&c.nx, &c.ny, &c.nz}) v->assign(nn, 0.0f);
  return true;
}

}  // namespace

void Animation::pose(core::StageContext& ctx) {
  core::World& world = ctx.world();
  Impl& m = *impl_;
  const auto* players = world.storage<AnimationPlayer>();
  const auto* instances = world.storage<SkinnedMeshInstance>();
  auto* bounds = world.storage<SkinnedBounds>();
  // An entity that keeps its SkinnedBounds but has nothing skinned gets empty bounds.
  const auto clear_bounds = [&](std::uint32_t index) {
    if (SkinnedBounds* b = bounds != nullptr ? bounds->get(index) : nullptr)
      *b = SkinnedBounds::empty();
  };

  // Bookkeeping: drop characters whose entity died or lost its player, add new ones, reconfigure
  // those whose skeleton or mesh changed (and rejected ones when assets were added). Only changes
  // allocate.
  const bool assets_added = m.assets_seen != assets_added_;
  m.assets_seen = assets_added_;
  // Most frames nothing changed: the same characters (as many as players, each alive with its
  // player, skeleton and mesh) and no rejected one to retry. Checked over the characters in
  // parallel; only a change pays for the serial bookkeeping below.
  bool same = players->size() == m.characters.size();
  if (same && !m.characters.empty()) {
    std::atomic<bool> differs{false};
    ctx.parallel_for(static_cast<std::uint32_t>(m.characters.size()), [&](std::uint32_t b,
                                                                          std::uint32_t e) {
      for (std::uint32_t i = b; i < e && !differs.load(std::memory_order_relaxed); ++i) {
        const Animated& c = *m.characters[i];
        const AnimationPlayer* player = players->get(c.index);
        const SkinnedMeshInstance* inst = instances != nullptr ? instances->get(c.index) : nullptr;
        const MeshId mesh = inst != nullptr ? inst->mesh : MeshId::None;
        if (!world.alive(Entity{c.index, c.generation}) || player == nullptr ||
            player->skeleton != c.skeleton_id || mesh != c.mesh_id || (c.rejected && assets_added))
          differs.store(true, std::memory_order_relaxed);
      }
    });
    same = !differs.load();
  }
  bool changed = false;
  if (!same) {
    std::size_t kept = 0;
    for (std::unique_ptr<Animated>& c : m.characters) {
      const bool alive = world.alive(Entity{c->index, c->generation});
      if (!alive || !players->has(c->index)) {
        if (alive) clear_bounds(c->index);
        m.slot_of[c->index] = kNone;
        c.reset();
        changed = true;
      } else {
        m.characters[kept++] = std::move(c);
      }
    }
    m.characters.resize(kept);
    if (changed)
      for (std::size_t i = 0; i < kept; ++i)
        m.slot_of[m.characters[i]->index] = static_cast<std::uint32_t>(i);
    const std::uint32_t* generations = world.entity_generations();
    for (std::uint32_t index : players->entities()) {
      const SkeletonId skeleton = players->get(index)->skeleton;
      const SkinnedMeshInstance* inst = instances != nullptr ? instances->get(index) : nullptr;
      const MeshId mesh = inst != nullptr ? inst->mesh : MeshId::None;
      Animated* c = nullptr;
      if (m.slot_of[index] == kNone) {
        m.slot_of[index] = static_cast<std::uint32_t>(m.characters.size());
        m.characters.push_back(std::make_unique<Animated>());
        c = m.characters.back().get();
        c->index = index;
        c->generation = generations[index];
      } else {
        c = m.characters[m.slot_of[index]].get();
        if (c->skeleton_id == skeleton && c->mesh_id == mesh && !(c->rejected && assets_added))
          continue;
      }
      if (!configure(*c, *this, skeleton, mesh) || c->mesh == nullptr) clear_bounds(index);
      ++stats_.rebuilds;
      changed = true;
    }
  }
  if (changed) {
    m.posed.clear();
    m.batches.clear();
    std::uint32_t rejected = 0;
    for (const std::unique_ptr<Animated>& c : m.characters) {
      if (c->rejected) {
        ++rejected;
        continue;
      }
      m.posed.push_back(c.get());
      const std::uint32_t n = c->mesh != nullptr ? static_cast<std::uint32_t>(c->px.size()) : 0;
      c->first_batch = static_cast<std::uint32_t>(m.batches.size());
      for (std::uint32_t b = 0; b < n; b += config_.skin_batch_vertices)
        m.batches.push_back({c.get(), b, std::min(config_.skin_batch_vertices, n - b)});
      c->batch_count = static_cast<std::uint32_t>(m.batches.size()) - c->first_batch;
    }
    stats_.rejected = rejected;
    stats_.characters = static_cast<std::uint32_t>(m.posed.size());
    stats_.batches = static_cast<std::uint32_t>(m.batches.size());
    stats_.skinned = 0;
    stats_.vertices = 0;
    for (const Animated* c : m.posed) {
      stats_.skinned += c->mesh != nullptr;
      stats_.vertices += c->px.size();
    }
  }

  // Who updates this frame (AnimationLod), decided as each character comes up.
  const auto* lods = world.storage<AnimationLod>();
  const std::uint64_t frame = m.frame++;
  std::atomic<std::uint32_t> updated{0};

  const float threshold = config_.blend_threshold;
  ctx.parallel_for(static_cast<std::uint32_t>(m.posed.size()), [&](std::uint32_t b,
                                                                   std::uint32_t e) {
    std::uint32_t due = 0;
    for (std::uint32_t i = b; i < e; ++i) {
      Animated& c = *m.posed[i];
      const AnimationLod* lod = lods != nullptr ? lods->get(c.index) : nullptr;
      const std::uint32_t every = lod != nullptr ? lod->every : 1;
      c.due = c.fresh || every <= 1 || (frame + c.index) % every == 0;
      c.fresh = false;
      c.batches_left.store(c.due ? c.batch_count : 0, std::memory_order_relaxed);
      due += c.due ? 1u : 0u;
      if (!c.due) continue;
      const AnimationPlayer& player = *players->get(c.index);
      const std::size_t joints = c.local.size();
      std::array<BlendLayer, kMaxPlayerLayers> normal{};
      std::array<BlendLayer, kMaxPlayerLayers> additive{};
      std::size_t normal_count = 0, additive_count = 0;
      for (int k = 0; k < kMaxPlayerLayers; ++k) {
        const AnimationLayer& layer = player.layers[static_cast<std::size_t>(k)];
        if (layer.clip == ClipId::None) continue;
        const auto* clip_asset = find_asset(m.clips, layer.clip);
        const auto* mask_asset =
            layer.mask == MaskId::None ? nullptr : find_asset(m.masks, layer.mask);
        const bool good = clip_asset != nullptr && clip_asset->skeleton == c.skeleton_id &&
                          (layer.mask == MaskId::None ||
                           (mask_asset != nullptr && mask_asset->skeleton == c.skeleton_id)) &&
                          std::isfinite(layer.time) && layer.weight >= 0.0f &&
                          layer.weight <= kMaxBlendWeight;
        if (!good) {
          bad_layers_.fetch_add(1, std::memory_order_relaxed);
          if (!c.layer_reported) {
            c.layer_reported = true;
            SPINDLE_LOG_ERROR(Anim,
                              "animation: entity %u layer %d skipped: unknown clip or mask, one "
                              "made for another skeleton, or a non-finite time or weight",
                              c.index, k);
          }
          continue;
        }
        const std::span<JointTransform> pose =
            std::span(c.layer_poses).subspan(static_cast<std::size_t>(k) * joints, joints);
        SamplingJob sample{.clip = &clip_asset->value,
                           .time = layer.time,
                           .cache = &c.caches[static_cast<std::size_t>(k)],
                           .output = pose};
        [[maybe_unused]] const Status sampled = sample.run();
        SPINDLE_ASSERT(sampled.ok(), "animation: sampling a checked clip cannot fail");
        const BlendLayer blend{.pose = pose,
                               .weight = layer.weight,
                               .joint_weights = mask_asset != nullptr
                                                    ? std::span<const float>(mask_asset->value)
                                                    : std::span<const float>{}};
        if (layer.additive)
          additive[additive_count++] = blend;
        else
          normal[normal_count++] = blend;
      }
      const BlendingJob blend{.rest_pose = c.skeleton->rest_pose(),
                              .layers = std::span(normal).first(normal_count),
                              .additive_layers = std::span(additive).first(additive_count),
                              .threshold = threshold,
                              .output = c.local};
      // Model matrices and the palette in one pass (the product is taken while the model matrix
      // is in registers).
      const LocalToModelJob to_model{
          .skeleton = c.skeleton, .local = c.local, .model = c.model, .palette = c.palette};
      [[maybe_unused]] const bool ok = blend.run() && to_model.run();
      SPINDLE_ASSERT(ok, "animation: the pose jobs cannot fail on checked inputs");
    }
    updated.fetch_add(due, std::memory_order_relaxed);
  });
  stats_.updated = updated.load(std::memory_order_relaxed);
  stats_.bad_layers = bad_layers_.load(std::memory_order_relaxed);
  stats_.events = events_.load(std::memory_order_relaxed);
  stats_.event_overflows = event_overflows_.load(std::memory_order_relaxed);
}

void Animation::skin(core::StageContext& ctx) {
  Impl& m = *impl_;
  const bool normals = config_.skin_normals;
  const bool streaming = stats_.vertices * (normals ? 24u : 12u) > config_.streaming_above_bytes;
  auto* bounds = ctx.world().storage<SkinnedBounds>();
  ctx.parallel_for(static_cast<std::uint32_t>(m.batches.size()), [&](std::uint32_t b,
                                                                     std::uint32_t e) {
    for (std::uint32_t i = b; i < e; ++i) {
      SkinBatch& batch = m.batches[i];
      Animated& c = *batch.character;
      if (!c.due) continue;  // its vertices and bounds stay as they were
      const SkinnedMesh& mesh = *c.mesh;
      // c.nx is empty when normals are off or the mesh has none (configure() sized it).
      const bool with_normals = !c.nx.empty();
      SkinningJob job = SkinningJob{.palette = c.palette,
                                    .joint_indices = mesh.joint_indices,
                                    .joint_weights = mesh.joint_weights,
                                    .in_positions = mesh.positions(),
                                    .in_normals = with_normals ? mesh.normals() : ConstStream3{},
                                    .out_positions = {c.px, c.py, c.pz},
                                    .out_normals = {c.nx, c.ny, c.nz}}
                            .batch(batch.begin, batch.count);
      job.streaming_stores = streaming;
      job.out_min = &batch.bounds.min;
      job.out_max = &batch.bounds.max;
      [[maybe_unused]] const Status skinned = job.run();
      SPINDLE_ASSERT(skinned.ok(), "animation: skinning a checked mesh cannot fail");
      // The character's last batch to end merges its batches' bounds, in batch order (the same
      // bounds whichever thread it is): no serial pass over the characters after the skinning,
      // which on 16 workers was 23 us with one busy before the geometry could start.
      if (c.batches_left.fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      SkinnedBounds total = m.batches[c.first_batch].bounds;
      for (std::uint32_t k = 1; k < c.batch_count; ++k) {
        const SkinnedBounds& more = m.batches[c.first_batch + k].bounds;
        total.min = glm::min(total.min, more.min);
        total.max = glm::max(total.max, more.max);
      }
      c.bounds = total;
      if (SkinnedBounds* out = bounds != nullptr ? bounds->get(c.index) : nullptr) *out = total;
    }
  });
}

void AnimationPlugin::build(core::Engine& engine) {
  if (const Status ok = Animation::validate(config_); !ok) {
    SPINDLE_LOG_ERROR(Anim, "%s", ok.c_str());
    SPINDLE_ASSERT(false, "AnimationPlugin: invalid AnimationConfig (see the log)");
  }
  core::World& world = engine.world();
  world.register_component<AnimationPlayer>("animation_player");
  world.register_component<SkinnedMeshInstance>("skinned_mesh");
  world.register_component<SkinnedBounds>("skinned_bounds");
  world.register_component<AnimationTracks>("animation_tracks");
  world.register_component<AnimationLod>("animation_lod");
  world.events<AnimationEvent>();
  animation_ = &world.set_resource<Animation>(config_, world.capacity());
  Animation* a = animation_;
  engine.add_system<AnimationPlayer>(
      "anim_advance",
      [a](core::StageContext& ctx, Entity e, AnimationPlayer& player) {
        const auto* tracks = ctx.world().storage<AnimationTracks>();
        if (const AnimationTracks* t = tracks != nullptr ? tracks->get(e.index) : nullptr)
          a->trigger(ctx.dt(), e, player, *t, ctx.commands());
        a->advance(ctx.dt(), player);
      },
      kAnimationPhase, {}, core::Access{}.read<Animation, AnimationTracks>());
  engine.add_stage({.name = "anim_pose",
                    .phase = kAnimationPhase,
                    .access = core::Access{}
                                  .read<AnimationPlayer, SkinnedMeshInstance, AnimationLod>()
                                  .write<Animation, SkinnedBounds, SkinTargets>(),
                    .run = [a](core::StageContext& ctx) { a->pose(ctx); },
                    .simulation = false});
  engine.add_stage({.name = "anim_skin",
                    .phase = kAnimationPhase,
                    .access = core::Access{}.write<Animation, SkinnedBounds>(),
                    .after = {"anim_pose"},
                    .run = [a](core::StageContext& ctx) { a->skin(ctx); },
                    .simulation = false});
}

}  // namespace spindle::anim
