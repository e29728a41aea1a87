// The world: entities, components, queries, resources, events and command buffers.
//
// Usage:
//
//   struct Position { float x, y; };
//   struct Velocity { float x, y; };
//   struct Hit { spindle::core::Entity who; };
//
//   spindle::core::World world(10'000);              // entity capacity, fixed at start-up
//   world.register_component<Position>("position");  // optional: add<T> registers on first use
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
//   for (const Hit& h : world.read_events<Hit>()) {} // in the next step (see Events)
//
// Storage: one sparse set per component type (a dense array of components, the dense array of
// their entity indices, and a sparse index from entity index to dense slot). Chosen over
// archetype chunks because adding and removing components is O(1) without moving the other
// components of the entity, queries iterate a dense array (the smallest of the queried types)
// in index ranges that become jobs, and the memory of each type is one allocation made when it
// is registered (capacity slots), so steady-state frames never allocate. Removal swaps the last
// element into the hole: dense order depends only on the order of operations, which is
// deterministic (commands are applied in a fixed order).
//
// Components are plain values. Components added through a CommandBuffer must be trivially
// copyable (they travel as bytes). The state hash reads each component's bytes, so components
// should not contain padding (or pointers); give a type `std::uint64_t spindle_hash(const T&)`
// (found by argument-dependent lookup) to hash it field by field instead.
//
// Events: an event (emit(), a command buffer's emit() once applied, a lifecycle event) is
// pending until the next delivery, and the Engine delivers at the start of every simulation step.
// An event emitted during step N (or after it, by a presentation stage or the game between
// frames) is therefore read by simulation stages in step N + 1 only, in emission order, however
// many steps a frame runs: to the simulation, a frame of k steps is k calls of Engine::step().
// Readers outside the simulation (presentation stages, the game's loop after frame()) read every
// event delivered during the current frame, which is what that frame's steps read, each event
// once; after a frame that ran no step, none (its events wait for the next step). One delivery
// point for both kinds of reader keeps what the game sees in step with the state the simulation
// reached by reacting to the same events. read_events() tells the two kinds apart by whether a
// step is running (begin_event_step() to end_event_step()).
//
// Memory: each registered type reserves capacity x (component + 8 bytes), booked under
// MemTag::Core in the memory statistics (memory.h).
//
// Threads: queries, get() and has() may run concurrently from jobs as long as no two jobs write
// the same component of the same entity (systems declare their access; the frame graph orders
// conflicting ones). create(), destroy(), add(), remove(), emit() and apply_commands() are
// structural: main thread only, with no job running over the world. Jobs record them in their
// participant's CommandBuffer instead. track_order()/refresh_order() are main-thread calls too
// (the Engine makes them: see aligned_prefix()).
//
// Determinism: apply_commands() sorts every recorded command by (origin, sequence): the origin is
// set by the code that splits work (the first item index of a chunk, and the stage order above
// it), the sequence counts commands since the origin was set. Commands therefore apply in the
// order a single thread processing the items in order would have recorded them, whatever the
// number of workers, the split or the job mode.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <spindle/base/assert.h>
#include <spindle/base/hash.h>
#include <spindle/base/memory.h>
#include <spindle/ecs/entity.h>

namespace spindle::jobs {
class JobSystem;
}

namespace spindle::core {

// Component, event and resource types share one id space, assigned on first use per process.
using TypeId = std::uint16_t;
inline constexpr TypeId kMaxTypes = 256;

namespace detail {
TypeId next_type_id();
}  // namespace detail

template <class T>
TypeId type_id() {
  static const TypeId id = detail::next_type_id();
  return id;
}

// Sent by apply_commands() (and World::create/destroy) when someone reads them.
struct EntityCreated {
  Entity entity;
};
struct EntityDestroyed {
  Entity entity;
};

class World;

// --- component storage -------------------------------------------------------------------------

class ComponentStorageBase {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  ComponentStorageBase(const char* name, TypeId id, std::uint32_t capacity)
      : name_(name), id_(id), sparse_(capacity, kNone) {
    dense_.reserve(capacity);
  }
  virtual ~ComponentStorageBase() = default;
  ComponentStorageBase(const ComponentStorageBase&) = delete;
  ComponentStorageBase& operator=(const ComponentStorageBase&) = delete;

