// Queries: the entities that have every one of a set of components, with those components.
//
// Usage:
//
//   auto movers = world.query<const Velocity, Position>();  // const: read-only access
//   movers.each([](spindle::core::Entity, const Velocity& v, Position& p) { p.x += v.x; });
//   // split over jobs: disjoint ranges of [0, size()) may run concurrently
//   ctx.parallel_for(movers.size(), [&](std::uint32_t begin, std::uint32_t end) {
//     movers.each_range(begin, end, [](spindle::core::Entity, const Velocity& v, Position& p) {});
//   });
//
// A query walks the dense array of its smallest storage and finds the others through their
// sparse index; over a range where every storage holds the same entities in the same order (the
// common case: components added together) it walks plain arrays instead. A type that was never
// registered makes the query empty: building a query never changes the world, so jobs may.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <spindle/ecs/entity.h>
#include <spindle/ecs/storage.h>
#include <spindle/ecs/world.h>

namespace spindle::core {

// Entities that have every component in Ts (a const T is read-only access). Iterates the dense
// array of the smallest storage; the others are looked up through their sparse index.
template <class... Ts>
class Query {
 public:
  explicit Query(World& world);

  // Upper bound of the matches: the driving storage's size. Ranges index [0, size()).
  std::uint32_t size() const { return driver_ == nullptr ? 0 : driver_->size(); }
  bool empty() const { return size() == 0; }

  // fn(Entity, Ts&...) for every match, in dense order of the driving storage.
  template <class F>
  void each(F&& fn) const {
    each_range(0, size(), fn);
  }
  // The same over driving slots [begin, end): disjoint ranges may run concurrently.
  template <class F>
  void each_range(std::uint32_t begin, std::uint32_t end, F&& fn) const {
    if (driver_ != nullptr) dispatch(begin, end, fn, std::index_sequence_for<Ts...>{});
  }
  // Number of entities that match.
  std::uint32_t count() const {
    std::uint32_t n = 0;
    each([&](Entity, Ts&...) { ++n; });
    return n;
  }

 private:
  template <class F, std::size_t... I>
  void dispatch(std::uint32_t begin, std::uint32_t end, F& fn, std::index_sequence<I...>) const {
    // The driving storage's position becomes a template argument, so the loop body has no
    // per-entity test of which storage drives.
    ((driver_index_ == I ? (run<I>(begin, end, fn, std::index_sequence<I...>{}), 0) : 0), ...);
  }
  template <std::size_t D, class F, std::size_t... I>
  void run(std::uint32_t begin, std::uint32_t end, F& fn, std::index_sequence<I...>) const;

  World* world_;
  std::tuple<ComponentStorage<std::remove_const_t<Ts>>*...> storages_;
  const ComponentStorageBase* driver_ = nullptr;
  std::size_t driver_index_ = 0;
};

template <class... Ts>
Query<Ts...>::Query(World& world)
    : world_(&world), storages_(world.storage<std::remove_const_t<Ts>>()...) {
  // A type never registered has no entities: the query is empty. (Looking up, not registering,
  // keeps queries built inside jobs from changing the world.)
  const bool all = std::apply([](auto*... s) { return ((s != nullptr) && ...); }, storages_);
  if (!all) return;
  std::size_t k = 0;
  std::apply(
      [&](auto*... s) {
        (((driver_ == nullptr || s->size() < driver_->size()) ? (driver_ = s, driver_index_ = k++)
                                                              : k++),
         ...);
      },
      storages_);
}

template <class... Ts>
template <std::size_t D, class F, std::size_t... I>
void Query<Ts...>::run(std::uint32_t begin, std::uint32_t end, F& fn,
                       std::index_sequence<I...>) const {
  end = std::min(end, driver_->size());
  const std::uint32_t* dense = driver_->entities().data();
  const std::uint32_t* generations = world_->entity_generations();
  // Raw pointers hoisted out of the loop: the dense arrays, and each storage's sparse index.
  const auto data = std::make_tuple(std::get<I>(storages_)->data().data()...);
  const auto sparse = std::make_tuple(std::get<I>(storages_)->sparse_data()...);
  constexpr std::uint32_t kNone = ComponentStorageBase::kNone;
  if (begin >= end) return;
  // When every storage holds the same entities in the same dense order over this range (the
  // common case: components added together), skip the sparse lookups: one memcmp per storage
  // buys a loop over plain arrays that the compiler can vectorise.
  // A tracked pair's known prefix answers without reading (World::refresh_order()).
  auto same_order = [&](const ComponentStorageBase* other) {
    if (other->size() < end) return false;
    const std::int64_t known = world_->aligned_prefix(driver_, other);
    if (known >= 0 && end <= static_cast<std::uint64_t>(known)) return true;
    return std::memcmp(other->entities().data() + begin, dense + begin,
                       std::size_t{end - begin} * sizeof(std::uint32_t)) == 0;
  };
  const bool aligned = ((I == D || same_order(std::get<I>(storages_))) && ...);
  if (aligned) {
    for (std::uint32_t i = begin; i < end; ++i) {
      fn(Entity{dense[i], generations[dense[i]]}, std::get<I>(data)[i]...);
    }
    return;
  }
  for (std::uint32_t i = begin; i < end; ++i) {
    const std::uint32_t index = dense[i];
    // Slot of each component: i for the driver, the sparse index for the others.
    const std::array<std::uint32_t, sizeof...(Ts)> slot{
        (I == D ? i : std::get<I>(sparse)[index])...};
    if (((I != D && slot[I] == kNone) || ...)) continue;
    // An entity with components is live, so its handle is (index, current generation).
    fn(Entity{index, generations[index]}, std::get<I>(data)[slot[I]]...);
  }
}

}  // namespace spindle::core
