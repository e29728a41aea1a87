// physics_writeback: the Bullet -> ECS half of the frame, in parallel over bodies: poses of
// dynamic bodies into their Transform, velocities, sleep state and region into RigidBody.
#include <spindle/gameplay/transform.h>
#include <spindle/physics/world.h>

#include "bodies.h"
#include "bullet_convert.h"
#include "physics_impl.h"

namespace spindle::physics {

void Physics::writeback(core::StageContext& ctx) {
  core::World& world = ctx.world();
  Impl& m = *impl_;
  auto* bodies = world.storage<RigidBody>();
  auto* transforms = world.storage<core::Transform>();
  const auto count = static_cast<std::uint32_t>(m.live.size());
  ctx.parallel_for(count, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t index = m.live[i];
      Impl::Slot& s = m.slots[index];
      RigidBody& desc = *bodies->get(index);
      const btRigidBody& body = *s.body;
      const bool asleep = s.type == BodyType::Dynamic && !body.isActive();
      BodyAccess::write_state(desc, s.region, asleep);
      if (s.type == BodyType::Static) continue;
      BodyAccess::write_velocities(desc, gl(body.getLinearVelocity()),
                                   gl(body.getAngularVelocity()));
      if (s.type != BodyType::Dynamic) continue;
      const btTransform& x = body.getWorldTransform();
      const glm::vec3 position = gl(x.getOrigin());
      const glm::quat rotation = gl(x.getRotation());
      if (position == s.last_position && rotation == s.last_rotation) continue;
      core::Transform* t = transforms->get(index);
      if (t == nullptr) continue;  // removed during the frame: the body goes at the next sync
      t->set_translation(position);
      t->set_rotation(rotation);
      s.last_position = position;
      s.last_rotation = rotation;
    }
  });
}

}  // namespace spindle::physics
