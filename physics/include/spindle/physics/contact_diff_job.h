// ContactDiffJob: which touching pairs began and which ended between two steps. physics_step
// runs it on the pairs it read from Bullet's contact manifolds to emit CollisionBegan /
// CollisionEnded and TriggerEntered / TriggerExited; it needs no Bullet, so tests feed it exact
// lists.
//
// Usage:
//
//   // previous, current: the last step's and this step's touching pairs, strictly ascending.
//   std::vector<std::uint32_t> began(current.size()), ended(previous.size());
//   std::uint32_t began_count = 0, ended_count = 0;
//   spindle::physics::ContactDiffJob job{.previous = previous, .current = current,
//                                        .began = began, .ended = ended,
//                                        .began_count = &began_count,
//                                        .ended_count = &ended_count};
//   if (!job.run()) return;  // unsorted or duplicated input, or an output too small
//   for (std::uint32_t i = 0; i < began_count; ++i) on_began(current[began[i]]);
//   for (std::uint32_t i = 0; i < ended_count; ++i) on_ended(previous[ended[i]]);
//
// One merge of the two sorted lists, O(previous + current), no allocation. Pairs are compared
// whole (entity index and generation of both bodies), so a pair whose entity was destroyed and
// whose index was reused by a new body in the same step ends, and the new pair begins.
#pragma once

#include <cstdint>
#include <span>

#include <spindle/ecs/entity.h>

namespace spindle::physics {

// Two touching bodies' entities; physics_step orders them so that a.index < b.index.
struct ContactPair {
  core::Entity a, b;

  friend bool operator==(ContactPair, ContactPair) = default;
  // By a.index, a.generation, b.index, b.generation: the order the events come in.
  friend constexpr bool operator<(ContactPair x, ContactPair y) {
    if (x.a.index != y.a.index) return x.a.index < y.a.index;
    if (x.a.generation != y.a.generation) return x.a.generation < y.a.generation;
    if (x.b.index != y.b.index) return x.b.index < y.b.index;
    return x.b.generation < y.b.generation;
  }
};

struct ContactDiffJob {
  // The last step's touching pairs, strictly ascending (sorted, no duplicates).
  std::span<const ContactPair> previous{};
  // This step's touching pairs, strictly ascending.
  std::span<const ContactPair> current{};
  // Written by run(): indices into `current` of the pairs that are not in `previous`
  // (ascending). Room for current.size() indices.
  std::span<std::uint32_t> began{};
  // Written by run(): indices into `previous` of the pairs that are not in `current`
  // (ascending). Room for previous.size() indices.
  std::span<std::uint32_t> ended{};
  // Written by run(): how many indices it wrote to `began` and to `ended`.
  std::uint32_t* began_count = nullptr;
  std::uint32_t* ended_count = nullptr;

  // False when an input is not strictly ascending or longer than 2^32 - 1 pairs, an output
  // span is shorter than its input, or a count is missing.
  bool validate() const;
  // Validates, then diffs; writes nothing when validate() fails.
  bool run() const;
};

}  // namespace spindle::physics
