#include <spindle/base/allocators.h>

#include <cstdint>

#include <spindle/base/log.h>
#include <spindle/jobs/job_system.h>

#include "bits.h"

namespace spindle::core {
namespace {

using detail::is_power_of_two;
using detail::round_up;

}  // namespace

// --- LinearArena -------------------------------------------------------------------------------

LinearArena::LinearArena(MemTag tag, std::size_t capacity, const char* name)
    : name_(name), tag_(tag), owned_(true) {
  base_ = static_cast<std::byte*>(detail::reserve_backing(tag, capacity, kCacheLine));
  capacity_ = base_ != nullptr ? capacity : 0;
}

LinearArena::LinearArena(MemTag tag, void* buffer, std::size_t capacity, const char* name)
    : base_(static_cast<std::byte*>(buffer)),
      capacity_(buffer != nullptr ? capacity : 0),
      name_(name),
      tag_(tag) {}

LinearArena::~LinearArena() {
  release();
}

LinearArena::LinearArena(LinearArena&& other) noexcept {
  *this = std::move(other);
}

LinearArena& LinearArena::operator=(LinearArena&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    offset_ = std::exchange(other.offset_, 0);
    peak_ = std::exchange(other.peak_, 0);
    overflows_ = std::exchange(other.overflows_, 0);
    name_ = other.name_;
    tag_ = other.tag_;
    owned_ = std::exchange(other.owned_, false);
    warned_ = std::exchange(other.warned_, false);
  }
  return *this;
}

void LinearArena::release() {
  rewind(0);
  if (owned_) detail::release_backing(tag_, base_, capacity_);
  base_ = nullptr;
  capacity_ = 0;
  owned_ = false;
}

void* LinearArena::allocate(std::size_t size, std::size_t align) {
  SPINDLE_ASSERTF(is_power_of_two(align), "arena alignment %zu is a power of two", align);
  // Align the address, not the offset: a caller's buffer may have any alignment.
  auto base = reinterpret_cast<std::uintptr_t>(base_);
  std::uintptr_t top = base + offset_;
  std::uintptr_t aligned = (top + (align - 1)) & ~static_cast<std::uintptr_t>(align - 1);
  std::size_t start = offset_ + static_cast<std::size_t>(aligned - top);
  if (base_ == nullptr || start > capacity_ || size > capacity_ - start) return fail(size);
  std::size_t end = start + size;
  mem_book_alloc(tag_, end - offset_);
  offset_ = end;
  if (offset_ > peak_) peak_ = offset_;
  return base_ + start;
}

void* LinearArena::fail(std::size_t size) {
  ++overflows_;
  if (!warned_) {
    warned_ = true;
    SPINDLE_LOG_WARNING(Memory, "%s (%s): out of space for %zu bytes (%zu of %zu used)", name_,
                        to_string(tag_), size, offset_, capacity_);
  }
  return nullptr;
}

void LinearArena::rewind(std::size_t offset) {
  if (offset >= offset_) return;
  mem_book_free(tag_, offset_ - offset);
  offset_ = offset;
  if (offset == 0) warned_ = false;
}

// --- FixedPool ---------------------------------------------------------------------------------

FixedPool::FixedPool(MemTag tag, std::size_t block_size, std::size_t block_count, std::size_t align,
                     const char* name)
    : name_(name), tag_(tag) {
  SPINDLE_ASSERTF(is_power_of_two(align), "pool alignment %zu is a power of two", align);
  if (align < alignof(FreeBlock)) align = alignof(FreeBlock);
  // Every block must hold the free-list link and keep the next block aligned.
  block_size_ = round_up(block_size < sizeof(FreeBlock) ? sizeof(FreeBlock) : block_size, align);
  std::size_t blocks_bytes = block_size_ * block_count;
  if (block_count != 0 && blocks_bytes / block_count != block_size_) blocks_bytes = 0;  // overflow
#if SPINDLE_ASSERTS
  std::size_t live_bytes = block_count;
#else
  std::size_t live_bytes = 0;
#endif
  backing_size_ = blocks_bytes + live_bytes;
  if (backing_size_ < blocks_bytes) blocks_bytes = 0;  // the sum wrapped: treat as too large
  if (blocks_bytes != 0) {
    base_ = static_cast<std::byte*>(
        detail::reserve_backing(tag, backing_size_, align > kCacheLine ? align : kCacheLine));
  }
  if (base_ == nullptr) {
    backing_size_ = 0;
    return;  // every allocate() fails and is counted
  }
  block_count_ = block_count;
  if (live_bytes != 0) {
    live_ = reinterpret_cast<std::uint8_t*>(base_ + blocks_bytes);
    for (std::size_t i = 0; i < block_count; ++i) live_[i] = 0;
  }
  // Thread the list front to back so fresh pools hand out ascending addresses.
  for (std::size_t i = block_count; i-- > 0;) {
    auto* block = ::new (base_ + i * block_size_) FreeBlock{free_list_};
    free_list_ = block;
  }
}

FixedPool::~FixedPool() {
  if (used_ != 0) mem_book_free(tag_, used_ * block_size_);
  detail::release_backing(tag_, base_, backing_size_);
}