  const char* name() const { return name_; }
  TypeId id() const { return id_; }
  bool has(std::uint32_t index) const { return index < sparse_.size() && sparse_[index] != kNone; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(dense_.size()); }
  // Entity index of each dense slot.
  std::span<const std::uint32_t> entities() const { return dense_; }
  std::uint32_t dense_index(std::uint32_t index) const { return sparse_[index]; }
  // Dense slot of every entity index (kNone where absent); capacity() entries.
  const std::uint32_t* sparse_data() const { return sparse_.data(); }
  // Lowest dense slot whose entity changed since World::refresh_order() last ran.
  std::uint32_t first_changed_slot() const { return first_changed_; }

  virtual bool remove(std::uint32_t index) = 0;
  virtual void add_bytes(std::uint32_t index, const void* bytes, std::size_t size) = 0;
  virtual void hash_slot(std::uint32_t dense, Hasher& hasher) const = 0;
  virtual void clear() = 0;

 protected:
  const char* name_;
  TypeId id_;
  friend class World;
  void changed_at(std::uint32_t slot) {
    first_changed_ = slot < first_changed_ ? slot : first_changed_;
  }

  std::vector<std::uint32_t> sparse_;
  std::vector<std::uint32_t> dense_;
  std::uint32_t first_changed_ = 0;
};

template <class T>
std::uint64_t hash_component(const T& value) {
  if constexpr (requires {
                  { spindle_hash(value) } -> std::convertible_to<std::uint64_t>;
                }) {
    return spindle_hash(value);
  } else {
    static_assert(std::is_trivially_copyable_v<T>,
                  "a component that is not trivially copyable needs spindle_hash(const T&)");
    Hasher h;
    h.add_bytes(&value, sizeof(T));
    return h.value();
  }
}

template <class T>
class ComponentStorage final : public ComponentStorageBase {
 public:
  ComponentStorage(const char* name, std::uint32_t capacity)
      : ComponentStorageBase(name, type_id<T>(), capacity) {
    data_.reserve(capacity);
    reserved_ = capacity * (sizeof(T) + 2 * sizeof(std::uint32_t));
    mem_book_reserve(MemTag::Core, reserved_);  // world memory shows in the memory statistics
  }
  ~ComponentStorage() override { mem_book_release(MemTag::Core, reserved_); }

  T* get(std::uint32_t index) { return has(index) ? &data_[sparse_[index]] : nullptr; }
  const T* get(std::uint32_t index) const { return has(index) ? &data_[sparse_[index]] : nullptr; }
  // Adds or replaces the component of entity slot `index`.
  template <class... A>
  T& emplace(std::uint32_t index, A&&... args) {
    SPINDLE_ASSERT(index < sparse_.size(), "component storage: entity index within capacity");
    if (has(index)) {
      T& slot = data_[sparse_[index]];
      slot = T{std::forward<A>(args)...};
      return slot;
    }
    sparse_[index] = static_cast<std::uint32_t>(dense_.size());
    changed_at(static_cast<std::uint32_t>(dense_.size()));
    dense_.push_back(index);
    data_.emplace_back(std::forward<A>(args)...);
    return data_.back();
  }
  bool remove(std::uint32_t index) override {
    if (!has(index)) return false;
    const std::uint32_t hole = sparse_[index];
    const std::uint32_t last = static_cast<std::uint32_t>(dense_.size() - 1);
    changed_at(hole);
    if (hole != last) {
      data_[hole] = std::move(data_[last]);
      dense_[hole] = dense_[last];
      sparse_[dense_[hole]] = hole;
    }
    data_.pop_back();
    dense_.pop_back();
    sparse_[index] = kNone;
    return true;
  }
  void add_bytes(std::uint32_t index, const void* bytes, std::size_t size) override {
    if constexpr (std::is_trivially_copyable_v<T>) {
      SPINDLE_ASSERT(size == sizeof(T), "command payload has the component's size");
      alignas(T) std::byte buffer[sizeof(T)];
      std::memcpy(buffer, bytes, sizeof(T));
      emplace(index, *std::launder(reinterpret_cast<T*>(buffer)));
    } else {
      (void)index, (void)bytes, (void)size;
      SPINDLE_ASSERT(false, "components added through command buffers are trivially copyable");
    }
  }
  void hash_slot(std::uint32_t dense, Hasher& hasher) const override {
    hasher.add(hash_component(data_[dense]));
  }
  void clear() override {
    changed_at(0);
    for (std::uint32_t index : dense_) sparse_[index] = kNone;
    dense_.clear();
    data_.clear();
  }

