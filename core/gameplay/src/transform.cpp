#include <spindle/gameplay/transform.h>

#include <atomic>

#include <spindle/base/log.h>

namespace spindle::core {

glm::mat4 Transform::local_matrix() const {
  return compose_trs(translation_, rotation_, scale_);
}

void TransformPlugin::build(Engine& engine) {
  World& world = engine.world();
  world.register_component<Transform>("transform");
  world.register_component<WorldTransform>("world_transform");
  world.register_component<Parent>("parent");
  world.register_component<StaticTransform>("static_transform");
  const std::uint32_t capacity = world.capacity();
  depth_.assign(capacity, 0);
  stamp_.assign(capacity, 0);
  by_level_.assign(capacity, 0);
  level_begin_.reserve(64);
  level_count_.reserve(64);

  StageDesc desc;
  desc.name = "transforms";
  desc.phase = kTransformsPhase;
  desc.access = Access{}.read<Parent>().write<Transform, WorldTransform>();
  desc.run = [this](StageContext& ctx) { update(ctx); };
  engine.add_stage(std::move(desc));
}

namespace {

struct Counts {
  std::atomic<std::uint32_t> full{0};
  std::atomic<std::uint32_t> translation{0};
};

// Updates one world matrix from its local transform and its parent's world matrix (null for a
// root). `parent_changed` are the parent's WorldTransform::changed bits.
inline void update_one(Transform& local, WorldTransform& out, Entity parent_entity,
                       const glm::mat4* parent, std::uint32_t parent_changed, std::uint32_t& full,
                       std::uint32_t& moved) {
  std::uint32_t change = local.dirty() | parent_changed;
  if (!(out.parent == parent_entity)) {
    change |= Transform::kRotationScaleDirty | Transform::kTranslationDirty;
    out.parent = parent_entity;
  }
  out.previous_translation = glm::vec3(out.matrix[3]);
  if (change & Transform::kRotationScaleDirty) {
    out.matrix = parent != nullptr ? *parent * local.local_matrix() : local.local_matrix();
    ++full;
  } else if (change & Transform::kTranslationDirty) {
    const glm::vec4 t(local.translation(), 1.0f);
    out.matrix[3] = parent != nullptr ? *parent * t : t;
    ++moved;
  }
  out.changed = change;
  local.clear_dirty();
}

}  // namespace

void TransformPlugin::update_levels(StageContext& ctx) {
  World& world = ctx.world();
  const ComponentStorage<Parent>* parents = world.storage<Parent>();
  const ComponentStorage<WorldTransform>* worlds = world.storage<WorldTransform>();
  const std::uint32_t current = ++update_number_;
  const std::uint32_t in_progress = current | 0x80000000u;
  std::uint32_t broken = 0;
  level_count_.assign(1, 0);

  const std::span<const std::uint32_t> children = parents->entities();
  for (std::size_t k = 0; k < children.size(); ++k) {
    std::uint32_t i = children[k];
    if (stamp_[i] == current) continue;
    // Walk up until a known depth or a root; the walked chain is stacked in by_level_'s tail.
    std::uint32_t top = static_cast<std::uint32_t>(by_level_.size());
    std::uint32_t base_depth = 0;
    for (;;) {
      if (stamp_[i] == current) {
        base_depth = depth_[i] + 1;
        break;
      }
      if (stamp_[i] == in_progress) {
        // A loop: every entity on it becomes a root (counted as broken); the entities that
        // hang below the loop get depths counted from it.
        std::uint32_t pos = top;
        while (by_level_[pos] != i) ++pos;
        for (std::uint32_t s = top; s <= pos; ++s) {
          depth_[by_level_[s]] = 0;
          stamp_[by_level_[s]] = current;
          ++broken;
        }
        top = pos + 1;
        base_depth = 1;
        break;
      }
      stamp_[i] = in_progress;
      by_level_[--top] = i;
      const Parent* link = parents->get(i);
      if (link == nullptr) {  // reached an entity without a parent: the chain's root
        depth_[i] = 0;
        stamp_[i] = current;
        ++top;
        base_depth = 1;
        break;
      }
      const Entity p = link->entity;
      if (!world.alive(p) || !worlds->has(p.index)) {
        ++broken;  // dead parent or parent without a world matrix: a root
        depth_[i] = 0;
        stamp_[i] = current;
        ++top;
        base_depth = 1;
        break;
      }
      i = p.index;
    }
    // Assign depths down the stacked chain (top is the entity nearest the root).
    for (std::uint32_t s = top; s < by_level_.size(); ++s) {
      const std::uint32_t e = by_level_[s];
      if (stamp_[e] == current) continue;
      depth_[e] = base_depth++;
      stamp_[e] = current;
    }
  }
  // Bucket the non-root entities by level, in dense order of the Parent storage (deterministic).
  for (std::uint32_t i : children) {
    if (depth_[i] == 0) continue;
    if (depth_[i] >= level_count_.size()) level_count_.resize(depth_[i] + 1, 0);
    ++level_count_[depth_[i]];
  }
  level_begin_.assign(level_count_.size(), 0);
  std::uint32_t sum = 0;
  for (std::size_t l = 0; l < level_count_.size(); ++l) {
    level_begin_[l] = sum;
    sum += level_count_[l];
  }
  for (std::size_t l = 0; l < level_count_.size(); ++l) level_count_[l] = 0;
  for (std::uint32_t i : children) {
    const std::uint32_t d = depth_[i];
    if (d == 0) continue;
    by_level_[level_begin_[d] + level_count_[d]++] = i;
  }
  stats_.broken_parents = broken;
  stats_.levels = static_cast<std::uint32_t>(level_count_.size());
}

void TransformPlugin::update(StageContext& ctx) {
  World& world = ctx.world();
  ComponentStorage<Transform>* locals = world.storage<Transform>();
  ComponentStorage<WorldTransform>* worlds = world.storage<WorldTransform>();
  const ComponentStorage<Parent>* parents = world.storage<Parent>();
  if (locals == nullptr || worlds == nullptr) return;
  const bool hierarchy = parents != nullptr && parents->size() > 0;
  if (hierarchy) {
    update_levels(ctx);
  } else {
    stats_.levels = 1;
    stats_.broken_parents = 0;
  }
  Counts counts;

  // Roots: everything with a world matrix that is not at depth >= 1.
  const Query<Transform, WorldTransform> roots = world.query<Transform, WorldTransform>();
  ctx.parallel_for(roots.size(), [&](std::uint32_t b, std::uint32_t e) {
    std::uint32_t full = 0, moved = 0;
    roots.each_range(b, e, [&](Entity entity, Transform& local, WorldTransform& out) {
      if (hierarchy && parents->has(entity.index) && depth_[entity.index] > 0) return;
      update_one(local, out, Entity::null(), nullptr, 0, full, moved);
    });
    counts.full.fetch_add(full, std::memory_order_relaxed);
    counts.translation.fetch_add(moved, std::memory_order_relaxed);
  });

  // Then each level below, in parallel within the level.
  if (hierarchy) {
    for (std::size_t level = 1; level < level_count_.size(); ++level) {
      const std::uint32_t begin = level_begin_[level];
      const std::uint32_t n = level_count_[level];
      ctx.parallel_for(n, [&](std::uint32_t b, std::uint32_t e) {
        std::uint32_t full = 0, moved = 0;
        for (std::uint32_t k = begin + b; k < begin + e; ++k) {
          const std::uint32_t i = by_level_[k];
          Transform* local = locals->get(i);
          WorldTransform* out = worlds->get(i);
          if (local == nullptr || out == nullptr) continue;
          const Entity parent_entity = parents->get(i)->entity;
          const WorldTransform* parent = worlds->get(parent_entity.index);
          update_one(*local, *out, parent_entity, &parent->matrix, parent->changed, full, moved);
        }
        counts.full.fetch_add(full, std::memory_order_relaxed);
        counts.translation.fetch_add(moved, std::memory_order_relaxed);
      });
    }
  }
  stats_.full_updates = counts.full.load(std::memory_order_relaxed);
  stats_.translation_updates = counts.translation.load(std::memory_order_relaxed);
}

}  // namespace spindle::core
