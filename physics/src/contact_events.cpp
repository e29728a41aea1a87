#include "contact_events.h"

#include <algorithm>
#include <utility>

#include <btBulletDynamicsCommon.h>

#include <spindle/base/assert.h>
#include <spindle/physics/events.h>

#include "bullet_convert.h"

namespace spindle::physics {

namespace {

// Contact points closer than this count as touching (Bullet keeps points up to its breaking
// threshold, 0.02, apart).
constexpr float kTouching = 0.005f;

bool pair_less(const Contact& x, const Contact& y) {
  return x.pair < y.pair;
}
bool same_pair(const Contact& x, const Contact& y) {
  return x.pair == y.pair;
}

void emit_began(core::World& world, const Contact& c) {
  const ContactPair p = c.pair;
  if (c.trigger)
    world.emit(c.a_is_trigger ? TriggerEntered{p.a, p.b} : TriggerEntered{p.b, p.a});
  else
    world.emit(CollisionBegan{p.a, p.b, c.point, c.normal, c.impulse});
}

void emit_ended(core::World& world, const Contact& c) {
  const ContactPair p = c.pair;
  if (c.trigger)
    world.emit(c.a_is_trigger ? TriggerExited{p.a, p.b} : TriggerExited{p.b, p.a});
  else
    world.emit(CollisionEnded{p.a, p.b});
}

}  // namespace

void gather_contacts(btDispatcher& dispatcher, std::vector<Contact>& out) {
  out.clear();
  const int manifolds = dispatcher.getNumManifolds();
  for (int i = 0; i < manifolds; ++i) {
    const btPersistentManifold* pm = dispatcher.getManifoldByIndexInternal(i);
    const int points = pm->getNumContacts();
    int deepest = -1;
    float impulse = 0;
    for (int p = 0; p < points; ++p) {
      const btManifoldPoint& pt = pm->getContactPoint(p);
      if (pt.getDistance() > kTouching) continue;
      impulse += pt.getAppliedImpulse();
      if (deepest < 0 || pt.getDistance() < pm->getContactPoint(deepest).getDistance()) deepest = p;
    }
    if (deepest < 0) continue;
    Contact contact;
    const btCollisionObject* oa = pm->getBody0();
    const btCollisionObject* ob = pm->getBody1();
    const btManifoldPoint& pt = pm->getContactPoint(deepest);
    contact.point = gl(pt.getPositionWorldOnB());
    contact.normal = gl(pt.m_normalWorldOnB);  // from b towards a
    if (entity_of(oa).index > entity_of(ob).index) {
      std::swap(oa, ob);
      contact.point = gl(pt.getPositionWorldOnA());
      contact.normal = -contact.normal;
    }
    contact.pair = {entity_of(oa), entity_of(ob)};
    contact.impulse = impulse;
    const bool ta = oa->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE;
    const bool tb = ob->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE;
    contact.trigger = ta || tb;
    contact.a_is_trigger = ta;
    out.push_back(contact);
  }
}

std::uint32_t ContactEvents::emit(core::World& world) {
  std::sort(current_.begin(), current_.end(), pair_less);
  current_.erase(std::unique(current_.begin(), current_.end(), same_pair), current_.end());
  current_pairs_.resize(current_.size());
  for (std::size_t i = 0; i < current_.size(); ++i) current_pairs_[i] = current_[i].pair;
  began_.resize(current_.size());
  ended_.resize(previous_.size());
  std::uint32_t began = 0, ended = 0;
  const ContactDiffJob diff{.previous = previous_pairs_,
                            .current = current_pairs_,
                            .began = began_,
                            .ended = ended_,
                            .began_count = &began,
                            .ended_count = &ended};
  const bool ok = diff.run();
  SPINDLE_ASSERT(ok, "ContactEvents: the contact lists are sorted, unique and fit");
  for (std::uint32_t i = 0; i < began; ++i) emit_began(world, current_[began_[i]]);
  for (std::uint32_t i = 0; i < ended; ++i) emit_ended(world, previous_[ended_[i]]);
  std::swap(current_, previous_);
  std::swap(current_pairs_, previous_pairs_);
  return static_cast<std::uint32_t>(previous_.size());
}

}  // namespace spindle::physics
