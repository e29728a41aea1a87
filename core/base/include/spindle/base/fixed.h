// Q20.12 fixed point: 20 integer bits (sign included) and 12 fraction bits in an int32, the format
// of the PS1's geometry coprocessor. The tiny-target profile computes with it where a float
// would need an FPU the target lacks; the same inputs give the same bits on every CPU.
//
// Usage:
//
//   using spindle::core::fixed;
//   fixed speed = fixed::from_double(1.5);       // conversions round to nearest
//   fixed x = fixed::from_int(3) + speed * dt;    // + - * / as on numbers
//   std::int32_t cell = x.floor_to_int();         // 4 (floor, as for negative values too)
//   fixed d = fixed::sqrt(x * x + y * y);         // exact integer square root
//
// Range and steps: raw values -2^31 .. 2^31-1, so values from -524288 to 524287.999755859375 in
// steps of 1/4096 (0.000244140625).
//
// The rules, the same on every CPU (integer operations only, no floating point):
// - + and -: exact, or out of range: overflow.
// - *: the 64-bit product of the raw values, rounded to the nearest 1/4096 (halves up, towards
//   +infinity), then range-checked. 32-bit CPUs do the 64-bit step in two or three instructions.
// - /: the dividend widened and shifted left by 12, divided by the divisor with C++'s truncation
//   towards zero, then range-checked.
// - sqrt(): floor of the exact square root (to the 1/4096 below it).
// - from_double() / from_float(): nearest step, halves away from zero; values out of range
//   saturate to min() / max(), NaN gives 0. from_int() is exact inside the range.
// - Overflow (a result out of range) and division by zero are programming errors: a failed
//   SPINDLE_ASSERT in builds with asserts. Without asserts the result is defined anyway, the same
//   on every CPU (never C++ undefined behaviour): + - * wrap modulo 2^32 on the raw value as the
//   hardware does, x / 0 gives max() (x > 0), min() (x < 0) or 0 (x == 0).
// - Comparisons compare raw values; there is no NaN, no infinity and no negative zero, so equal
//   values hash equal (Hasher hashes the raw int32, little-endian on every supported CPU).
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstdint>
#include <limits>

#include <spindle/base/assert.h>

namespace spindle::core {

namespace detail {
// ceil(16 * sqrt(i + 1)) for i in [0, 256): fixed::sqrt()'s first guess, from the top 8 of 16
// normalised bits (integers only, computed at compile time).
inline constexpr std::array<std::uint16_t, 256> kSqrtSeed = [] {
  std::array<std::uint16_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    const std::uint32_t n = (i + 1) * 256;  // (16 sqrt(i + 1))^2
    std::uint32_t r = 0;
    while (r * r < n) ++r;  // the smallest r with r^2 >= n
    t[i] = static_cast<std::uint16_t>(r);
  }
  return t;
}();
}  // namespace detail

class fixed {
 public:
  static constexpr int kFractionBits = 12;
  static constexpr std::int32_t kOneRaw = std::int32_t{1} << kFractionBits;
  static constexpr std::int32_t kMaxInt = std::numeric_limits<std::int32_t>::max() >> kFractionBits;
  static constexpr std::int32_t kMinInt = std::numeric_limits<std::int32_t>::min() >> kFractionBits;

  constexpr fixed() = default;

  static constexpr fixed from_raw(std::int32_t raw) {
    fixed f;
    f.raw_ = raw;
    return f;
  }
  static constexpr fixed from_int(std::int32_t v) {
    SPINDLE_ASSERTF(v >= kMinInt && v <= kMaxInt, "fixed::from_int(%d): outside -524288..524287",
                    static_cast<int>(v));
    return from_raw(static_cast<std::int32_t>(static_cast<std::uint32_t>(v) << kFractionBits));
  }
  static constexpr fixed from_double(double v) {
    if (!(v == v)) return fixed{};  // NaN
    const double scaled = v * kOneRaw;
    if (scaled >= 2147483647.0) return max();
    if (scaled <= -2147483648.0) return min();
    const double rounded = scaled < 0 ? scaled - 0.5 : scaled + 0.5;
    return from_raw(static_cast<std::int32_t>(rounded));  // truncation after the half: nearest
  }
  static constexpr fixed from_float(float v) { return from_double(static_cast<double>(v)); }
  static constexpr fixed max() { return from_raw(std::numeric_limits<std::int32_t>::max()); }
  static constexpr fixed min() { return from_raw(std::numeric_limits<std::int32_t>::min()); }
  static constexpr fixed epsilon() { return from_raw(1); }  // 1/4096
  static constexpr fixed one() { return from_raw(kOneRaw); }

