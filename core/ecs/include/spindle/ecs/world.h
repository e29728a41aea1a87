// The world: entities and their components, with queries, resources, events and command buffers.
// Including this header brings in the whole ECS (type_id.h, storage.h, events.h, commands.h,
// resources.h, query.h).
//
// Usage:
//
//   struct Position { float x, y; };
//   struct Velocity { float x, y; };
//   struct Hit { spindle::core::Entity who; };
//
//   spindle::core::World world(10'000);              // entity capacity, fixed at start-up
//   world.register_component<Position>("position");  // optional: add<T> registers on first use
//   world.register_component<Camera>("camera", 4);   // room for 4 up front, not for 10,000
//   spindle::core::Entity ship = world.create();
//   world.add<Position>(ship, Position{0, 0});
//   world.add<Velocity>(ship, Velocity{1, 0});
//   world.query<const Velocity, Position>().each(
//       [](spindle::core::Entity, const Velocity& v, Position& p) { p.x += v.x; });
//   world.get<Position>(ship);                       // nullptr once `ship` is destroyed
//
//   // Inside parallel code, structural changes and events are recorded, not applied:
//   spindle::core::CommandBuffer& cmd = world.commands().local(jobs);
//   cmd.spawn(Position{1, 2}, Velocity{0, 1});
//   cmd.destroy(ship);
//   cmd.emit(Hit{ship});
//   world.apply_commands();                          // at the sync point, one thread
//   for (const Hit& h : world.read_events<Hit>()) {} // in the next step (events.h)
//
// Threads: queries, get() and has() may run concurrently from jobs as long as no two jobs write
// the same component of the same entity (stages declare their access; the frame graph orders
// conflicting ones). create(), destroy(), add(), remove(), emit(), set_resource() and
// apply_commands() are structural: main thread only, with no job running over the world; jobs
// record them in their CommandBuffer instead.
//
// Memory: each registered type reserves capacity x 4 bytes (the entity -> slot table) and
// reserve x (component + 4 bytes) up front, reserve being the world's capacity unless
// register_component() is told fewer; booked under MemTag::Core (memory.h). Steady-state frames
// allocate nothing; adding more components of a type than it reserved grows its storage (a heap
// allocation, and spans of its data() taken before it are stale). The design (storage choice,
// event delivery, threads, determinism) is explained in docs/ecs.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <spindle/ecs/commands.h>
#include <spindle/ecs/entity.h>
#include <spindle/ecs/events.h>
#include <spindle/ecs/resources.h>
#include <spindle/ecs/storage.h>
#include <spindle/ecs/type_id.h>

