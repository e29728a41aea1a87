// Lock-free queues of job pointers used by the scheduler. Private to jobs/.
//
// WorkDeque: the Chase-Lev work-stealing deque (Chase & Lev 2005, in the C11 formulation of
// Le, Pop, Cohen & Zappa Nardelli 2013), with a fixed capacity. Chosen because the owner's push
// and pop touch only its own end with plain loads and stores (one seq_cst store on pop), thieves
// pay a single CAS, and taking from opposite ends keeps owner and thieves off each other's cache
// lines until the deque is nearly empty. It never grows: a full deque makes push() fail and the
// caller falls back to the injection queue or runs the job inline (a counted overflow).
//
// MpmcQueue: Dmitry Vyukov's bounded multi-producer multi-consumer array queue. Every cell has
// a sequence number that says whether it is ready for the next producer or consumer, so each
// operation is one CAS on a position counter plus plain loads. Used as the injection queue for
// threads outside the pool and as the per-worker mailbox of Static mode.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "spindle/jobs/job_system.h"

namespace spindle::jobs::detail {

inline constexpr std::size_t kCacheLine = 64;

class WorkDeque {
 public:
  void init(std::uint32_t capacity) {
    capacity_ = capacity;
    mask_ = static_cast<std::int64_t>(capacity) - 1;
    buffer_ = std::make_unique<std::atomic<Job*>[]>(capacity);
  }

  // Owner only. False when full.
  bool push(Job* job) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t capacity = static_cast<std::int64_t>(capacity_);
    // top_ only grows, so a stale copy can only under-estimate the room left: check against the
    // owner's cached copy and re-read top_ (the thieves' hot line) only when that says full.
    // Acquire pairs with thieves' CAS on top_: a slot is reused only after its old job was taken.
    if (b - top_cache_ >= capacity) {
      top_cache_ = top_.load(std::memory_order_acquire);
      if (b - top_cache_ >= capacity) return false;
    }
    // Release on the slot publishes the job's fields to the thief that loads it with acquire.
    buffer_[b & mask_].store(job, std::memory_order_release);
    // Release so a thief that sees the new bottom also sees the slot.
    bottom_.store(b + 1, std::memory_order_release);
    return true;
  }

  // Owner only. Takes the most recently pushed job (LIFO keeps the owner in warm data).
  Job* pop() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    // seq_cst store then seq_cst load of top: the owner's claim on slot b must be ordered before
    // it reads top, or owner and thief could both take the last job (the store-load race that
    // Chase-Lev resolves with a full fence).
    bottom_.store(b, std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {  // empty: restore
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    Job* job = buffer_[b & mask_].load(std::memory_order_relaxed);
    if (t == b) {
      // Last job: race the thieves for it through top, as they do.
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                        std::memory_order_relaxed)) {
        job = nullptr;
      }
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return job;
  }

  // Any thread. Takes the oldest job, or nullptr when empty or when it lost a race.
  Job* steal() {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    // seq_cst orders this load after the top load, matching pop()'s store-then-load.
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return nullptr;
    Job* job = buffer_[t & mask_].load(std::memory_order_acquire);
    // The CAS both claims the job and proves the slot was not overwritten since we read it
    // (the owner only reuses a slot after top moved past it).
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
      return nullptr;
    }
    return job;
  }

  // A hint: may be stale by the time the caller acts on it.
  bool maybe_empty() const {
    return bottom_.load(std::memory_order_relaxed) <= top_.load(std::memory_order_relaxed);
  }

 private:
  alignas(kCacheLine) std::atomic<std::int64_t> top_{0};
  alignas(kCacheLine) std::atomic<std::int64_t> bottom_{0};
  alignas(kCacheLine) std::unique_ptr<std::atomic<Job*>[]> buffer_;
  std::int64_t mask_ = 0;
  std::int64_t top_cache_ = 0;  // owner only
  std::uint32_t capacity_ = 0;
};

class MpmcQueue {
 public:
  void init(std::uint32_t capacity) {
    mask_ = capacity - 1;
    cells_ = std::make_unique<Cell[]>(capacity);
    for (std::uint32_t i = 0; i < capacity; ++i)
      cells_[i].sequence.store(i, std::memory_order_relaxed);
  }

  // False when full.
  bool push(Job* job) {
    std::uint64_t pos = enqueue_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      // Acquire: the consumer that freed this cell is done reading it.
      const std::uint64_t seq = cell.sequence.load(std::memory_order_acquire);
      const std::int64_t diff = static_cast<std::int64_t>(seq) - static_cast<std::int64_t>(pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.job.store(job, std::memory_order_relaxed);
          // Release publishes the job (and its fields) to the consumer of this cell.
          cell.sequence.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
  }

  // nullptr when empty.
  Job* pop() {
    std::uint64_t pos = dequeue_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      const std::uint64_t seq = cell.sequence.load(std::memory_order_acquire);
      const std::int64_t diff = static_cast<std::int64_t>(seq) - static_cast<std::int64_t>(pos + 1);
      if (diff == 0) {
        if (dequeue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          Job* job = cell.job.load(std::memory_order_relaxed);
          // Release hands the cell back to the producer one lap ahead.
          cell.sequence.store(pos + mask_ + 1, std::memory_order_release);
          return job;
        }
      } else if (diff < 0) {
        return nullptr;
      } else {
        pos = dequeue_.load(std::memory_order_relaxed);
      }
    }
  }

  bool maybe_empty() const {
    return enqueue_.load(std::memory_order_relaxed) == dequeue_.load(std::memory_order_relaxed);
  }

 private:
  struct Cell {
    std::atomic<std::uint64_t> sequence{0};
    std::atomic<Job*> job{nullptr};
  };
  alignas(kCacheLine) std::atomic<std::uint64_t> enqueue_{0};
  alignas(kCacheLine) std::atomic<std::uint64_t> dequeue_{0};
  alignas(kCacheLine) std::unique_ptr<Cell[]> cells_;
  std::uint64_t mask_ = 0;
};

}  // namespace spindle::jobs::detail