  constexpr std::int32_t raw() const { return raw_; }
  constexpr double to_double() const { return static_cast<double>(raw_) / kOneRaw; }
  constexpr float to_float() const { return static_cast<float>(to_double()); }
  // floor(value): an arithmetic shift, towards -infinity for negative values too.
  constexpr std::int32_t floor_to_int() const { return raw_ >> kFractionBits; }

  friend constexpr fixed operator+(fixed a, fixed b) {
    const std::int64_t wide = std::int64_t{a.raw_} + b.raw_;
    return narrow(wide, "+");
  }
  friend constexpr fixed operator-(fixed a, fixed b) {
    const std::int64_t wide = std::int64_t{a.raw_} - b.raw_;
    return narrow(wide, "-");
  }
  constexpr fixed operator-() const { return narrow(-std::int64_t{raw_}, "unary -"); }
  friend constexpr fixed operator*(fixed a, fixed b) {
    const std::int64_t product = std::int64_t{a.raw_} * b.raw_;
    return narrow((product + (std::int64_t{1} << (kFractionBits - 1))) >> kFractionBits, "*");
  }
  friend constexpr fixed operator/(fixed a, fixed b) {
    if (b.raw_ == 0) {
      SPINDLE_ASSERTF(false, "fixed: %f / 0", a.to_double());
      return a.raw_ > 0 ? max() : a.raw_ < 0 ? min() : fixed{};
    }
    const std::int64_t quotient = (std::int64_t{a.raw_} * kOneRaw) / b.raw_;
    return narrow(quotient, "/");
  }
  constexpr fixed& operator+=(fixed b) { return *this = *this + b; }
  constexpr fixed& operator-=(fixed b) { return *this = *this - b; }
  constexpr fixed& operator*=(fixed b) { return *this = *this * b; }
  constexpr fixed& operator/=(fixed b) { return *this = *this / b; }

  friend constexpr bool operator==(fixed a, fixed b) = default;
  friend constexpr std::strong_ordering operator<=>(fixed a, fixed b) = default;

  // floor(sqrt(v)) to the step below; v < 0 is a programming error (0 without asserts).
  static constexpr fixed sqrt(fixed v) {
    if (v.raw_ <= 0) {
      SPINDLE_ASSERTF(v.raw_ == 0, "fixed::sqrt(%f): negative", v.to_double());
      return fixed{};
    }
    // raw(result) = floor(sqrt(n)), n = raw(v) * 4096 < 2^43: Newton's iteration from above, which
    // never undershoots and stops at the floor, from a guess >= sqrt(n) good to about 7 bits (a
    // table of 256): two or three divisions instead of a bit-by-bit loop of 11 to 22 rounds.
    const std::uint64_t n = static_cast<std::uint64_t>(v.raw_) << kFractionBits;
    // n = m * 4^s + rest with m in [2^14, 2^16): sqrt(n) < sqrt(m + 1) * 2^s
    //   <= 16 sqrt(top + 1) * 2^s, top = m >> 8 the guess's index.
    const int bits = 64 - std::countl_zero(n);  // >= 13: raw(v) >= 1
    const int s = bits > 16 ? (bits - 15) / 2 : 0;
    const auto top = static_cast<std::uint32_t>(n >> (2 * s + 8));
    std::uint64_t root = std::uint64_t{detail::kSqrtSeed[top]} << s;
    for (;;) {
      const std::uint64_t next = (root + n / root) >> 1;
      if (next >= root) break;
      root = next;
    }
    return from_raw(static_cast<std::int32_t>(root));
  }

 private:
  // The 32-bit result of a wider one: checked, then (without asserts) wrapped modulo 2^32.
  static constexpr fixed narrow(std::int64_t wide, const char* op) {
    SPINDLE_ASSERTF(wide >= std::numeric_limits<std::int32_t>::min() &&
                        wide <= std::numeric_limits<std::int32_t>::max(),
                    "fixed overflow in %s: raw result %lld is outside the int32 range", op,
                    static_cast<long long>(wide));
    (void)op;
    return from_raw(static_cast<std::int32_t>(static_cast<std::uint32_t>(wide)));
  }

  std::int32_t raw_ = 0;
};

}  // namespace spindle::core
