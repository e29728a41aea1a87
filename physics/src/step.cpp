// physics_step: every region's Bullet world steps in its own job (sub-steps, then its touching
// pairs); then, serially, region migration and the contact events.
#include <spindle/physics/world.h>

#include "bodies.h"
#include "bullet_convert.h"
#include "contact_events.h"
#include "physics_impl.h"

namespace spindle::physics {

namespace {

using Impl = Physics::Impl;

// Kinematic bodies advance a fraction of their path per sub-step, reaching the target on the
// last, so Bullet sees their true velocity on each.
void move_kinematic_bodies(Impl& m, const Impl::Region& r, std::uint32_t sub,
                           std::uint32_t substeps) {
  const float f = static_cast<float>(sub + 1) / static_cast<float>(substeps);
  for (std::uint32_t index : r.kinematic) {
    Impl::Slot& s = m.slots[index];
    if (sub + 1 == substeps) {
      s.body->setWorldTransform(s.kinematic_to);
      continue;
    }
    btTransform x;
    x.setOrigin(s.kinematic_from.getOrigin().lerp(s.kinematic_to.getOrigin(), f));
    x.setRotation(s.kinematic_from.getRotation().slerp(s.kinematic_to.getRotation(), f));
    s.body->setWorldTransform(x);
  }
}

// Bullet clears forces after each of its steps, so they are applied before every sub-step.
void apply_forces(Impl& m, const Impl::Region& r) {
  for (std::uint32_t index : r.forced) {
    btRigidBody& body = *m.slots[index].body;
    body.applyCentralForce(bt(m.slots[index].force));
    body.applyTorque(bt(m.slots[index].torque));
  }
}

void step_region(Impl& m, Impl::Region& r, std::uint32_t substeps, float h) {
  for (std::uint32_t sub = 0; sub < substeps; ++sub) {
    move_kinematic_bodies(m, r, sub, substeps);
    apply_forces(m, r);
    r.world->stepSimulation(h, 0, h);
  }
  gather_contacts(*r.world->getDispatcher(), r.contacts);
}

}  // namespace

void Physics::step(core::StageContext& ctx) {
  Impl& m = *impl_;
  const std::uint32_t substeps = config_.substeps;
  const float h = ctx.dt() / static_cast<float>(substeps);
  ctx.parallel_for(static_cast<std::uint32_t>(m.regions.size()),
                   [&](std::uint32_t begin, std::uint32_t end) {
                     for (std::uint32_t r = begin; r < end; ++r)
                       step_region(m, m.regions[r], substeps, h);
                   });

  // Bodies whose centre crossed a boundary during the step change region.
  for (const Impl::Region& r : m.regions)
    for (std::uint32_t index : r.kinematic) m.slots[index].moving = false;
  stats_.migrated += migrate_bodies(m, *this, ctx, &stats_.active);

  m.contact_events.clear();
  for (const Impl::Region& r : m.regions) m.contact_events.add(r.contacts);
  stats_.contact_pairs = m.contact_events.emit(ctx.world());
}

}  // namespace spindle::physics
