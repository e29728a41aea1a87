// A memory budget: one block set at start-up, split into named arenas, one per subsystem, each
// with a high-water mark and a declared panic mode, what the subsystem does when its arena or a
// fixed capacity sized from it runs out (the N64 way: drop the farthest objects, refuse new
// voices, ... rather than crash). The tiny-target profile lives in one; a desktop game may too.
//
// Usage:
//
//   spindle::core::MemoryBudget budget(2u << 20);  // one block; or (buffer, bytes) of your own
//   spindle::core::BudgetArena& swarm =
//       budget.add_arena("swarm", 640u << 10, "the farthest enemies wait off-field");
//   budget.add_arena("jobs", 96u << 10, "jobs over the pool run inline");
//
//   {  // operator new on this thread now takes from `swarm` (with spindle::heap_guard linked)
//     spindle::core::BudgetScope scope(swarm);
//     state.swarm = std::make_unique<Swarm<fixed>>(config);
//   }
//   void* p = swarm.allocate(4096, 16);  // or explicitly; nullptr (logged once) when it is full
//   engine_config.memory = &budget;      // the engine books its job pool and world itself
//   ...start-up, warm-up frames...
//   budget.seal();  // start-up is over: from here heap_guard counts every heap allocation
//
//   if (over_capacity) swarm.panic();  // the subsystem entered its panic mode: counted, logged
//   once for (const spindle::core::BudgetArena& a : budget.arenas())
//     printf("%s: %zu of %zu bytes, %u panics\n", a.name(), a.high_water(), a.capacity(),
//            a.panics());
//
// A budget must outlive everything allocated in its arenas (declare it first), and at most
// eight budgets live at once.
//
// Arenas are linear: memory handed out is never given back until the budget is destroyed (a
// free inside an arena is a no-op), so high_water() is the subsystem's whole footprint, vector
// growth during start-up included. An allocation that does not fit is refused (nullptr from
// allocate(); heap_guard's operator new takes it from the heap instead and counts it in
// overflow_bytes(), so a game over budget runs and says so rather than crash).
//
// The scope is per thread; allocate() on one arena from several threads at once is a data race
// (budgets are made for start-up and for the single-threaded profile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <spindle/base/allocators.h>

namespace spindle::core {

class BudgetArena {
 public:
  static constexpr std::size_t kMaxName = 23;
  static constexpr std::size_t kMaxPanicText = 79;

  const char* name() const { return name_; }
  const char* panic_mode() const { return panic_mode_; }
  std::size_t capacity() const { return arena_.capacity(); }
  std::size_t high_water() const { return arena_.peak_used(); }  // bytes handed out so far
  std::size_t remaining() const { return arena_.remaining(); }
  // Allocations that did not fit, and their bytes (taken from the heap by heap_guard instead).
  std::uint32_t refusals() const { return refusals_; }
  std::size_t overflow_bytes() const { return overflow_bytes_; }
  // Times the subsystem entered its panic mode.
  std::uint32_t panics() const { return panics_; }
  bool owns(const void* p) const { return arena_.owns(p); }

  // `align` is a power of two. nullptr when it does not fit: counted, and the first refusal is
  // logged with the arena's name and panic mode.
  void* allocate(std::size_t size, std::size_t align = kDefaultAlign);
  // The subsystem could not fit something and did what panic_mode() says instead: counted, the
  // first time logged (name, panic mode, `what` if given).
  void panic(const char* what = nullptr);
  // Books bytes that had to come from elsewhere (heap_guard's fallback).
  void note_overflow(std::size_t bytes) { overflow_bytes_ += bytes; }

 private:
  friend class MemoryBudget;
  BudgetArena() = default;
  void init(void* base, std::size_t bytes, const char* name, const char* panic_mode);

  LinearArena arena_;
  std::byte* base_ = nullptr;
  char name_[kMaxName + 1] = {};
  char panic_mode_[kMaxPanicText + 1] = {};
  std::uint32_t refusals_ = 0;
  std::size_t overflow_bytes_ = 0;
  std::uint32_t panics_ = 0;
  bool logged_ = false;
};

class MemoryBudget {
 public:
  static constexpr std::size_t kMaxArenas = 16;
  static constexpr std::size_t kArenaAlign = 64;  // each arena starts on a cache line

  // One block of `bytes` from the heap (tag "budget"), taken now and never again.
  explicit MemoryBudget(std::size_t bytes);
  // The caller's block (static storage, a console's fixed RAM), which must outlive the budget.
  MemoryBudget(void* block, std::size_t bytes);
  ~MemoryBudget();
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Carves the next `bytes` (rounded up to kArenaAlign) of the block into an arena. An arena
  // that does not fit what is left, a 17th arena, a repeated or over-long name: an assert
  // failure naming it (with asserts off: logged, and the arena gets what is left, maybe 0).
  BudgetArena& add_arena(const char* name, std::size_t bytes, const char* panic_mode);
  // The arena called `name`, or nullptr.
  BudgetArena* arena(const char* name);

  std::span<const BudgetArena> arenas() const { return {arenas_, count_}; }
  std::size_t capacity() const { return bytes_; }   // the whole block
  std::size_t assigned() const { return carved_; }  // given to arenas so far
  std::size_t high_water() const;                   // sum of the arenas' high-water marks
  std::size_t overflow_bytes() const;               // sum over arenas
  std::uint32_t panics() const;                     // sum over arenas

  // Marks the end of start-up. heap_guard counts every heap allocation from here on
  // (heap_after_seal()), in every thread; arenas themselves keep working.
  void seal();
  bool sealed() const { return sealed_; }

 private:
  std::byte* block_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t carved_ = 0;
  bool owned_ = false;
  bool sealed_ = false;
  std::size_t count_ = 0;
  BudgetArena arenas_[kMaxArenas];
};

// Routes this thread's operator new (with spindle::heap_guard linked) into `arena` until the
// scope ends; scopes nest. A null arena routes to the heap.
class BudgetScope {
 public:
  explicit BudgetScope(BudgetArena* arena);
  explicit BudgetScope(BudgetArena& arena) : BudgetScope(&arena) {}
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  BudgetArena* previous_;
};

// This thread's arena for operator new, or nullptr (the heap).
BudgetArena* current_budget_arena();

// The heap after start-up, as spindle::heap_guard counts it (0 without heap_guard linked):
// calls of operator new and, where the link wraps them, of malloc, calloc, realloc,
// aligned_alloc, posix_memalign and memalign, since a budget was sealed.
struct HeapCount {
  std::size_t allocations = 0;  // pointer-wide: lock-free on 32-bit targets
  std::size_t bytes = 0;
};
HeapCount heap_after_seal();
// Whether heap_guard is linked into this program (it sets this at static initialisation).
bool heap_guard_linked();

namespace detail {
// heap_guard's side of the count: called from its operator new and malloc wrappers.
void count_heap_allocation(std::size_t bytes);
void set_heap_guard_linked();
// Whether `p` lies in the block of a live MemoryBudget (heap_guard's operator delete skips it).
bool in_budget_block(const void* p);
}  // namespace detail

}  // namespace spindle::core
