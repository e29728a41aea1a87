// Transforms: local translation / rotation / scale with an optional parent, a cached world
// matrix, and the stage that updates the cached matrices in parallel, level by level.
//
// Usage:
//
//   engine.add_plugin<spindle::core::TransformPlugin>();  // adds the "transforms" stage
//   spindle::core::Entity arm = world.create();
//   world.add<spindle::core::Transform>(arm, spindle::core::Transform::from(glm::vec3(0, 1, 0)));
//   world.add<spindle::core::WorldTransform>(arm);
//   world.add<spindle::core::Parent>(hand, spindle::core::Parent{arm});   // hand follows arm
//   // In a system (write access to Transform):
//   transform.set_translation(transform.translation() + velocity * ctx.dt());
//   // After the transforms stage: world.get<WorldTransform>(hand)->matrix
//   world.add<spindle::core::StaticTransform>(rock, {matrix});  // never recomputed
//
// Two dirty flags: a change of translation only recomputes the translation column of the world
// matrix (one matrix-vector product: world[3] = parent_world * (t, 1)); a change of rotation or
// scale recomputes the full product. A parent whose matrix changed passes the kind of change to
// its children, so a moved (not rotated) parent makes its whole subtree do the cheap update.
// Entities are processed level by level (roots, then their children, ...); each level is split
// into jobs. A parent chain that loops, or a parent that is gone, makes the entity a root (and
// is counted in TransformPlugin::stats()); a change of parent recomputes the matrix in full.
// A parent needs a WorldTransform: a parent with only a StaticTransform counts as broken.
// Static transforms store only a world matrix.
// Every update keeps the previous translation, so presentation can interpolate between fixed
// steps with interpolated_translation(world_transform, ctx.alpha()).
#pragma once

#include <cstdint>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/engine/engine.h>

namespace spindle::core {

class Transform {
 public:
  static constexpr std::uint32_t kTranslationDirty = 1u;
  static constexpr std::uint32_t kRotationScaleDirty = 2u;

  Transform() = default;
  static Transform from(glm::vec3 t, glm::quat r = glm::quat(1, 0, 0, 0),
                        glm::vec3 s = glm::vec3(1)) {
    Transform x;
    x.translation_ = t;
    x.rotation_ = r;
    x.scale_ = s;
    return x;
  }

  glm::vec3 translation() const { return translation_; }
  glm::quat rotation() const { return rotation_; }
  glm::vec3 scale() const { return scale_; }
  void set_translation(glm::vec3 t) {
    translation_ = t;
    dirty_ |= kTranslationDirty;
  }
  void set_rotation(glm::quat r) {
    rotation_ = r;
    dirty_ |= kRotationScaleDirty;
  }
  void set_scale(glm::vec3 s) {
    scale_ = s;
    dirty_ |= kRotationScaleDirty;
  }
  std::uint32_t dirty() const { return dirty_; }
  void clear_dirty() { dirty_ = 0; }
  // The local matrix T * R * S.
  glm::mat4 local_matrix() const;

 private:
  glm::vec3 translation_{0.0f};
  glm::quat rotation_{1.0f, 0.0f, 0.0f, 0.0f};
  glm::vec3 scale_{1.0f};
  std::uint32_t dirty_ = kTranslationDirty | kRotationScaleDirty;  // new: compute everything
};

struct Parent {
  Entity entity;
};

struct WorldTransform {
  glm::mat4 matrix{1.0f};
  // Translation before the last update: rendering blends it with the current one by the fixed
  // step's alpha (see interpolated_translation()).
  glm::vec3 previous_translation{0.0f};
  // What changed in the last update (Transform::k*Dirty bits), read by children.
  std::uint32_t changed = 0;
  // The parent the matrix was computed against (null for a root): a new parent, a lost one or a
  // broken loop forces a full recomputation even when nothing moved.
  Entity parent{};
};

// Where to draw an entity between two simulation steps: alpha 0 is the previous step, 1 the
// current one (StageContext::alpha() in presentation stages).
// T * R * S as one matrix (what Transform::local_matrix() and animation joints use).
inline glm::mat4 compose_trs(glm::vec3 t, glm::quat r, glm::vec3 s) {
  glm::mat4 m = glm::mat4_cast(r);
  m[0] *= s.x;
  m[1] *= s.y;
  m[2] *= s.z;
  m[3] = glm::vec4(t, 1.0f);
  return m;
}

inline glm::vec3 interpolated_translation(const WorldTransform& w, float alpha) {
  return w.previous_translation + (glm::vec3(w.matrix[3]) - w.previous_translation) * alpha;
}

// A world matrix that never changes (level geometry): the transforms stage never touches it.
struct StaticTransform {
  glm::mat4 matrix{1.0f};
};

// Where the transforms stage runs: after game logic and physics, before animation and rendering.
inline constexpr Phase kTransformsPhase{"transforms", 400};

class TransformPlugin final : public Plugin {
 public:
  struct Stats {
    std::uint32_t levels = 0;        // depth of the deepest hierarchy + 1
    std::uint32_t full_updates = 0;  // world matrices recomputed in full
    std::uint32_t translation_updates = 0;
    std::uint32_t broken_parents = 0;  // cycles or dead parents, treated as roots
  };

  const char* name() const override { return "transforms"; }
  void build(Engine& engine) override;
  const Stats& stats() const { return stats_; }

  // One update, outside the engine (tests): same code as the stage.
  void update(StageContext& ctx);

 private:
  void update_levels(StageContext& ctx);

  Stats stats_;
  std::vector<std::uint32_t> depth_;     // by entity index
  std::vector<std::uint32_t> stamp_;     // by entity index: update number of depth_[i]
  std::vector<std::uint32_t> by_level_;  // entity indices of non-roots, grouped by level
  std::vector<std::uint32_t> level_begin_;
  std::vector<std::uint32_t> level_count_;
  std::uint32_t update_number_ = 0;
};

}  // namespace spindle::core
