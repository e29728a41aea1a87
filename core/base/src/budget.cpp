#include <spindle/base/budget.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include <spindle/base/assert.h>
#include <spindle/base/log.h>

#include "bits.h"

namespace spindle::core {
namespace {

MemTag budget_mem_tag() {
  static const MemTag tag = register_mem_tag("budget");
  return tag;
}

thread_local BudgetArena* t_current_arena = nullptr;

// Written by heap_guard's operator new and malloc wrappers, which may run on any thread.
std::atomic<bool> g_sealed{false};
std::atomic<bool> g_guard_linked{false};
std::atomic<std::size_t> g_heap_allocations{0};
std::atomic<std::size_t> g_heap_bytes{0};

// The blocks of live budgets, for heap_guard's operator delete to tell arena memory from the
// heap's. Registered and looked up without allocating; a handful of budgets at most.
constexpr std::size_t kMaxBudgets = 8;
std::atomic<const std::byte*> g_block_begin[kMaxBudgets] = {};
std::atomic<const std::byte*> g_block_end[kMaxBudgets] = {};

void register_block(const std::byte* begin, std::size_t bytes) {
  if (begin == nullptr || bytes == 0) return;
  for (std::size_t i = 0; i < kMaxBudgets; ++i) {
    const std::byte* expected = nullptr;
    if (g_block_begin[i].compare_exchange_strong(expected, begin)) {
      g_block_end[i].store(begin + bytes, std::memory_order_release);
      return;
    }
  }
  SPINDLE_ASSERTF(false, "budget: more than %zu budgets live at once", kMaxBudgets);
  SPINDLE_LOG_ERROR(Memory, "budget: more than %zu budgets live at once", kMaxBudgets);
}

void unregister_block(const std::byte* begin) {
  for (std::size_t i = 0; i < kMaxBudgets; ++i) {
    if (begin != nullptr && g_block_begin[i].load(std::memory_order_acquire) == begin) {
      g_block_end[i].store(nullptr, std::memory_order_release);
      g_block_begin[i].store(nullptr, std::memory_order_release);
      return;
    }
  }
}

using detail::copy_text;
using detail::round_up;

}  // namespace

// --- BudgetArena -------------------------------------------------------------------------------

void BudgetArena::init(void* base, std::size_t bytes, const char* name, const char* panic_mode) {
  [[maybe_unused]] const bool name_fits = copy_text(name_, sizeof name_, name);
  SPINDLE_ASSERTF(name_fits, "budget: arena name '%s' is over %zu characters", name, kMaxName);
  copy_text(panic_mode_, sizeof panic_mode_, panic_mode);  // a long text is cut, not refused
  base_ = static_cast<std::byte*>(base);
  arena_ = LinearArena(budget_mem_tag(), base, bytes, name_);
}

void* BudgetArena::allocate(std::size_t size, std::size_t align) {
  SPINDLE_ASSERTF(align != 0 && (align & (align - 1)) == 0,
                  "budget: alignment %zu is a power of two", align);
  // Checked here so a refusal is reported once, by this arena, with its panic mode.
  const std::size_t used = arena_.used();
  const std::size_t cap = arena_.capacity();
  const auto top = reinterpret_cast<std::uintptr_t>(base_) + used;
  const std::size_t pad = static_cast<std::size_t>(-top & (align - 1));
  const bool fits = base_ != nullptr && pad <= cap - used && size <= cap - used - pad;
  void* p = fits ? arena_.allocate(size, align) : nullptr;
  if (p != nullptr) return p;
  ++refusals_;
  if (!logged_) {
    logged_ = true;
    SPINDLE_LOG_WARNING(Memory,
                        "budget: arena '%s' is full (%zu of %zu bytes used) and refused %zu "
                        "bytes; panic mode: %s",
                        name_, used, cap, size, panic_mode_);
  }
  return nullptr;
}

void BudgetArena::panic(const char* what) {
  ++panics_;
  if (!logged_) {
    logged_ = true;
    SPINDLE_LOG_WARNING(Memory, "budget: arena '%s' (%zu bytes) is in its panic mode: %s%s%s",
                        name_, arena_.capacity(), panic_mode_, what != nullptr ? " - " : "",
                        what != nullptr ? what : "");
  }
}

// --- MemoryBudget ------------------------------------------------------------------------------

MemoryBudget::MemoryBudget(std::size_t bytes) : bytes_(bytes), owned_(true) {
  block_ = static_cast<std::byte*>(detail::reserve_backing(budget_mem_tag(), bytes, kArenaAlign));
  if (block_ == nullptr) bytes_ = 0;  // reserve_backing logged it; every arena gets 0 bytes
  register_block(block_, bytes_);
}

MemoryBudget::MemoryBudget(void* block, std::size_t bytes)
    : block_(static_cast<std::byte*>(block)), bytes_(block != nullptr ? bytes : 0) {
  // Arenas start on kArenaAlign boundaries of the address, whatever the caller's alignment.
  const auto address = reinterpret_cast<std::uintptr_t>(block_);
  const std::size_t skip = round_up(address, kArenaAlign) - address;
  carved_ = skip < bytes_ ? skip : bytes_;
  register_block(block_, bytes_);
}

MemoryBudget::~MemoryBudget() {
  unregister_block(block_);
  if (owned_ && block_ != nullptr) detail::release_backing(budget_mem_tag(), block_, bytes_);
}

BudgetArena& MemoryBudget::add_arena(const char* name, std::size_t bytes, const char* panic_mode) {
  SPINDLE_ASSERTF(count_ < kMaxArenas, "budget: arena '%s' is one more than %zu", name, kMaxArenas);
  SPINDLE_ASSERTF(name != nullptr && arena(name) == nullptr, "budget: arena '%s' is added twice",
                  name != nullptr ? name : "(null)");
  if (count_ == kMaxArenas) {
    SPINDLE_LOG_ERROR(Memory, "budget: arena '%s' is one more than %zu; it shares the last", name,
                      kMaxArenas);
    return arenas_[kMaxArenas - 1];
  }
  const std::size_t left = bytes_ - carved_;
  std::size_t size = round_up(bytes, kArenaAlign);
  if (size < bytes || size > left) {  // wrapped, or over what is left
    SPINDLE_ASSERTF(false, "budget: arena '%s' wants %zu bytes; %zu of the %zu are left", name,
                    bytes, left, bytes_);
    SPINDLE_LOG_ERROR(Memory, "budget: arena '%s' wants %zu bytes; it gets the %zu left", name,
                      bytes, left);
    size = left;
  }
  BudgetArena& a = arenas_[count_++];
  a.init(block_ != nullptr ? block_ + carved_ : nullptr, size, name, panic_mode);
  carved_ += size;
  return a;
}

BudgetArena* MemoryBudget::arena(const char* name) {
  if (name == nullptr) return nullptr;
  for (std::size_t i = 0; i < count_; ++i) {
    if (std::strcmp(arenas_[i].name(), name) == 0) return &arenas_[i];
  }
  return nullptr;
}

std::size_t MemoryBudget::high_water() const {
  std::size_t sum = 0;
  for (const BudgetArena& a : arenas()) sum += a.high_water();
  return sum;
}

std::size_t MemoryBudget::overflow_bytes() const {
  std::size_t sum = 0;
  for (const BudgetArena& a : arenas()) sum += a.overflow_bytes();
  return sum;
}

std::uint32_t MemoryBudget::panics() const {
  std::uint32_t sum = 0;
  for (const BudgetArena& a : arenas()) sum += a.panics();
  return sum;
}

void MemoryBudget::seal() {
  sealed_ = true;
  g_sealed.store(true, std::memory_order_release);
}

// --- scopes and the heap count -----------------------------------------------------------------

BudgetScope::BudgetScope(BudgetArena* arena) : previous_(t_current_arena) {
  t_current_arena = arena;
}

BudgetScope::~BudgetScope() {
  t_current_arena = previous_;
}

BudgetArena* current_budget_arena() {
  return t_current_arena;
}

HeapCount heap_after_seal() {
  return {g_heap_allocations.load(std::memory_order_relaxed),
          g_heap_bytes.load(std::memory_order_relaxed)};
}

bool heap_guard_linked() {
  return g_guard_linked.load(std::memory_order_relaxed);
}

namespace detail {

void count_heap_allocation(std::size_t bytes) {
  if (!g_sealed.load(std::memory_order_acquire)) return;
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  g_heap_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

bool in_budget_block(const void* p) {
  const auto* b = static_cast<const std::byte*>(p);
  for (std::size_t i = 0; i < kMaxBudgets; ++i) {
    const std::byte* begin = g_block_begin[i].load(std::memory_order_acquire);
    if (begin != nullptr && b >= begin && b < g_block_end[i].load(std::memory_order_acquire))
      return true;
  }
  return false;
}

void set_heap_guard_linked() {
  g_guard_linked.store(true, std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace spindle::core
