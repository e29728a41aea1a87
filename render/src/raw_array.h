// RawArray<T>: a heap array of trivially copyable elements that resize() does not initialise.
//
// Usage:
//
//   RawArray<Triangle> triangles;
//   triangles.resize(16384);            // allocates; touches no element (no page of it)
//   triangles[made++] = ...;            // write before reading: the contents start unspecified
//   triangles.resize(32768);            // keeps the first 16384, the rest unspecified
//
// The renderer's geometry batches are sized for a million set-up triangles (64 batches of
// RendererConfig::triangles_per_batch), but a frame writes only the ones it makes and reads only
// those. A std::vector would zero every element at construction: 250 MiB written, 2 s on a VM
// whose page faults are slow, and far more under ThreadSanitizer, for a renderer that draws a
// hundred boids. Here pages nobody writes stay untouched, so memory follows what is drawn.
// Allocation goes through operator new, so the tests that count heap allocations see it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace spindle::render {

template <class T>
class RawArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "RawArray leaves elements unconstructed: only for plain data");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

 public:
  RawArray() = default;
  RawArray(const RawArray&) = delete;
  RawArray& operator=(const RawArray&) = delete;
  RawArray(RawArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  RawArray& operator=(RawArray&& other) noexcept {
    if (this != &other) {
      ::operator delete(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~RawArray() { ::operator delete(data_); }

  // n elements: the first min(size(), n) keep their values, the others are unspecified.
  void resize(std::size_t n) {
    if (n == size_) return;
    T* grown = n == 0 ? nullptr : static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_ != 0 && n != 0) std::memcpy(grown, data_, std::min(size_, n) * sizeof(T));
    ::operator delete(data_);
    data_ = grown;
    size_ = n;
  }

  std::size_t size() const { return size_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace spindle::render
