// A mutex that disappears in builds without threads (SPINDLE_THREADS=0), so core code can guard
// shared state unconditionally and the tiny target pays nothing and links no thread library.
//
// Usage:
//
//   spindle::core::Mutex mutex;
//   {
//     spindle::core::LockGuard lock(mutex);
//     shared.push(item);
//   }
#pragma once

#include <spindle/base/build_config.h>

#if SPINDLE_THREADS
#include <mutex>
#endif

namespace spindle::core {

#if SPINDLE_THREADS
class Mutex {
 public:
  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
  bool try_lock() { return mutex_.try_lock(); }

 private:
  std::mutex mutex_;
};
#else
// One thread only: locking is a no-op.
class Mutex {
 public:
  void lock() {}
  void unlock() {}
  bool try_lock() { return true; }
};
#endif

class LockGuard {
 public:
  explicit LockGuard(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~LockGuard() { mutex_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Mutex& mutex_;
};

}  // namespace spindle::core
