// Contact events: the touching pairs physics_step reads from each region's Bullet world, and
// ContactEvents, which turns each step's pairs and the last step's into CollisionBegan /
// CollisionEnded and TriggerEntered / TriggerExited (through ContactDiffJob).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <glm/glm.hpp>

#include <spindle/ecs/world.h>
#include <spindle/physics/contact_diff_job.h>

class btDispatcher;

namespace spindle::physics {

// One touching pair as the step found it: who (a.index < b.index) and what the events carry.
struct Contact {
  ContactPair pair;
  glm::vec3 point{0.0f};   // the deepest contact point
  glm::vec3 normal{0.0f};  // from b towards a
  float impulse = 0;       // summed over the touching points
  bool trigger = false;    // one of them is a trigger (a is the trigger when it is)
  bool a_is_trigger = false;
};

// Appends the pairs of one Bullet world's manifolds that touch (a contact point within
// kTouching), in manifold order; `out` is cleared first.
void gather_contacts(btDispatcher& dispatcher, std::vector<Contact>& out);

class ContactEvents {
 public:
  // Starts this step's list of touching pairs.
  void clear() { current_.clear(); }
  // Adds one region's pairs (a pair may come from more than one region).
  void add(std::span<const Contact> contacts) {
    current_.insert(current_.end(), contacts.begin(), contacts.end());
  }
  // Sorts this step's pairs (dropping duplicates), diffs them against the last step's, emits
  // the events, and keeps this step's pairs as the last step's. Returns how many pairs touch.
  std::uint32_t emit(core::World& world);
  // The pairs touching after the last step, ascending.
  std::span<const ContactPair> touching() const { return previous_pairs_; }

 private:
  std::vector<Contact> current_, previous_;
  std::vector<ContactPair> current_pairs_, previous_pairs_;  // the same pairs, for the diff
  std::vector<std::uint32_t> began_, ended_;                 // the diff's output
};

}  // namespace spindle::physics
