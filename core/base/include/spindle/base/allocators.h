// Allocators with fixed capacities: LinearArena, StackAllocator, FixedPool / Pool<T>, and
// FrameArenas (one arena per job-system participant, reset every frame).
//
// Usage:
//
//   using spindle::core::MemTag;
//   const MemTag tag = spindle::core::register_mem_tag("render");  // or MemTag::Core, ...
//   spindle::core::LinearArena scratch(tag, 1 << 20);              // owns 1 MiB
//   float* xs = scratch.allocate_array<float>(n);                  // nullptr when full
//   scratch.reset();
//
//   spindle::core::StackAllocator stack(tag, 64 << 10);
//   auto mark = stack.get_marker();
//   void* tmp = stack.allocate(256);
//   stack.free_to_marker(mark);                                     // frees tmp and later ones
//
//   spindle::core::Pool<Voice> voices(tag, 256);                   // O(1) create / destroy
//   Voice* v = voices.create(args...);
//   voices.destroy(v);
//
//   spindle::core::FrameArenas frame(MemTag::Frame, jobs.participant_count(), 256 << 10);
//   frame.begin_frame();                                            // between frames
//   jobs.parallel_for(0, n, 64, [&](std::size_t i) {
//     auto* tmp = frame.arena(jobs).allocate_array<Contact>(16);   // the running worker's arena
//   });
//
// Every allocator is built with a MemTag: bytes it hands out are booked as that tag's current
// bytes (see memory.h), backing memory it owns as reserved bytes. A full allocator returns
// nullptr, counts the failure in overflow_count() and logs one warning until its next reset;
// it never crashes and never falls back to the heap. None of them is thread-safe: one owner
// thread each (FrameArenas gives every participant its own arena).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <spindle/base/assert.h>
#include <spindle/base/memory.h>

namespace spindle::jobs {
class JobSystem;
}

namespace spindle::core {

inline constexpr std::size_t kDefaultAlign = alignof(std::max_align_t);
// What threads must not share when each writes its own state (64 bytes on x86-64 and most ARM).
inline constexpr std::size_t kCacheLine = 64;

// Bump allocator over one buffer: allocation is a pointer bump, freeing is reset() of everything.
class LinearArena {
 public:
  LinearArena() = default;  // empty: every allocation fails
  // Owns `capacity` bytes taken from the tagged heap.
  LinearArena(MemTag tag, std::size_t capacity, const char* name = "arena");
  // Uses the caller's buffer, which must outlive the arena.
  LinearArena(MemTag tag, void* buffer, std::size_t capacity, const char* name = "arena");
  ~LinearArena();
  LinearArena(LinearArena&& other) noexcept;
  LinearArena& operator=(LinearArena&& other) noexcept;
  LinearArena(const LinearArena&) = delete;
  LinearArena& operator=(const LinearArena&) = delete;

  // `align` is a power of two. nullptr when the rest of the buffer is too small.
  void* allocate(std::size_t size, std::size_t align = kDefaultAlign);
  // Uninitialised storage for `count` objects of T.
  template <class T>
  T* allocate_array(std::size_t count) {
    if (count > static_cast<std::size_t>(-1) / sizeof(T)) return static_cast<T*>(fail(count));
    return static_cast<T*>(allocate(sizeof(T) * count, alignof(T)));
  }
  // Constructs a T; its destructor never runs, so T must be trivially destructible.
  template <class T, class... Args>
  T* create(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T>,
                  "arena objects are never destroyed: use a Pool for types with destructors");
    void* p = allocate(sizeof(T), alignof(T));
    return p != nullptr ? ::new (p) T(std::forward<Args>(args)...) : nullptr;
  }

  // Forgets every allocation.
  void reset() { rewind(0); }

  std::size_t used() const { return offset_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t remaining() const { return capacity_ - offset_; }
  std::size_t peak_used() const { return peak_; }              // high-water mark of used()
  std::uint64_t overflow_count() const { return overflows_; }  // failed allocations
  MemTag tag() const { return tag_; }
  const char* name() const { return name_; }
  bool owns(const void* p) const {
    auto* b = static_cast<const std::byte*>(p);
    return b >= base_ && b < base_ + capacity_;
  }

 protected:
  // Drops everything allocated after `offset` (un-booking it).
  void rewind(std::size_t offset);
  // Counts and reports a failed allocation of `size` bytes; returns nullptr.
  void* fail(std::size_t size);

 private:
  void release();

  std::byte* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t offset_ = 0;
  std::size_t peak_ = 0;
  std::uint64_t overflows_ = 0;
  const char* name_ = "arena";
  MemTag tag_ = MemTag::Core;
  bool owned_ = false;
  bool warned_ = false;  // one warning per reset cycle, not one per failed allocation
};

// A LinearArena that can also free back to a marker (LIFO scopes of temporary memory).
class StackAllocator : public LinearArena {
 public:
  using Marker = std::size_t;
  using LinearArena::LinearArena;

