#include <spindle/base/memory.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <spindle/base/assert.h>
#include <spindle/base/log.h>
#include <spindle/base/mutex.h>

#include "bits.h"

namespace spindle::core {
namespace {

// One cache line per tag: allocators of different subsystems do not contend.
struct alignas(64) TagCounters {
  std::atomic<std::size_t> current{0};
  std::atomic<std::size_t> peak{0};
  std::atomic<std::size_t> allocations{0};
  std::atomic<std::size_t> reserved{0};
};

TagCounters g_counters[kMaxMemTags];

// The tag table. Constant-initialised with core's own tags, so they work during static
// initialisation. A slot is written once, under the lock, before `count` publishes it; readers
// look only below `count` and take no lock.
struct TagTable {
  char names[kMaxMemTags][kMaxMemTagName + 1] = {"core", "jobs", "game", "frame"};
  std::atomic<std::uint32_t> count{4};
  Mutex mutex;  // serialises registrations
};
constinit TagTable g_tags;

static_assert(kMaxMemTags <= 256, "MemTag::index is one byte");
static_assert(MemTag::Core.index == 0 && MemTag::Jobs.index == 1 && MemTag::Game.index == 2 &&
                  MemTag::Frame.index == 3,
              "core's tags match the names g_tags starts with");

std::size_t tag_count() {
  return g_tags.count.load(std::memory_order_acquire);
}

TagCounters& counters(MemTag tag) {
  SPINDLE_ASSERTF(tag.index < g_tags.count.load(std::memory_order_relaxed),
                  "memory tag %u is registered (register_mem_tag)", tag.index);
  return g_counters[tag.index < kMaxMemTags ? tag.index : 0];
}

using detail::is_power_of_two;

void* heap_alloc(MemTag tag, std::size_t size, std::size_t align) {
  SPINDLE_ASSERTF(is_power_of_two(align), "alignment %zu is a power of two", align);
  // aligned_alloc wants a size that is a multiple of the alignment; free() takes any alignment,
  // so the free side needs neither size nor alignment.
  if (align < sizeof(void*)) align = sizeof(void*);
  if (size == 0) size = 1;
  void* p = nullptr;
  if (size <= SIZE_MAX - align) p = std::aligned_alloc(align, (size + align - 1) & ~(align - 1));
  if (p == nullptr) {
    SPINDLE_LOG_ERROR(Memory, "out of memory: %zu bytes (align %zu) for tag %s", size, align,
                      to_string(tag));
  }
  return p;
}

void heap_free(void* ptr) {
  std::free(ptr);
}

// Raises the peak to at least `now`.
void raise_peak(TagCounters& c, std::size_t now) {
  std::size_t peak = c.peak.load(std::memory_order_seq_cst);
  while (now > peak && !c.peak.compare_exchange_weak(peak, now, std::memory_order_seq_cst)) {
  }
}

}  // namespace

MemTag register_mem_tag(const char* name) {
  SPINDLE_ASSERT(name != nullptr && name[0] != '\0', "a memory tag has a name");
  if (name == nullptr) name = "";
  const std::size_t length = std::strlen(name);
  SPINDLE_ASSERTF(length <= kMaxMemTagName, "memory tag name '%s' is at most %zu characters", name,
                  kMaxMemTagName);
  {
    LockGuard lock(g_tags.mutex);
    const std::uint32_t count = g_tags.count.load(std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < count; ++i) {
      if (std::strncmp(g_tags.names[i], name, kMaxMemTagName) == 0) {
        return MemTag{static_cast<std::uint8_t>(i)};
      }
    }
    if (count < kMaxMemTags) {
      const std::size_t kept = length < kMaxMemTagName ? length : kMaxMemTagName;
      std::memcpy(g_tags.names[count], name, kept);
      g_tags.names[count][kept] = '\0';
      g_tags.count.store(count + 1, std::memory_order_release);
      return MemTag{static_cast<std::uint8_t>(count)};
    }
  }
  SPINDLE_LOG_ERROR(Memory, "memory tag table is full (%zu tags): '%s' books under 'core'",
                    kMaxMemTags, name);
  SPINDLE_ASSERTF(false, "memory tag table is full (%zu tags): cannot register '%s'", kMaxMemTags,
                  name);
  return MemTag::Core;
}

std::size_t mem_tag_count() {
  return tag_count();
}

MemTag mem_tag_at(std::size_t i) {
  SPINDLE_ASSERTF(i < tag_count(), "memory tag %zu below the count %zu", i, tag_count());
  return MemTag{static_cast<std::uint8_t>(i < kMaxMemTags ? i : 0)};
}

const char* to_string(MemTag tag) {
  return tag.index < tag_count() ? g_tags.names[tag.index] : "?";
}

MemStats mem_stats(MemTag tag) {
  const TagCounters& c = counters(tag);
  MemStats s;
  s.current_bytes = c.current.load(std::memory_order_relaxed);
  // A booking raises current before the peak: never show the moment in between.
  const std::size_t peak = c.peak.load(std::memory_order_relaxed);
  s.peak_bytes = peak > s.current_bytes ? peak : s.current_bytes;
  s.allocations = c.allocations.load(std::memory_order_relaxed);
  s.reserved_bytes = c.reserved.load(std::memory_order_relaxed);
  return s;
}

MemStats mem_stats_total() {
  MemStats total;
  for (std::size_t i = 0, count = mem_tag_count(); i < count; ++i) {
    MemStats s = mem_stats(mem_tag_at(i));
    total.current_bytes += s.current_bytes;
    total.peak_bytes += s.peak_bytes;
    total.allocations += s.allocations;
    total.reserved_bytes += s.reserved_bytes;
  }
  return total;
}

void mem_reset_peak(MemTag tag) {
  TagCounters& c = counters(tag);
  // A booking that raised the peak after `now` was read fails the exchange: read again. One
  // that read the old, higher peak and so left it alone is seen by the second read of current
  // (sequentially consistent: its add comes before its peak read, before the exchange).
  std::size_t peak = c.peak.load(std::memory_order_seq_cst);
  std::size_t now = c.current.load(std::memory_order_seq_cst);
  while (!c.peak.compare_exchange_weak(peak, now, std::memory_order_seq_cst)) {
    now = c.current.load(std::memory_order_seq_cst);
  }
  raise_peak(c, c.current.load(std::memory_order_seq_cst));
}

void mem_book_alloc(MemTag tag, std::size_t bytes) {
  TagCounters& c = counters(tag);
  c.allocations.fetch_add(1, std::memory_order_relaxed);
  raise_peak(c, c.current.fetch_add(bytes, std::memory_order_seq_cst) + bytes);
}

void mem_book_free(MemTag tag, std::size_t bytes) {
  counters(tag).current.fetch_sub(bytes, std::memory_order_relaxed);
}

void mem_book_reserve(MemTag tag, std::size_t bytes) {
  counters(tag).reserved.fetch_add(bytes, std::memory_order_relaxed);
}

void mem_book_release(MemTag tag, std::size_t bytes) {
  counters(tag).reserved.fetch_sub(bytes, std::memory_order_relaxed);
}

void* tagged_alloc(MemTag tag, std::size_t size, std::size_t align) {
  void* p = heap_alloc(tag, size, align);
  if (p != nullptr) mem_book_alloc(tag, size);
  return p;
}

void tagged_free(MemTag tag, void* ptr, std::size_t size) {
  if (ptr == nullptr) return;
  mem_book_free(tag, size);
  heap_free(ptr);
}

namespace detail {

void* reserve_backing(MemTag tag, std::size_t size, std::size_t align) {
  void* p = heap_alloc(tag, size, align);
  if (p != nullptr) mem_book_reserve(tag, size);
  return p;
}

void release_backing(MemTag tag, void* ptr, std::size_t size) {
  if (ptr == nullptr) return;
  mem_book_release(tag, size);
  heap_free(ptr);
}

}  // namespace detail
}  // namespace spindle::core
