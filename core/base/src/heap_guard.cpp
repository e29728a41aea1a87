// spindle::heap_guard: the program's operator new and delete, and wrappers of the C heap, for
// games that live in a MemoryBudget (spindle/base/budget.h).
// - operator new inside a BudgetScope takes from that arena; one that does not fit, or one
//   outside any scope, takes from the heap.
// - After MemoryBudget::seal(), every heap allocation is counted (heap_after_seal()): operator
//   new's, and malloc, calloc, realloc, aligned_alloc, posix_memalign and memalign called from
//   any code the link wraps (the linker's --wrap, set by the target: all code of a static
//   executable, libc's own included; the program's own objects and static libraries otherwise).
// - operator delete ignores arena memory (arenas are linear) and frees the rest.
#include <cstddef>
#include <cstdlib>
#include <new>

#include <spindle/base/budget.h>

extern "C" {
void* __real_malloc(std::size_t size);
void* __real_calloc(std::size_t count, std::size_t size);
void* __real_realloc(void* p, std::size_t size);
void* __real_aligned_alloc(std::size_t align, std::size_t size);
int __real_posix_memalign(void** out, std::size_t align, std::size_t size);
void* __real_memalign(std::size_t align, std::size_t size);
}

namespace {

using spindle::core::detail::count_heap_allocation;

const struct Linked {
  Linked() { spindle::core::detail::set_heap_guard_linked(); }
} g_linked;

void* heap_new(std::size_t size, std::size_t align) {
  if (size == 0) size = 1;
  if (spindle::core::BudgetArena* arena = spindle::core::current_budget_arena()) {
    if (void* p = arena->allocate(size, align)) return p;
    arena->note_overflow(size);
  }
  count_heap_allocation(size);
  if (align <= alignof(std::max_align_t)) return __real_malloc(size);
  return __real_aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

void* new_or_fail(std::size_t size, std::size_t align) {
  void* p = heap_new(size, align);
  if (p == nullptr) {
#if defined(__cpp_exceptions)
    throw std::bad_alloc();
#else
    std::abort();
#endif
  }
  return p;
}

void heap_delete(void* p) {
  if (p == nullptr || spindle::core::detail::in_budget_block(p)) return;
  std::free(p);
}

}  // namespace

// --- operator new and delete -------------------------------------------------------------------

void* operator new(std::size_t size) {
  return new_or_fail(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size) {
  return new_or_fail(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align) {
  return new_or_fail(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return new_or_fail(size, static_cast<std::size_t>(align));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return heap_new(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return heap_new(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return heap_new(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return heap_new(size, static_cast<std::size_t>(align));
}

void operator delete(void* p) noexcept {
  heap_delete(p);
}
void operator delete[](void* p) noexcept {
  heap_delete(p);
}
void operator delete(void* p, std::size_t) noexcept {
  heap_delete(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  heap_delete(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  heap_delete(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  heap_delete(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  heap_delete(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  heap_delete(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  heap_delete(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  heap_delete(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  heap_delete(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  heap_delete(p);
}

// --- the C heap, through the linker's --wrap ---------------------------------------------------

extern "C" {

void* __wrap_malloc(std::size_t size) {
  count_heap_allocation(size);
  return __real_malloc(size);
}

void* __wrap_calloc(std::size_t count, std::size_t size) {
  count_heap_allocation(count * size);
  return __real_calloc(count, size);
}

void* __wrap_realloc(void* p, std::size_t size) {
  if (size != 0) count_heap_allocation(size);
  return __real_realloc(p, size);
}

void* __wrap_aligned_alloc(std::size_t align, std::size_t size) {
  count_heap_allocation(size);
  return __real_aligned_alloc(align, size);
}

int __wrap_posix_memalign(void** out, std::size_t align, std::size_t size) {
  count_heap_allocation(size);
  return __real_posix_memalign(out, align, size);
}

void* __wrap_memalign(std::size_t align, std::size_t size) {
  count_heap_allocation(size);
  return __real_memalign(align, size);
}

}  // extern "C"
