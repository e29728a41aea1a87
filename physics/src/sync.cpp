// physics_sync: the ECS -> Bullet half of the frame. Physics::sync() calls, in this order:
//   remove_gone_bodies    bodies whose entity, RigidBody or Transform went away
//   create_new_bodies     Bullet bodies for new RigidBody components, in entity-index order
//   apply_requests        teleports, kinematic targets, forces, impulses, velocities
//   plan_step             bodies into their regions; each region's forced and moving lists
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <span>

#include <spindle/base/log.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/events.h>
#include <spindle/physics/world.h>

#include "bodies.h"
#include "bullet_convert.h"
#include "input_checks.h"
#include "physics_impl.h"

namespace spindle::physics {

namespace {

using core::Entity;
using core::Status;
using Impl = Physics::Impl;
using Slot = Physics::Impl::Slot;

// The components the sync reads and writes.
struct Components {
  core::World& world;
  core::ComponentStorage<RigidBody>& bodies;
  core::ComponentStorage<core::Transform>* transforms;  // null while no entity has one
  const core::ComponentStorage<core::Parent>* parents;  // null while no entity has one

  explicit Components(core::World& w)
      : world(w),
        bodies(*w.storage<RigidBody>()),
        transforms(w.storage<core::Transform>()),
        parents(w.storage<core::Parent>()) {}
};

// --- removal ------------------------------------------------------------------------------------

// Marks the live bodies whose entity died or whose RigidBody or Transform went away; true when
// there is any.
bool mark_gone_bodies(Impl& m, const Components& c) {
  bool any = false;
  for (std::uint32_t index : m.live) {
    Slot& s = m.slots[index];
    s.removing = !c.world.alive(Entity{index, s.generation}) || !c.bodies.has(index) ||
                 c.transforms == nullptr || !c.transforms->has(index);
    any |= s.removing;
  }
  return any;
}

// Bullet deletes a removed body's contacts but leaves the bodies it touched asleep (a box resting
// on a removed one would float), so those are woken, from the last step's touching pairs.
void wake_bodies_touching_gone(Impl& m) {
  const auto slot_of = [&](Entity e) -> Slot* {
    Slot& s = m.slots[e.index];
    return s.live && s.generation == e.generation ? &s : nullptr;
  };
  for (const ContactPair& p : m.contact_events.touching()) {
    Slot* a = slot_of(p.a);
    Slot* b = slot_of(p.b);
    if (a == nullptr || b == nullptr || a->removing == b->removing) continue;
    Slot& stays = a->removing ? *b : *a;
    if (stays.type == BodyType::Dynamic) stays.body->activate(true);
  }
}

// Takes the marked bodies out of the live list and their worlds. Removal costs Bullet a scan of
// the world's bodies and pairs per body, so each region removes its own in a job (regions share
// nothing); statics, in every region, go serially.
void remove_marked_bodies(Impl& m, Physics::Stats& stats, core::StageContext& ctx) {
  for (Impl::Region& r : m.regions) r.leaving.clear();
  std::size_t kept = 0;
  for (std::uint32_t index : m.live) {
    Slot& s = m.slots[index];
    if (!s.removing) {
      m.live[kept++] = index;
      continue;
    }
    s.removing = false;
    ++stats.removed;
    if (s.type == BodyType::Static)
      remove_body(m, s);
    else
      m.regions[s.region].leaving.push_back(index);
  }
  m.live.resize(kept);
  ctx.parallel_for(static_cast<std::uint32_t>(m.regions.size()),
                   [&](std::uint32_t begin, std::uint32_t end) {
                     for (std::uint32_t r = begin; r < end; ++r)
                       for (std::uint32_t index : m.regions[r].leaving)
                         remove_body(m, m.slots[index]);
                   });
}

void remove_gone_bodies(Impl& m, Physics::Stats& stats, core::StageContext& ctx,
                        const Components& c) {
  if (!mark_gone_bodies(m, c)) return;
  wake_bodies_touching_gone(m);
  remove_marked_bodies(m, stats, ctx);
}

// --- creation -----------------------------------------------------------------------------------

// Lists into m.fresh the RigidBody components without a live body of their generation, in
// entity-index order (Bullet's results depend on insertion order; dense order depends on
// history, index order does not).
void list_new_bodies(Impl& m, const Components& c) {
  m.fresh.clear();
  const std::span<const std::uint32_t> entities = c.bodies.entities();
  const std::uint32_t* generations = c.world.entity_generations();
  for (std::uint32_t index : entities) {
    const Slot& s = m.slots[index];
    if (!(s.live && s.generation == generations[index])) m.fresh.push_back(index);
  }
  std::sort(m.fresh.begin(), m.fresh.end());
}

// A rejected body is checked again every step (a missing Transform may have been added since),
// but reported only once per entity.
void report_rejected(Slot& s, Entity e, const Status& why, Physics::Stats& stats,
                     core::World& world) {
  if (s.rejected && s.generation == e.generation) return;
  SPINDLE_LOG_ERROR(Physics, "rigid body of entity %u:%u rejected: %s", e.index, e.generation,
                    why.c_str());
  s.generation = e.generation;
  s.rejected = true;
  ++stats.rejected;
  world.emit(BodyRejected{e});
}

// Checks the new body of entity slot `index` and, if it passes, makes its Bullet body: a static
// body goes into every region now (a copy per extra region), others join their region's list.
void create_body(Impl& m, const Physics& physics, Physics::Stats& stats, const Components& c,
                 std::uint32_t index) {
  Slot& s = m.slots[index];
  const Entity e = c.world.entity_at(index);
  RigidBody& desc = *c.bodies.get(index);
  const core::Transform* t = c.transforms != nullptr ? c.transforms->get(index) : nullptr;
  Status ok = physics.validate(desc);
  if (ok) ok = check_placement(t, c.parents != nullptr && c.parents->has(index));
  btCollisionShape* shape = ok ? m.shapes[desc.shape.index].shape.get() : nullptr;
  const float mass = desc.type == BodyType::Dynamic ? desc.mass : 0.0f;
  btVector3 inertia(0, 0, 0);
  std::unique_ptr<btRigidBody> body;
  if (ok) {
    if (mass > 0) shape->calculateLocalInertia(mass, inertia);
    body = make_bullet_body(desc, *shape, mass, inertia, *t, e);
    const btVector3 inv = body->getInvInertiaDiagLocal();
    if (!std::isfinite(body->getInvMass()) || !finite(gl(inv)))
      ok = Status::error(
          "its mass and shape give an infinite inverse inertia (too light or too thin)");
  }
  if (!ok) {
    BodyAccess::mark_rejected(desc);
    report_rejected(s, e, ok, stats, c.world);
    return;
  }
  s.generation = e.generation;
  s.rejected = false;
  s.type = desc.type;
  s.group = desc.group;
  s.mask = desc.mask;
  s.body = std::move(body);
  s.force = s.torque = glm::vec3(0.0f);
  s.moving = false;
  s.last_position = t->translation();
  s.last_rotation = t->rotation();
  if (desc.type == BodyType::Static) {
    s.region = 0;
    m.add_to_region(s.body.get(), 0, s);
    for (std::uint32_t r = 1; r < m.regions.size(); ++r) {
      s.copies.push_back(make_bullet_body(desc, *shape, mass, inertia, *t, e));
      m.add_to_region(s.copies.back().get(), r, s);
    }
  } else {
    s.region = physics.region_of(t->translation());
    m.regions[s.region].joining.push_back(index);
  }
  BodyAccess::mark_created(desc, s.region);
  s.live = true;
  m.live.push_back(index);
  ++stats.created;
}

// Each region adds its new bodies in a job, in entity-index order.
void add_joining_bodies(Impl& m, core::StageContext& ctx) {
  ctx.parallel_for(static_cast<std::uint32_t>(m.regions.size()),
                   [&](std::uint32_t begin, std::uint32_t end) {
                     for (std::uint32_t r = begin; r < end; ++r)
                       for (std::uint32_t index : m.regions[r].joining)
                         m.add_to_region(m.slots[index].body.get(), r, m.slots[index]);
                   });
}

void create_new_bodies(Impl& m, const Physics& physics, Physics::Stats& stats,
                       core::StageContext& ctx, const Components& c) {
  list_new_bodies(m, c);
  for (Impl::Region& r : m.regions) r.joining.clear();
  for (std::uint32_t index : m.fresh) create_body(m, physics, stats, c, index);
  add_joining_bodies(m, ctx);
  stats.bodies = static_cast<std::uint32_t>(m.live.size());
}

// --- requests -----------------------------------------------------------------------------------

// A Transform a system changed: a kinematic body's target for this step, or a teleport of a
// dynamic one. Returns 1 when the new pose is unusable (dropped), else 0.
std::uint32_t take_moved_transform(Slot& s, const core::Transform& t) {
  if (t.translation() == s.last_position && t.rotation() == s.last_rotation) return 0;
  s.last_position = t.translation();
  s.last_rotation = t.rotation();
  if (!good_position(t.translation()) || !good_rotation(t.rotation())) return 1;
  btRigidBody& body = *s.body;
  const btTransform to(bt(glm::normalize(t.rotation())), bt(t.translation()));
  if (s.type == BodyType::Kinematic) {
    // Followed over the sub-steps (physics_step), so Bullet sees its true velocity.
    s.kinematic_from = body.getWorldTransform();
    s.kinematic_to = to;
    s.moving = true;
  } else {
    body.setWorldTransform(to);
    body.setInterpolationWorldTransform(to);
    body.activate(true);
  }
  return 0;
}

// Applies what systems asked of a dynamic body (kinematic ones ignore forces; the requests are
// cleared either way). Returns how many requests were unusable (dropped).
std::uint32_t take_requests(Slot& s, RigidBody& desc) {
  const BodyAccess::Requests q = BodyAccess::take_requests(desc);
  s.force = s.torque = glm::vec3(0.0f);
  if (s.type != BodyType::Dynamic) return 0;
  btRigidBody& body = *s.body;
  std::uint32_t bad = 0;
  bool wake = false;
  const auto take = [&](glm::vec3 v) {
    if (good_input(v)) return true;
    ++bad;
    return false;
  };
  if (q.set_linear && take(q.linear)) {
    body.setLinearVelocity(bt(q.linear));
    wake = true;
  }
  if (q.set_angular && take(q.angular)) {
    body.setAngularVelocity(bt(q.angular));
    wake = true;
  }
  if (q.impulse != glm::vec3(0.0f) && take(q.impulse)) {
    body.applyCentralImpulse(bt(q.impulse));
    wake = true;
  }
  if (q.angular_impulse != glm::vec3(0.0f) && take(q.angular_impulse)) {
    body.applyTorqueImpulse(bt(q.angular_impulse));
    wake = true;
  }
  if (q.force != glm::vec3(0.0f) && take(q.force)) s.force = q.force, wake = true;
  if (q.torque != glm::vec3(0.0f) && take(q.torque)) s.torque = q.torque, wake = true;
  if (wake) body.activate(true);
  return bad;
}

void report_bad_inputs(Physics::Stats& stats, std::uint32_t bad) {
  if (bad == 0) return;
  if (stats.bad_inputs == 0)
    SPINDLE_LOG_WARNING(Physics,
                        "%u forces, impulses, velocities or transforms were not finite or "
                        "beyond 1e9 and were dropped (counted in Physics::stats().bad_inputs; "
                        "logged once)",
                        bad);
  stats.bad_inputs += bad;
}

// In parallel over bodies (each touched by one chunk only): moved Transforms and requests.
// Static bodies keep their requests (they have no use for them).
void apply_requests(Impl& m, Physics::Stats& stats, core::StageContext& ctx, const Components& c) {
  std::atomic<std::uint32_t> bad_inputs{0};
  const auto count = static_cast<std::uint32_t>(m.live.size());
  ctx.parallel_for(count, [&](std::uint32_t begin, std::uint32_t end) {
    std::uint32_t bad = 0;
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t index = m.live[i];
      Slot& s = m.slots[index];
      s.moving = false;
      if (s.type == BodyType::Static) continue;
      bad += take_moved_transform(s, *c.transforms->get(index));
      bad += take_requests(s, *c.bodies.get(index));
    }
    if (bad > 0) bad_inputs.fetch_add(bad, std::memory_order_relaxed);
  });
  report_bad_inputs(stats, bad_inputs.load());
}

// --- the step's plan ----------------------------------------------------------------------------

// Teleported and kinematic bodies go to the region they are now in; then each region lists its
// bodies with forces (applied before every sub-step: Bullet clears them after each) and its
// moving kinematic bodies.
void plan_step(Impl& m, const Physics& physics, Physics::Stats& stats, core::StageContext& ctx) {
  stats.migrated += migrate_bodies(m, physics, ctx);
  for (Impl::Region& r : m.regions) r.forced.clear(), r.kinematic.clear();
  for (std::uint32_t index : m.live) {
    const Slot& s = m.slots[index];
    if (s.moving) m.regions[s.region].kinematic.push_back(index);
    if (s.type == BodyType::Dynamic && (s.force != glm::vec3(0.0f) || s.torque != glm::vec3(0.0f)))
      m.regions[s.region].forced.push_back(index);
  }
}

}  // namespace

void Physics::sync(core::StageContext& ctx) {
  Impl& m = *impl_;
  const Components c(ctx.world());
  remove_gone_bodies(m, stats_, ctx, c);
  create_new_bodies(m, *this, stats_, ctx, c);
  apply_requests(m, stats_, ctx, c);
  plan_step(m, *this, stats_, ctx);
}

}  // namespace spindle::physics