  std::span<T> data() { return data_; }
  std::span<const T> data() const { return data_; }

 private:
  std::vector<T> data_;
  std::size_t reserved_ = 0;
};

// --- events ------------------------------------------------------------------------------------

class EventQueueBase {
 public:
  virtual ~EventQueueBase() = default;
  virtual void begin_frame() = 0;
  virtual void deliver() = 0;
  virtual void push_bytes(const void* bytes, std::size_t size) = 0;
};

// emit() appends to the pending events; deliver() (at the start of every simulation step) moves
// them to the frame's delivered events, where step_events() is the last delivery alone and
// frame_events() every delivery since begin_frame(). Emitting never touches what readers hold.
template <class T>
class EventQueue final : public EventQueueBase {
 public:
  explicit EventQueue(std::size_t reserve) {
    delivered_.reserve(reserve);
    pending_.reserve(reserve);
  }
  void emit(const T& event) { pending_.push_back(event); }
  std::span<const T> step_events() const {
    return std::span<const T>(delivered_).subspan(step_begin_);
  }
  std::span<const T> frame_events() const { return delivered_; }
  std::size_t pending() const { return pending_.size(); }
  void begin_frame() override {
    delivered_.clear();
    step_begin_ = 0;
  }
  void deliver() override {
    step_begin_ = delivered_.size();
    delivered_.insert(delivered_.end(), pending_.begin(), pending_.end());
    pending_.clear();
  }
  void push_bytes(const void* bytes, std::size_t size) override {
    if constexpr (std::is_trivially_copyable_v<T>) {
      SPINDLE_ASSERT(size == sizeof(T), "event payload has the event's size");
      alignas(T) std::byte buffer[sizeof(T)];
      std::memcpy(buffer, bytes, sizeof(T));
      pending_.push_back(*std::launder(reinterpret_cast<T*>(buffer)));
    } else {
      (void)bytes, (void)size;
      SPINDLE_ASSERT(false, "events emitted through command buffers are trivially copyable");
    }
  }

 private:
  std::vector<T> delivered_;  // since begin_frame(), in delivery order
  std::vector<T> pending_;
  std::size_t step_begin_ = 0;  // first of delivered_ in the last delivery
};

// --- command buffers ---------------------------------------------------------------------------

class CommandBuffer {
 public:
  enum class Op : std::uint8_t { Create, Destroy, Add, AddToCreated, Remove, Emit };

  struct Record {
    std::uint64_t origin;
    std::uint32_t sequence;
    Op op;
    TypeId type;
    Entity entity;
    std::uint32_t offset;  // payload bytes
    std::uint32_t size;
  };

  explicit CommandBuffer(std::size_t reserve_records = 1024, std::size_t reserve_bytes = 64 << 10) {
    records_.reserve(reserve_records);
    payload_.reserve(reserve_bytes);
  }

