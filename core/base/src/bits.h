// Helpers that several of the base library's sources share (not installed). One definition each:
// the sanitizer and cross builds compile a library's sources as one unit (CMAKE_UNITY_BUILD), where
// two files' private copies of a helper would clash.
#pragma once

#include <cstddef>
#include <cstring>

namespace spindle::core::detail {

constexpr bool is_power_of_two(std::size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// `x` rounded up to a multiple of `align`, a power of two.
constexpr std::size_t round_up(std::size_t x, std::size_t align) {
  return (x + align - 1) & ~(align - 1);
}

// Copies `text` (null: empty) into `out`, an array of `out_size` characters with its terminator,
// cut to fit. Says whether all of it fitted.
inline bool copy_text(char* out, std::size_t out_size, const char* text) {
  const std::size_t n = text != nullptr ? std::strlen(text) : 0;
  const std::size_t kept = n < out_size - 1 ? n : out_size - 1;
  if (kept != 0) std::memcpy(out, text, kept);
  out[kept] = '\0';
  return n == kept;
}

}  // namespace spindle::core::detail