namespace spindle::core {

template <class... Ts>
class Query;
class BudgetArena;

class World {
 public:
  explicit World(std::uint32_t capacity = 65536);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Entities. create() returns Entity::null() when the capacity is reached (the world's panic
  // mode: the spawn is refused; see set_panic_arena()).
  Entity create();
  bool destroy(Entity entity);  // false for a stale handle; removes every component
  bool alive(Entity entity) const { return entities_.alive(entity); }
  std::uint32_t entity_count() const { return entities_.size(); }
  std::uint32_t capacity() const { return entities_.capacity(); }
  // The live handle of slot `index`, or Entity::null().
  Entity entity_at(std::uint32_t index) const { return entities_.at(index); }
  const std::uint32_t* entity_generations() const { return entities_.generations(); }
  // Destroys every entity (resources and registrations stay).
  void clear();

  // Components.
  // `reserve`: components of this type that fit without growing (0: the world's capacity). A
  // type registered already keeps its storage.
  template <class T>
  ComponentStorage<T>& register_component(const char* name = "component",
                                          std::uint32_t reserve = 0);
  template <class T>
  ComponentStorage<T>* storage() {
    return static_cast<ComponentStorage<T>*>(storages_[type_id<T>()].get());
  }
  template <class T>
  const ComponentStorage<T>* storage() const {
    return static_cast<const ComponentStorage<T>*>(storages_[type_id<T>()].get());
  }
  // Adds (or replaces) a component; nullptr for a stale handle.
  template <class T, class... A>
  T* add(Entity entity, A&&... args) {
    if (!alive(entity)) return nullptr;
    ComponentStorage<T>* s = storage<T>();
    if (s == nullptr) s = &register_component<T>();
    return &s->emplace(entity.index, std::forward<A>(args)...);
  }
  template <class T>
  bool remove(Entity entity) {
    ComponentStorage<T>* s = storage<T>();
    return s != nullptr && alive(entity) && s->remove(entity.index);
  }
  template <class T>
  T* get(Entity entity) {
    ComponentStorage<T>* s = storage<T>();
    return s != nullptr && alive(entity) ? s->get(entity.index) : nullptr;
  }
  template <class T>
  const T* get(Entity entity) const {
    const ComponentStorage<T>* s = storage<T>();
    return s != nullptr && alive(entity) ? s->get(entity.index) : nullptr;
  }
  template <class T>
  bool has(Entity entity) const {
    const ComponentStorage<T>* s = storage<T>();
    return s != nullptr && alive(entity) && s->has(entity.index);
  }
  // query.h.
  template <class... Ts>
  Query<Ts...> query() {
    return Query<Ts...>(*this);
  }

  // Resources: one value per type, owned by the world (resources.h). A resource whose type has
  // `spindle_hash(const T&)` (found by argument-dependent lookup) joins state_hash() when set;
  // hash_resource<T>() makes one join by its bytes when they are all its value (integers, no
  // padding: std::has_unique_object_representations; floats or padding need spindle_hash).
  // What a replay must reproduce belongs there: the score, the lives, the wave. Hashed resources
  // are hashed in the order they joined, after the components; one not set (yet) as absent.
  template <class T, class... A>
  T& set_resource(A&&... args) {
    T& value = resources_.set<T>(std::forward<A>(args)...);
    if constexpr (requires(const T& v) {
                    { spindle_hash(v) } -> std::convertible_to<std::uint64_t>;
                  }) {
      hash_resource<T>();
    }
    return value;
  }
  template <class T>
  void hash_resource() {
    static_assert(
        requires(const T& v) {
          { spindle_hash(v) } -> std::convertible_to<std::uint64_t>;
        } || std::has_unique_object_representations_v<T>,
        "hash_resource<T>: T has padding or floats, whose bytes are not its value; give "
        "it std::uint64_t spindle_hash(const T&)");
    const TypeId id = type_id<T>();
    for (const HashedResource& r : hashed_resources_)
      if (r.id == id) return;
    hashed_resources_.push_back(
        {id, [](const void* v) { return hash_component(*static_cast<const T*>(v)); }});
  }
  template <class T>
  T* resource() {
    return resources_.get<T>();
  }

  // Events (events.h). `reserve` events fit both pending and delivered during one frame (all its
  // steps) without allocating; beyond it a buffer grows, once, on the heap.
  template <class T>
  EventQueue<T>& events(std::size_t reserve = 1024) {
    return events_.queue<T>(reserve);
  }
  template <class T>
  void emit(const T& event) {
    events<T>().emit(event);
  }
  // Inside a simulation step: the events delivered at its start. Elsewhere: every event
  // delivered since begin_event_frame(). Valid until the next delivery or frame.
  template <class T>
  std::span<const T> read_events() {
    return events_.read<T>();
  }
  // The Engine's calls: begin_event_frame() once per frame, then begin_event_step() and
  // end_event_step() around each simulation step.
  // begin_event_frame() forgets the previous frame's deliveries; begin_event_step() delivers
  // what is pending, which read_events() then returns alone until end_event_step().
  void begin_event_frame() { events_.begin_frame(); }
  void begin_event_step() { events_.begin_step(); }
  void end_event_step() { events_.end_step(); }
  // For a World used without an Engine: a frame of one step, ready for reading.
  void flush_events();

  // Command buffers (commands.h); apply_commands() applies every participant's records in their
  // deterministic order and clears them.
  CommandBuffers& commands() { return commands_; }
  void apply_commands();
  struct CommandStats {
    std::uint64_t applied = 0;
    std::uint64_t stale = 0;          // commands on entities destroyed before they applied
    std::uint64_t create_failed = 0;  // spawns that found the world full
  };
  const CommandStats& command_stats() const { return command_stats_; }
  // In a memory budget (the engine sets its "ecs" arena): a spawn that finds the world full is
  // that arena's panic(), counted in its panics() and logged once with its panic mode, instead of
  // the world's own warning. nullptr: the warning.
  void set_panic_arena(BudgetArena* arena) { panic_arena_ = arena; }

  // A hash of every live entity and every component value, in entity-index order and
  // component-registration order, then of the hashed resources (set_resource()): identical for
  // identical states, whatever the history of dense-array order.
  std::uint64_t state_hash() const;

  std::span<ComponentStorageBase* const> registered() const { return registered_; }

  // Dense-order alignment of storage pairs that queries use together (the engine tracks the
  // pairs of every per-entity system). refresh_order() (main thread, no job running over the
  // world) brings each tracked pair's common prefix up to date, scanning only from the first
  // slot that changed; queries then skip their own comparison over that prefix.
  void track_order(TypeId a, TypeId b);
  void refresh_order();
  // Length of the known common dense prefix of two storages, or -1 when the pair is not tracked
  // or either storage changed since the last refresh_order().
  std::int64_t aligned_prefix(const ComponentStorageBase* a, const ComponentStorageBase* b) const {
    if (a->first_changed_slot() != ~0u || b->first_changed_slot() != ~0u) return -1;
    for (const OrderPair& p : order_pairs_) {
      if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return p.prefix;
    }
    return -1;
  }

 private:
  void emit_lifecycle(Entity entity, bool created);

  struct OrderPair {
    const ComponentStorageBase* a;
    const ComponentStorageBase* b;
    std::uint32_t prefix;
  };
  std::vector<OrderPair> order_pairs_;

  EntityPool entities_;
  std::array<std::unique_ptr<ComponentStorageBase>, kMaxTypes> storages_{};
  std::vector<ComponentStorageBase*> registered_;
  Resources resources_;
  struct HashedResource {
    TypeId id;
    std::uint64_t (*hash)(const void*);
  };
  std::vector<HashedResource> hashed_resources_;  // in the order they joined the state hash
  EventQueues events_;
  CommandBuffers commands_;
  CommandStats command_stats_;
  BudgetArena* panic_arena_ = nullptr;
};

template <class T>
ComponentStorage<T>& World::register_component(const char* name, std::uint32_t reserve) {
  auto& slot = storages_[type_id<T>()];
  if (!slot) {
    const std::uint32_t room = reserve == 0 || reserve > capacity() ? capacity() : reserve;
    slot = std::make_unique<ComponentStorage<T>>(name, capacity(), room);
    registered_.push_back(slot.get());
  }
  return static_cast<ComponentStorage<T>&>(*slot);
}

}  // namespace spindle::core

// Last: Query's members use the World defined above, and world.query<...>() needs Query whole.
#include <spindle/ecs/query.h>