  // Commands recorded from now on sort after those of smaller origins. The engine sets it per
  // chunk (stage order, segment and chunk flag in the high bits, first item index in the low 32
  // bits; see StageContext::parallel_for).
  void set_origin(std::uint64_t origin) {
    origin_ = origin;
    sequence_ = 0;
  }
  std::uint64_t origin() const { return origin_; }
  // Where recording stands, to be put back after running someone else's work on this thread (a
  // waiting thread helps run other jobs, which set origins of their own).
  struct Mark {
    std::uint64_t origin;
    std::uint32_t sequence;
  };
  Mark mark() const { return {origin_, sequence_}; }
  void restore(Mark m) {
    origin_ = m.origin;
    sequence_ = m.sequence;
  }

  void destroy(Entity entity) { record(Op::Destroy, 0, entity, nullptr, 0); }
  template <class T>
  void add(Entity entity, const T& component) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "command-buffer components are trivially copyable");
    record(Op::Add, type_id<T>(), entity, &component, sizeof(T));
  }
  template <class T>
  void remove(Entity entity) {
    record(Op::Remove, type_id<T>(), entity, nullptr, 0);
  }
  // Creates an entity with these components at the sync point.
  template <class... T>
  void spawn(const T&... components) {
    record(Op::Create, 0, Entity::null(), nullptr, 0);
    (record_add_to_created(components), ...);
  }
  template <class T>
  void emit(const T& event) {
    static_assert(std::is_trivially_copyable_v<T>, "command-buffer events are trivially copyable");
    record(Op::Emit, type_id<T>(), Entity::null(), &event, sizeof(T));
  }

  std::span<const Record> records() const { return records_; }
  const std::byte* payload(const Record& r) const { return payload_.data() + r.offset; }
  bool empty() const { return records_.empty(); }
  void clear() {
    records_.clear();
    payload_.clear();
    origin_ = 0;
    sequence_ = 0;
  }

 private:
  template <class T>
  void record_add_to_created(const T& component) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "command-buffer components are trivially copyable");
    record(Op::AddToCreated, type_id<T>(), Entity::null(), &component, sizeof(T));
  }
  void record(Op op, TypeId type, Entity entity, const void* bytes, std::size_t size) {
    const std::uint32_t offset = static_cast<std::uint32_t>(payload_.size());
    if (size > 0) {
      payload_.resize(payload_.size() + size);
      std::memcpy(payload_.data() + offset, bytes, size);
    }
    records_.push_back(
        Record{origin_, sequence_++, op, type, entity, offset, static_cast<std::uint32_t>(size)});
  }

  std::vector<Record> records_;
  std::vector<std::byte> payload_;
  std::uint64_t origin_ = 0;
  std::uint32_t sequence_ = 0;
};

// One CommandBuffer per job-system participant, plus kExternalSlots for threads that are not
// participants (oneTBB's workers in the tbb reference mode), each of which takes a slot of its
// own on first use.
class CommandBuffers {
 public:
  static constexpr std::uint32_t kExternalSlots = 32;

  explicit CommandBuffers(std::uint32_t participants = 1);
  void resize(std::uint32_t participants);  // only between frames
  // The calling thread's slot: its participant index, or an external slot of its own.
  std::uint32_t slot(const jobs::JobSystem& jobs);
  CommandBuffer& local(const jobs::JobSystem& jobs) { return buffers_[slot(jobs)]; }
  CommandBuffer& at(std::uint32_t slot) { return buffers_[slot]; }
  std::uint32_t participants() const { return participants_; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(buffers_.size()); }

 private:
  friend class World;
  std::uint32_t participants_ = 0;
  std::atomic<std::uint32_t> next_external_{0};
  std::uint64_t generation_ = 0;  // tells thread-local slot caches of another instance apart
  std::vector<CommandBuffer> buffers_;
  struct Merged {
    const CommandBuffer::Record* record;
    const CommandBuffer* buffer;
  };
  std::vector<Merged> merged_;
};

// --- queries -----------------------------------------------------------------------------------

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

// --- the world ---------------------------------------------------------------------------------

