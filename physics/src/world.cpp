#include "spindle/physics/world.h"

#include <algorithm>
#include <string>
#include <utility>

#include <spindle/base/assert.h>

#include "bodies.h"
#include "bullet_convert.h"
#include "input_checks.h"
#include "physics_impl.h"

namespace spindle::physics {

using core::Status;

namespace {

constexpr std::uint32_t kMaxShapes = 1u << 20;
constexpr std::uint32_t kMaxRegions = 64;
constexpr std::uint32_t kMaxSubsteps = 64;

}  // namespace

Status Physics::validate(const PhysicsConfig& c) {
  if (!finite(c.gravity)) return Status::error("physics config: gravity is not finite");
  if (c.substeps == 0 || c.substeps > kMaxSubsteps)
    return Status::error("physics config: substeps is " + std::to_string(c.substeps) +
                         " (must be 1.." + std::to_string(kMaxSubsteps) + ")");
  if (c.region_axis > 2)
    return Status::error("physics config: region_axis is " + std::to_string(c.region_axis) +
                         " (must be 0, 1 or 2)");
  if (c.region_boundaries.size() + 1 > kMaxRegions)
    return Status::error("physics config: " + std::to_string(c.region_boundaries.size() + 1) +
                         " regions (at most " + std::to_string(kMaxRegions) + ")");
  for (std::size_t i = 0; i < c.region_boundaries.size(); ++i) {
    if (!finite(c.region_boundaries[i]))
      return Status::error("physics config: region boundary " + std::to_string(i) +
                           " is not finite");
    if (i > 0 && !(c.region_boundaries[i] > c.region_boundaries[i - 1]))
      return Status::error("physics config: region boundaries must ascend (boundary " +
                           std::to_string(i) + ")");
  }
  if (c.max_shapes == 0 || c.max_shapes > kMaxShapes)
    return Status::error("physics config: max_shapes is " + std::to_string(c.max_shapes) +
                         " (must be 1.." + std::to_string(kMaxShapes) + ")");
  return {};
}

Physics::Physics(PhysicsConfig config, std::uint32_t entity_capacity)
    : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  const Status ok = validate(config_);
  SPINDLE_ASSERT(ok, "Physics built from a config that failed Physics::validate()");
  impl_->shapes.reserve(config_.max_shapes);
  impl_->slots.resize(entity_capacity);
  impl_->live.reserve(entity_capacity);
  impl_->fresh.reserve(entity_capacity);
  impl_->regions.resize(config_.region_boundaries.size() + 1);
  for (Impl::Region& r : impl_->regions) {
    r.config = std::make_unique<btDefaultCollisionConfiguration>();
    r.dispatcher = std::make_unique<btCollisionDispatcher>(r.config.get());
    r.broadphase = std::make_unique<btDbvtBroadphase>();
    r.solver = std::make_unique<btSequentialImpulseConstraintSolver>();
    r.world = std::make_unique<btDiscreteDynamicsWorld>(r.dispatcher.get(), r.broadphase.get(),
                                                        r.solver.get(), r.config.get());
    r.world->setGravity(bt(config_.gravity));
  }
}

Physics::~Physics() {
  // Bodies leave their worlds before the worlds (and shapes) go.
  for (std::uint32_t index : impl_->live) remove_body(*impl_, impl_->slots[index]);
  impl_->slots.clear();
  impl_->regions.clear();
}

std::uint32_t Physics::region_count() const {
  return static_cast<std::uint32_t>(impl_->regions.size());
}
std::uint32_t Physics::region_objects(std::uint32_t region) const {
  return region < impl_->regions.size()
             ? static_cast<std::uint32_t>(impl_->regions[region].world->getNumCollisionObjects())
             : 0;
}
std::uint32_t Physics::region_of(glm::vec3 p) const {
  const auto& b = config_.region_boundaries;
  return static_cast<std::uint32_t>(std::upper_bound(b.begin(), b.end(), p[config_.region_axis]) -
                                    b.begin());
}

}  // namespace spindle::physics
