#include "spindle/physics/queries.h"

#include <optional>
#include <vector>

#include <btBulletDynamicsCommon.h>

#include <spindle/base/mutex.h>

#include "bullet_convert.h"
#include "input_checks.h"
#include "physics_impl.h"

namespace spindle::physics {

namespace {

using Region = Physics::Impl::Region;

// Rays and sweeps skip triggers.
struct RayCallback final : btCollisionWorld::ClosestRayResultCallback {
  using ClosestRayResultCallback::ClosestRayResultCallback;
  bool needsCollision(btBroadphaseProxy* proxy) const override {
    const auto* o = static_cast<const btCollisionObject*>(proxy->m_clientObject);
    if (o->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE) return false;
    return ClosestRayResultCallback::needsCollision(proxy);
  }
};
struct SweepCallback final : btCollisionWorld::ClosestConvexResultCallback {
  using ClosestConvexResultCallback::ClosestConvexResultCallback;
  bool needsCollision(btBroadphaseProxy* proxy) const override {
    const auto* o = static_cast<const btCollisionObject*>(proxy->m_clientObject);
    if (o->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE) return false;
    return ClosestConvexResultCallback::needsCollision(proxy);
  }
};

// Queries look in every region: keeps the hit nearest along the segment (the first region's on
// a tie, so statics copied into every region answer once).
void keep_nearest(std::optional<RayHit>& best, const btCollisionObject* object,
                  const btVector3& point, const btVector3& normal, float fraction, float length) {
  if (best && fraction >= best->fraction) return;
  best = RayHit{entity_of(object), gl(point), gl(normal), fraction, length * fraction};
}

std::optional<RayHit> sweep_convex(const std::vector<Region>& regions, const btConvexShape& shape,
                                   glm::vec3 from, glm::vec3 to, glm::quat rotation,
                                   std::uint32_t mask) {
  const btTransform start(bt(rotation), bt(from));
  const btTransform end(bt(rotation), bt(to));
  std::optional<RayHit> best;
  for (const Region& r : regions) {
    SweepCallback cb(bt(from), bt(to));
    cb.m_collisionFilterGroup = -1;
    cb.m_collisionFilterMask = static_cast<int>(mask);
    r.world->convexSweepTest(&shape, start, end, cb);
    if (cb.hasHit())
      keep_nearest(best, cb.m_hitCollisionObject, cb.m_hitPointWorld, cb.m_hitNormalWorld,
                   cb.m_closestHitFraction, glm::length(to - from));
  }
  return best;
}

}  // namespace

std::optional<RayHit> Physics::raycast(glm::vec3 from, glm::vec3 to, std::uint32_t mask) const {
  if (!finite(from) || !finite(to)) return std::nullopt;
  core::LockGuard lock(impl_->query_lock);
  std::optional<RayHit> best;
  for (const Region& r : impl_->regions) {
    RayCallback cb(bt(from), bt(to));
    cb.m_collisionFilterGroup = -1;
    cb.m_collisionFilterMask = static_cast<int>(mask);
    r.world->rayTest(bt(from), bt(to), cb);
    if (cb.hasHit())
      keep_nearest(best, cb.m_collisionObject, cb.m_hitPointWorld, cb.m_hitNormalWorld,
                   cb.m_closestHitFraction, glm::length(to - from));
  }
  return best;
}

std::optional<RayHit> Physics::sweep_sphere(glm::vec3 from, glm::vec3 to, float radius,
                                            std::uint32_t mask) const {
  if (!finite(from) || !finite(to) || !good_size(radius)) return std::nullopt;
  core::LockGuard lock(impl_->query_lock);
  const btSphereShape sphere(radius);
  return sweep_convex(impl_->regions, sphere, from, to, glm::quat(1, 0, 0, 0), mask);
}

std::optional<RayHit> Physics::sweep(ShapeId shape, glm::vec3 from, glm::vec3 to,
                                     glm::quat rotation, std::uint32_t mask) const {
  if (shape.index >= impl_->shapes.size() || !finite(from) || !finite(to) ||
      !good_rotation(rotation))
    return std::nullopt;
  const Impl::Shape& s = impl_->shapes[shape.index];
  if (s.type == ShapeType::TriangleMesh || s.type == ShapeType::Plane ||
      s.type == ShapeType::Compound)
    return std::nullopt;
  core::LockGuard lock(impl_->query_lock);
  return sweep_convex(impl_->regions, static_cast<const btConvexShape&>(*s.shape), from, to,
                      glm::normalize(rotation), mask);
}

}  // namespace spindle::physics