class World {
 public:
  explicit World(std::uint32_t capacity = 65536);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Entities. create() returns Entity::null() when the capacity is reached.
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
  template <class T>
  ComponentStorage<T>& register_component(const char* name = "component");
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
  template <class... Ts>
  Query<Ts...> query() {
    return Query<Ts...>(*this);
  }

  // Resources: one value per type, owned by the world.
  template <class T, class... A>
  T& set_resource(A&&... args);
  template <class T>
  T* resource() {
    auto& slot = resources_[type_id<T>()];
    return slot ? static_cast<T*>(slot->value) : nullptr;
  }

  // Events (see "Events" above). `reserve` events fit both pending and delivered during one
  // frame (all its steps) without allocating; beyond it a buffer grows, once, on the heap.
  template <class T>
  EventQueue<T>& events(std::size_t reserve = 1024);
  template <class T>
  void emit(const T& event) {
    events<T>().emit(event);
  }
  // Inside a simulation step: the events delivered at its start. Elsewhere: every event
  // delivered since begin_event_frame(). Valid until the next delivery or frame.
  template <class T>
  std::span<const T> read_events() {
    auto* q = static_cast<EventQueue<T>*>(events_[type_id<T>()].get());
    if (q == nullptr) return {};
    return events_in_step_ ? q->step_events() : q->frame_events();
  }
  // The Engine's calls: begin_event_frame() once per frame, then begin_event_step() and
  // end_event_step() around each simulation step.
  void begin_event_frame();  // forgets the previous frame's deliveries
  void begin_event_step();   // delivers what is pending; read_events() returns only that
  void end_event_step();     // read_events() returns the frame's deliveries again
  // For a World used without an Engine: a frame of one step, ready for reading.
  void flush_events();

  // Command buffers; apply_commands() applies every participant's records in the deterministic
  // order described above and clears them.
  CommandBuffers& commands() { return commands_; }
  void apply_commands();
  struct CommandStats {
    std::uint64_t applied = 0;
    std::uint64_t stale = 0;          // commands on entities destroyed before they applied
    std::uint64_t create_failed = 0;  // spawns that found the world full
  };
  const CommandStats& command_stats() const { return command_stats_; }

  // A hash of every live entity and every component value, in entity-index order and
  // component-registration order: identical for identical states, whatever the history of
  // dense-array order.
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
  // The value's address is kept beside the owner, so a lookup (often once per entity in a
  // system) is a load, not a virtual call.
  struct ResourceBase {
    virtual ~ResourceBase() = default;
    void* value = nullptr;
  };
  template <class T>
  struct Resource final : ResourceBase {
    template <class... A>
    explicit Resource(A&&... args) : held(std::forward<A>(args)...) {
      value = &held;
    }
    T held;
  };

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
  std::array<std::unique_ptr<ResourceBase>, kMaxTypes> resources_{};
  std::array<std::unique_ptr<EventQueueBase>, kMaxTypes> events_{};
  std::vector<EventQueueBase*> event_list_;
  bool events_in_step_ = false;
  CommandBuffers commands_;
  CommandStats command_stats_;
};

// --- templates ---------------------------------------------------------------------------------

template <class T>
ComponentStorage<T>& World::register_component(const char* name) {
  auto& slot = storages_[type_id<T>()];
  if (!slot) {
    slot = std::make_unique<ComponentStorage<T>>(name, capacity());
    registered_.push_back(slot.get());
  }
  return static_cast<ComponentStorage<T>&>(*slot);
}

template <class T, class... A>
T& World::set_resource(A&&... args) {
  auto& slot = resources_[type_id<T>()];
  slot = std::make_unique<Resource<T>>(std::forward<A>(args)...);
  return *static_cast<T*>(slot->value);
}

template <class T>
EventQueue<T>& World::events(std::size_t reserve) {
  auto& slot = events_[type_id<T>()];
  if (!slot) {
    slot = std::make_unique<EventQueue<T>>(reserve);
    event_list_.push_back(slot.get());
  }
  return static_cast<EventQueue<T>&>(*slot);
}

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