bool FixedPool::owns(const void* p) const {
  auto* b = static_cast<const std::byte*>(p);
  return b >= base_ && b < base_ + block_size_ * block_count_ &&
         static_cast<std::size_t>(b - base_) % block_size_ == 0;
}

void* FixedPool::allocate() {
  FreeBlock* block = free_list_;
  if (block == nullptr) {
    ++overflows_;
    if (!warned_) {
      warned_ = true;
      SPINDLE_LOG_WARNING(Memory, "%s (%s): all %zu blocks of %zu bytes in use", name_,
                          to_string(tag_), block_count_, block_size_);
    }
    return nullptr;
  }
  free_list_ = block->next;
  if (live_ != nullptr)
    live_[static_cast<std::size_t>(reinterpret_cast<std::byte*>(block) - base_) / block_size_] = 1;
  ++used_;
  if (used_ > peak_) peak_ = used_;
  mem_book_alloc(tag_, block_size_);
  return block;
}

bool FixedPool::is_live(const void* p) const {
  if (p == nullptr || !owns(p)) return false;
  if (live_ == nullptr) return true;  // no tracking without asserts: trust the caller
  const std::size_t index =
      static_cast<std::size_t>(static_cast<const std::byte*>(p) - base_) / block_size_;
  return live_[index] != 0;
}

void FixedPool::free(void* p) {
  if (p == nullptr) return;
  SPINDLE_ASSERT(owns(p), "a block freed to a FixedPool came from that pool");
  if (live_ != nullptr) {
    std::size_t index = static_cast<std::size_t>(static_cast<std::byte*>(p) - base_) / block_size_;
    SPINDLE_ASSERT(live_[index] != 0, "a FixedPool block is freed once (double free)");
    live_[index] = 0;
  }
  free_list_ = ::new (p) FreeBlock{free_list_};
  --used_;
  warned_ = false;  // warn again the next time the pool runs dry
  mem_book_free(tag_, block_size_);
}

// --- FrameArenas -------------------------------------------------------------------------------

FrameArenas::FrameArenas(MemTag tag, std::uint32_t participants, std::size_t bytes_per_participant,
                         bool double_buffered)
    : participants_(participants), buffers_(double_buffered ? 2 : 1), tag_(tag) {
  SPINDLE_ASSERT(participants > 0, "FrameArenas has at least one participant");
  // Cache-line slices: neighbouring workers never share a line.
  std::size_t slice = round_up(bytes_per_participant, kCacheLine);
  std::size_t count = static_cast<std::size_t>(participants_) * buffers_;
  // Sizes that wrap when rounded or multiplied cannot be backed: build empty arenas (every
  // allocation fails and is counted) rather than arenas claiming memory they do not have.
  const bool wraps = slice < bytes_per_participant || (count != 0 && slice > SIZE_MAX / count);
  backing_size_ = wraps ? 0 : slice * count;
  backing_ = backing_size_ == 0
                 ? nullptr
                 : static_cast<std::byte*>(detail::reserve_backing(tag, backing_size_, kCacheLine));
  if (backing_ == nullptr) {
    backing_size_ = 0;
    bytes_per_participant = 0;
  }
  arenas_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    void* slice_base = backing_ != nullptr ? backing_ + i * slice : nullptr;
    arenas_.push_back({LinearArena(tag, slice_base, bytes_per_participant, "frame arena")});
  }
}

FrameArenas::~FrameArenas() {
  arenas_.clear();  // un-books their bytes before the backing goes
  detail::release_backing(tag_, backing_, backing_size_);
}

void FrameArenas::begin_frame() {
  if (frame_ > 0) current_ = (current_ + 1) % buffers_;
  ++frame_;
  for (std::uint32_t p = 0; p < participants_; ++p) arena(p).reset();
}

LinearArena& FrameArenas::arena(std::uint32_t participant) {
  SPINDLE_ASSERTF(participant < participants_, "participant %u below FrameArenas count %u",
                  participant, participants_);
  return arenas_[static_cast<std::size_t>(current_) * participants_ + participant].arena;
}

LinearArena& FrameArenas::arena(const jobs::JobSystem& jobs) {
  std::uint32_t worker = jobs.current_worker();
  SPINDLE_ASSERT(worker != jobs::kExternalThread,
                 "FrameArenas::arena(jobs) is called from a job-system participant");
  return arena(worker);
}

const LinearArena& FrameArenas::previous(std::uint32_t participant) const {
  SPINDLE_ASSERT(buffers_ == 2, "FrameArenas::previous needs double buffering");
  SPINDLE_ASSERTF(participant < participants_, "participant %u below FrameArenas count %u",
                  participant, participants_);
  std::uint32_t prev = (current_ + buffers_ - 1) % buffers_;
  return arenas_[static_cast<std::size_t>(prev) * participants_ + participant].arena;
}

std::size_t FrameArenas::used() const {
  std::size_t total = 0;
  for (std::uint32_t p = 0; p < participants_; ++p)
    total += arenas_[static_cast<std::size_t>(current_) * participants_ + p].arena.used();
  return total;
}

std::uint64_t FrameArenas::overflow_count() const {
  std::uint64_t total = 0;
  for (const ParticipantArena& a : arenas_) total += a.arena.overflow_count();
  return total;
}

}  // namespace spindle::core
