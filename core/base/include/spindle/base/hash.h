// A 64-bit hash for world state and determinism checks: same bytes in, same hash out, on every
// platform and in every job mode.
//
// Usage:
//
//   spindle::core::Hasher h;
//   h.add(entity.bits());
//   h.add_bytes(&position, sizeof position);
//   std::uint64_t digest = h.value();
//
// Order matters: add() the same values in the same order to get the same digest. Floats are
// hashed by their bit patterns, so -0.0f and 0.0f differ and any NaN payload counts; that is what
// a determinism check wants (bit-identical state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace spindle::core {

// splitmix64's finaliser: every input bit affects every output bit. Also a cheap deterministic
// per-object random number: mix64(seed ^ index).
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Hasher {
 public:
  void add(std::uint64_t v) {
    state_ = mix64(state_ ^ (v + kGolden + (state_ << 6) + (state_ >> 2)));
  }
  void add_bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (size >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      add(word);
      p += 8;
      size -= 8;
    }
    std::uint64_t tail = size;  // the length keeps "ab" + "" apart from "a" + "b"
    for (std::size_t i = 0; i < size; ++i) tail = (tail << 8) | p[i];
    add(tail);
  }
  std::uint64_t value() const { return mix64(state_); }

 private:
  static constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;
  std::uint64_t state_ = 0x243f6a8885a308d3ull;
};

}  // namespace spindle::core