  Marker get_marker() const { return used(); }
  // Frees everything allocated after `marker` was taken. The marker must not be above the top.
  void free_to_marker(Marker marker) {
    SPINDLE_ASSERTF(marker <= used(), "stack marker %zu is at or below the top %zu", marker,
                    used());
    rewind(marker);
  }
};

// Frees back to the marker taken at construction when it leaves scope.
class StackScope {
 public:
  explicit StackScope(StackAllocator& stack) : stack_(stack), marker_(stack.get_marker()) {}
  ~StackScope() { stack_.free_to_marker(marker_); }
  StackScope(const StackScope&) = delete;
  StackScope& operator=(const StackScope&) = delete;

 private:
  StackAllocator& stack_;
  StackAllocator::Marker marker_;
};

// `block_count` blocks of `block_size` bytes; allocate() and free() are O(1) through an intrusive
// free list threaded through the free blocks themselves.
class FixedPool {
 public:
  FixedPool(MemTag tag, std::size_t block_size, std::size_t block_count,
            std::size_t align = kDefaultAlign, const char* name = "pool");
  ~FixedPool();
  FixedPool(const FixedPool&) = delete;
  FixedPool& operator=(const FixedPool&) = delete;

  void* allocate();        // nullptr when every block is in use
  void free(void* block);  // null is ignored; anything else must come from this pool
  // Whether `p` is a block of this pool that is currently allocated (with SPINDLE_ASSERTS off,
  // only whether it belongs to the pool).
  bool is_live(const void* p) const;

  bool owns(const void* p) const;
  std::size_t block_size() const { return block_size_; }  // after rounding up for alignment
  std::size_t capacity() const { return block_count_; }
  std::size_t used() const { return used_; }  // blocks in use
  std::size_t peak_used() const { return peak_; }
  std::uint64_t overflow_count() const { return overflows_; }
  MemTag tag() const { return tag_; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };

  std::byte* base_ = nullptr;
  std::size_t backing_size_ = 0;
  std::size_t block_size_ = 0;
  std::size_t block_count_ = 0;
  FreeBlock* free_list_ = nullptr;
  // One byte per block while asserts are on in core: catches double frees and foreign pointers.
  std::uint8_t* live_ = nullptr;
  std::size_t used_ = 0;
  std::size_t peak_ = 0;
  std::uint64_t overflows_ = 0;
  const char* name_;
  MemTag tag_;
  bool warned_ = false;
};

// Typed FixedPool. Objects still alive when the pool dies are not destroyed.
template <class T>
class Pool {
 public:
  Pool(MemTag tag, std::size_t count, const char* name = "pool")
      : pool_(tag, sizeof(T), count, alignof(T) > sizeof(void*) ? alignof(T) : sizeof(void*),
              name) {}

  template <class... Args>
  T* create(Args&&... args) {
    void* p = pool_.allocate();
    return p != nullptr ? ::new (p) T(std::forward<Args>(args)...) : nullptr;
  }
  void destroy(T* object) {
    if (object == nullptr) return;
    // Checked before the destructor runs: a second destroy must not run ~T on a free block.
    SPINDLE_ASSERT(pool_.is_live(object), "a Pool object is destroyed once, by its own pool");
    object->~T();
    pool_.free(object);
  }

  bool owns(const T* object) const { return pool_.owns(object); }
  std::size_t capacity() const { return pool_.capacity(); }
  std::size_t used() const { return pool_.used(); }
  std::uint64_t overflow_count() const { return pool_.overflow_count(); }

 private:
  FixedPool pool_;
};

// One LinearArena per job-system participant, so jobs allocate frame-lifetime memory without
// locks. begin_frame() resets them; double-buffered, it flips instead and keeps the previous
// frame's arenas readable for one more frame (e.g. render reading last frame's simulation).
class FrameArenas {
 public:
  FrameArenas(MemTag tag, std::uint32_t participants, std::size_t bytes_per_participant,
              bool double_buffered = false);
  ~FrameArenas();
  FrameArenas(const FrameArenas&) = delete;
  FrameArenas& operator=(const FrameArenas&) = delete;

  // Call between frames, with no job using the arenas.
  void begin_frame();

  // This frame's arena of `participant` (< participants()).
  LinearArena& arena(std::uint32_t participant);
  // This frame's arena of the calling thread, which must be a participant of `jobs`.
  LinearArena& arena(const jobs::JobSystem& jobs);
  // Last frame's arena of `participant`; only with double buffering.
  const LinearArena& previous(std::uint32_t participant) const;

  std::uint32_t participants() const { return participants_; }
  bool double_buffered() const { return buffers_ == 2; }
  std::uint64_t frame() const { return frame_; }
  std::size_t used() const;  // this frame, all participants
  std::uint64_t overflow_count() const;

 private:
  // Each arena on cache lines of its own: a worker bumping its arena's offset must not
  // invalidate the line holding its neighbour's.
  struct alignas(kCacheLine) ParticipantArena {
    LinearArena arena;
  };

  std::byte* backing_ = nullptr;
  std::size_t backing_size_ = 0;
  std::vector<ParticipantArena> arenas_;  // buffer b, participant p at b * participants_ + p
  std::uint32_t participants_;
  std::uint32_t buffers_;
  std::uint32_t current_ = 0;
  std::uint64_t frame_ = 0;
  MemTag tag_;
};

}  // namespace spindle::core
