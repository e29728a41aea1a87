#include "bodies.h"

#include <atomic>
#include <string>

#include "bullet_convert.h"
#include "input_checks.h"

namespace spindle::physics {

using core::Status;

namespace {

constexpr float kMinMass = 1e-6f, kMaxMass = 1e9f;

}  // namespace

Status Physics::validate(const RigidBody& b) const {
  if (b.shape.index >= impl_->shapes.size())
    return Status::error(b.shape.valid()
                             ? "the shape id " + std::to_string(b.shape.index) + " names no shape"
                             : "no shape");
  const ShapeType shape = impl_->shapes[b.shape.index].type;
  const bool concave = shape == ShapeType::TriangleMesh || shape == ShapeType::Plane;
  switch (b.type) {
    case BodyType::Dynamic:
      if (!finite(b.mass) || !(b.mass >= kMinMass) || b.mass > kMaxMass)
        return Status::error("a dynamic body's mass is " + std::to_string(b.mass) +
                             " (must be finite, in [1e-6, 1e9])");
      if (concave)
        return Status::error(std::string("a dynamic body cannot have a ") + to_string(shape) +
                             " shape (mass on a static mesh or plane; use a hull or compound)");
      break;
    case BodyType::Kinematic:
    case BodyType::Static:
      if (b.mass != 0.0f)
        return Status::error(std::string("a ") +
                             (b.type == BodyType::Static ? "static" : "kinematic") +
                             " body has mass " + std::to_string(b.mass) + " (must be 0)");
      if (shape == ShapeType::Plane && b.type == BodyType::Kinematic)
        return Status::error("a plane can only be static");
      break;
    default:
      return Status::error("unknown body type " +
                           std::to_string(static_cast<std::uint32_t>(b.type)));
  }
  const float values[] = {b.friction, b.restitution, b.linear_damping, b.angular_damping};
  const char* names[] = {"friction", "restitution", "linear damping", "angular damping"};
  for (int i = 0; i < 4; ++i)
    if (!finite(values[i]) || values[i] < 0.0f || (i >= 2 && values[i] > 1.0f))
      return Status::error(std::string(names[i]) + " is " + std::to_string(values[i]) +
                           (i >= 2 ? " (must be in [0, 1])" : " (must be finite and >= 0)"));
  return {};
}

Status check_placement(const core::Transform* t, bool has_parent) {
  if (t == nullptr) return Status::error("no Transform component");
  if (!good_position(t->translation()) || !good_rotation(t->rotation()))
    return Status::error("its Transform is not finite or lies beyond 1e7 m");
  if (has_parent)
    return Status::error(
        "it has a Parent (a rigid body's Transform is its world pose: bodies are roots)");
  return {};
}

std::unique_ptr<btRigidBody> make_bullet_body(const RigidBody& desc, btCollisionShape& shape,
                                              float mass, const btVector3& inertia,
                                              const core::Transform& t, core::Entity e) {
  btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, &shape, inertia);
  info.m_startWorldTransform = btTransform(bt(glm::normalize(t.rotation())), bt(t.translation()));
  info.m_friction = desc.friction;
  info.m_restitution = desc.restitution;
  info.m_linearDamping = desc.linear_damping;
  info.m_angularDamping = desc.angular_damping;
  auto made = std::make_unique<btRigidBody>(info);
  int flags = made->getCollisionFlags();
  if (desc.type == BodyType::Kinematic) flags |= btCollisionObject::CF_KINEMATIC_OBJECT;
  if (desc.type == BodyType::Static) flags |= btCollisionObject::CF_STATIC_OBJECT;
  if (desc.flags & RigidBody::kTrigger) flags |= btCollisionObject::CF_NO_CONTACT_RESPONSE;
  made->setCollisionFlags(flags);
  if (desc.type == BodyType::Kinematic || (desc.flags & RigidBody::kNeverSleep))
    made->setActivationState(DISABLE_DEACTIVATION);
  made->setUserIndex(static_cast<int>(e.index));
  made->setUserIndex2(static_cast<int>(e.generation));
  return made;
}

void remove_body(Physics::Impl& m, Physics::Impl::Slot& s) {
  if (s.type == BodyType::Static) {
    m.regions[0].world->removeRigidBody(s.body.get());
    for (std::size_t r = 0; r < s.copies.size(); ++r)
      m.regions[r + 1].world->removeRigidBody(s.copies[r].get());
  } else {
    m.regions[s.region].world->removeRigidBody(s.body.get());
  }
  s.body.reset();
  s.copies.clear();
  s.live = false;
}

std::uint64_t migrate_bodies(Physics::Impl& m, const Physics& physics, core::StageContext& ctx,
                             std::uint32_t* active) {
  const bool regions = m.regions.size() > 1;
  if (!regions && active == nullptr) return 0;
  std::atomic<std::uint32_t> awake{0};
  ctx.parallel_for(
      static_cast<std::uint32_t>(m.live.size()), [&](std::uint32_t b, std::uint32_t e) {
        std::uint32_t count = 0;
        for (std::uint32_t i = b; i < e; ++i) {
          Physics::Impl::Slot& s = m.slots[m.live[i]];
          if (s.type == BodyType::Static) continue;
          if (s.type == BodyType::Dynamic && s.body->isActive()) ++count;
          const btTransform& x = s.moving ? s.kinematic_to : s.body->getWorldTransform();
          s.next_region = regions ? physics.region_of(gl(x.getOrigin())) : 0;
        }
        awake.fetch_add(count, std::memory_order_relaxed);
      });
  if (active != nullptr) *active = awake.load();
  if (!regions) return 0;
  std::uint64_t moved = 0;
  for (std::uint32_t index : m.live) {
    Physics::Impl::Slot& s = m.slots[index];
    if (s.type == BodyType::Static || s.next_region == s.region) continue;
    m.regions[s.region].world->removeRigidBody(s.body.get());
    s.region = s.next_region;
    m.add_to_region(s.body.get(), s.region, s);
    ++moved;
  }
  return moved;
}

}  // namespace spindle::physics
