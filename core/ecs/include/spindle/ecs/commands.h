// Command buffers: structural changes (spawn, destroy, add, remove) and events recorded by jobs
// and applied later, on one thread, in a deterministic order.
//
// Usage:
//
//   // inside a stage or system (ctx.commands() is the calling participant's buffer):
//   spindle::core::CommandBuffer& cmd = ctx.commands();   // or world.commands().local(jobs)
//   cmd.spawn(Position{1, 2}, Velocity{0, 1});            // a new entity with these components
//   cmd.add(ship, Shield{3});
//   cmd.remove<Shield>(ship);
//   cmd.destroy(rock);
//   cmd.emit(Hit{ship});
//   world.apply_commands();  // the Engine does this at every step's sync point
//
// Components and events recorded here travel as bytes, so they must be trivially copyable.
// apply_commands() sorts the records by (origin, sequence), which the Engine sets per stage and
// chunk, so they apply in the order one thread walking the items in order would have recorded
// them, whatever the workers or the job mode (docs/ecs.md, Determinism). A command whose entity
// was destroyed first is skipped and counted (World::command_stats()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include <spindle/ecs/entity.h>
#include <spindle/ecs/type_id.h>

namespace spindle::jobs {
class JobSystem;
}

namespace spindle::core {

class World;

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

  // What each participant's buffer reserves up front: the handheld profile's fit its budget
  // (a frame that records more grows the buffer from the heap).
#if SPINDLE_HANDHELD
  static constexpr std::size_t kDefaultRecords = 128;
  static constexpr std::size_t kDefaultBytes = 8 << 10;
#else
  static constexpr std::size_t kDefaultRecords = 1024;
  static constexpr std::size_t kDefaultBytes = 64 << 10;
#endif

  explicit CommandBuffer(std::size_t reserve_records = kDefaultRecords,
                         std::size_t reserve_bytes = kDefaultBytes) {
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
  std::uint64_t origin() const {
    return origin_;
  }
  // Where recording stands, to be put back after running someone else's work on this thread (a
  // waiting thread helps run other jobs, which set origins of their own).
  struct Mark {
    std::uint64_t origin;
    std::uint32_t sequence;
  };
  Mark mark() const {
    return {origin_, sequence_};
  }
  void restore(Mark m) {
    origin_ = m.origin;
    sequence_ = m.sequence;
  }

  void destroy(Entity entity) {
    record(Op::Destroy, 0, entity, nullptr, 0);
  }
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

  std::span<const Record> records() const {
    return records_;
  }
  const std::byte* payload(const Record& r) const {
    return payload_.data() + r.offset;
  }
  bool empty() const {
    return records_.empty();
  }
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
  // Slots of threads outside the job system (the tbb reference mode's); none without threads.
  static constexpr std::uint32_t kExternalSlots = SPINDLE_THREADS ? 32 : 1;

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

}  // namespace spindle::core
