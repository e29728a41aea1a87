// Events: typed queues that carry what happened in one simulation step to the readers of the
// next, owned by the World.
//
// Usage (through the World):
//
//   struct Hit { spindle::core::Entity who; };
//   world.events<Hit>();                               // declare it (room for 1024 per frame)
//   world.emit(Hit{ship});                             // main thread; from a job: cmd.emit()
//   for (const Hit& h : world.read_events<Hit>()) {}   // in a stage of the next step
//
// The rule: an event emitted during step N (or between steps) is read by simulation stages in
// step N + 1 only, in emission order, however many steps a frame runs. Readers outside the
// simulation (presentation stages, the game after frame()) read every event the frame's steps
// read, each once. Why one delivery point serves both: docs/ecs.md (Events).
// EntityCreated and EntityDestroyed are sent by the World once someone declared them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include <spindle/base/assert.h>
#include <spindle/ecs/entity.h>
#include <spindle/ecs/type_id.h>

namespace spindle::core {

// Sent by apply_commands() (and World::create/destroy) when someone reads them.
struct EntityCreated {
  Entity entity;
};
struct EntityDestroyed {
  Entity entity;
};

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

// Every declared event queue, and the delivery points the Engine drives (through the World):
// begin_frame() once per frame, then begin_step() and end_step() around each simulation step.
class EventQueues {
 public:
  // The queue of T, made on the first call with room for `reserve` events (pending and delivered
  // during one frame) before a buffer grows, once, on the heap.
  template <class T>
  EventQueue<T>& queue(std::size_t reserve) {
    auto& slot = queues_[type_id<T>()];
    if (!slot) {
      slot = std::make_unique<EventQueue<T>>(reserve);
      list_.push_back(slot.get());
    }
    return static_cast<EventQueue<T>&>(*slot);
  }
  // nullptr when the type was never declared.
  template <class T>
  EventQueue<T>* find() {
    return static_cast<EventQueue<T>*>(queues_[type_id<T>()].get());
  }
  template <class T>
  const EventQueue<T>* find() const {
    return static_cast<const EventQueue<T>*>(queues_[type_id<T>()].get());
  }
  EventQueueBase* find(TypeId type) { return queues_[type].get(); }
  // Inside a step: the events delivered at its start. Elsewhere: every event delivered since
  // begin_frame().
  template <class T>
  std::span<const T> read() const {
    const EventQueue<T>* q = find<T>();
    if (q == nullptr) return {};
    return in_step_ ? q->step_events() : q->frame_events();
  }

  void begin_frame();  // forgets the previous frame's deliveries
  void begin_step();   // delivers what is pending; read() returns only that
  void end_step();     // read() returns the frame's deliveries again

 private:
  std::array<std::unique_ptr<EventQueueBase>, kMaxTypes> queues_{};
  std::vector<EventQueueBase*> list_;  // in declaration order
  bool in_step_ = false;
};

}  // namespace spindle::core
