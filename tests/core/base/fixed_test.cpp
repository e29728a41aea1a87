// spindle::core::fixed (Q20.12): each rule of fixed.h against a reference computed another way
// (integer floor division instead of shifts, long double instead of integers), over random raw
// values, and the overflow rules as failed asserts (fixed_unchecked_test.cpp: without asserts).
#include <spindle/base/fixed.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "test_support.h"

namespace spindle::core {
namespace {

using test::AssertFailure;
using test::ThrowOnAssert;

// floor(n / d) for d > 0, by division and a correction (not by shifting).
std::int64_t floor_div(std::int64_t n, std::int64_t d) {
  std::int64_t q = n / d;
  if (n % d != 0 && n < 0) --q;
  return q;
}

// Compile time: the type is usable in constants (the swarm's defaults are constexpr).
static_assert(fixed::from_int(3) * fixed::from_double(0.5) == fixed::from_double(1.5));
static_assert(fixed::from_int(-7).floor_to_int() == -7);
static_assert(fixed::from_double(-0.25).floor_to_int() == -1);
static_assert(fixed::sqrt(fixed::from_int(16)) == fixed::from_int(4));
static_assert(sizeof(fixed) == 4);

TEST(Fixed, ConversionsRoundToTheNearestStepAndSaturate) {
  EXPECT_EQ(fixed::from_double(1.0).raw(), 4096);
  EXPECT_EQ(fixed::from_double(1.0 / 4096).raw(), 1);
  EXPECT_EQ(fixed::from_double(0.49 / 4096).raw(), 0);
  EXPECT_EQ(fixed::from_double(0.5 / 4096).raw(), 1);    // halves away from zero
  EXPECT_EQ(fixed::from_double(-0.5 / 4096).raw(), -1);  // on both sides
  EXPECT_EQ(fixed::from_double(-1.5).raw(), -6144);
  EXPECT_EQ(fixed::from_double(1e9), fixed::max());
  EXPECT_EQ(fixed::from_double(-1e9), fixed::min());
  EXPECT_EQ(fixed::from_double(std::numeric_limits<double>::infinity()), fixed::max());
  EXPECT_EQ(fixed::from_double(std::nan("")), fixed{});
  EXPECT_EQ(fixed::from_float(0.25f).raw(), 1024);
  EXPECT_EQ(fixed::from_int(fixed::kMaxInt).raw(), fixed::kMaxInt * 4096);
  EXPECT_EQ(fixed::from_int(fixed::kMinInt), fixed::min());
  EXPECT_DOUBLE_EQ(fixed::from_raw(-6144).to_double(), -1.5);
  EXPECT_DOUBLE_EQ(fixed::max().to_double(), 524288.0 - 1.0 / 4096);
  // floor, also for negative values between integers
  EXPECT_EQ(fixed::from_double(2.9).floor_to_int(), 2);
  EXPECT_EQ(fixed::from_double(-2.1).floor_to_int(), -3);
  EXPECT_EQ(fixed::epsilon().floor_to_int(), 0);
  EXPECT_EQ((-fixed::epsilon()).floor_to_int(), -1);
}

TEST(Fixed, ArithmeticFollowsItsStatedRulesOnRandomValues) {
  std::mt19937 rng(20261127u);
  // Raw values of every magnitude: a random bit width, then a random value of that width.
  auto any = [&](int max_bits) {
    const int bits = std::uniform_int_distribution<int>(0, max_bits)(rng);
    const std::int64_t span = std::int64_t{1} << bits;
    return static_cast<std::int32_t>(
        std::uniform_int_distribution<std::int64_t>(-span, span - 1)(rng));
  };
  int products = 0, quotients = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::int32_t a = any(31), b = any(31);
    const fixed fa = fixed::from_raw(a), fb = fixed::from_raw(b);
    // + and -: exact when in range.
    const std::int64_t sum = std::int64_t{a} + b, diff = std::int64_t{a} - b;
    if (sum >= INT32_MIN && sum <= INT32_MAX) {
      ASSERT_EQ((fa + fb).raw(), sum);
    }
    if (diff >= INT32_MIN && diff <= INT32_MAX) {
      ASSERT_EQ((fa - fb).raw(), diff);
    }
    // *: the nearest step, halves up.
    const std::int64_t product = floor_div(std::int64_t{a} * b + 2048, 4096);
    if (product >= INT32_MIN && product <= INT32_MAX) {
      ASSERT_EQ((fa * fb).raw(), product) << a << " * " << b;
      ASSERT_EQ((fb * fa).raw(), product);
      ++products;
    }
    // /: truncation towards zero, checked against long double.
    if (b != 0) {
      const long double exact = static_cast<long double>(a) * 4096.0L / b;
      const long double truncated = std::trunc(exact);
      if (truncated >= INT32_MIN && truncated <= INT32_MAX) {
        const std::int32_t got = (fa / fb).raw();
        // long double may round `exact` across an integer on a CPU where it is a double: allow
        // that one step, but only there.
        if (std::numeric_limits<long double>::digits >= 64) {
          ASSERT_EQ(got, static_cast<std::int64_t>(truncated)) << a << " / " << b;
        } else {
          ASSERT_LE(std::abs(got - static_cast<long double>(truncated)), 1.0L);
        }
        ++quotients;
      }
    }
    // Comparisons are the raw values'.
    ASSERT_EQ(fa < fb, a < b);
    ASSERT_EQ(fa == fb, a == b);
  }
  EXPECT_GT(products, 50000);  // the random widths reach the checked cases
  EXPECT_GT(quotients, 50000);
}

TEST(Fixed, KnownValues) {
  const fixed third = fixed::one() / fixed::from_int(3);
  EXPECT_EQ(third.raw(), 1365);                                                // 1365.33 truncated
  EXPECT_EQ((-fixed::one() / fixed::from_int(3)).raw(), -1365);                // towards zero
  EXPECT_EQ((fixed::from_double(1.5) * fixed::from_double(1.5)).raw(), 9216);  // 2.25 exactly
  // -1/4096 * 0.5 = -0.5/4096: halves round up, to 0; +1/4096 * 0.5 rounds up to 1/4096.
  EXPECT_EQ((-fixed::epsilon() * fixed::from_double(0.5)).raw(), 0);
  EXPECT_EQ((fixed::epsilon() * fixed::from_double(0.5)).raw(), 1);
  fixed x = fixed::from_int(10);
  x += fixed::from_int(5);
  x -= fixed::from_int(3);
  x *= fixed::from_double(0.5);
  x /= fixed::from_int(4);
  EXPECT_EQ(x, fixed::from_double(1.5));
}

TEST(Fixed, SquareRootIsTheExactFloor) {
  std::mt19937 rng(7u);
  for (int i = 0; i < 100000; ++i) {
    const int bits = std::uniform_int_distribution<int>(0, 31)(rng);
    const auto raw = static_cast<std::int32_t>(
        std::uniform_int_distribution<std::int64_t>(0, (std::int64_t{1} << bits) - 1)(rng));
    const std::uint64_t scaled = static_cast<std::uint64_t>(raw) << 12;
    const auto r = static_cast<std::uint64_t>(fixed::sqrt(fixed::from_raw(raw)).raw());
    ASSERT_LE(r * r, scaled) << raw;
    ASSERT_GT((r + 1) * (r + 1), scaled) << raw;
  }
  // Every value below 256, and both sides of every exact square above it (where a guess or a
  // Newton step that is one off would show).
  const auto is_floor = [](std::int32_t raw) {
    const std::uint64_t scaled = static_cast<std::uint64_t>(raw) << 12;
    const auto r = static_cast<std::uint64_t>(fixed::sqrt(fixed::from_raw(raw)).raw());
    return r * r <= scaled && (r + 1) * (r + 1) > scaled;
  };
  for (std::int32_t raw = 1; raw < (1 << 20); ++raw) ASSERT_TRUE(is_floor(raw)) << raw;
  for (std::int64_t root = 64; root * root / 4096 < std::numeric_limits<std::int32_t>::max();
       root += 64) {
    const auto raw = static_cast<std::int32_t>(root * root / 4096);  // an exact square
    ASSERT_TRUE(is_floor(raw)) << raw;
    ASSERT_TRUE(is_floor(raw - 1)) << raw - 1;
    if (raw < std::numeric_limits<std::int32_t>::max()) {
      ASSERT_TRUE(is_floor(raw + 1)) << raw + 1;
    }
  }
  EXPECT_EQ(fixed::sqrt(fixed::from_int(2)).raw(), 5792);  // 1.41406 (1.414213 * 4096 = 5792.6)
  EXPECT_EQ(fixed::sqrt(fixed::epsilon()).raw(), 64);      // sqrt(1/4096) = 1/64
  EXPECT_EQ(fixed::sqrt(fixed::max()).raw(), 2965820);     // sqrt(524288) * 4096, floored
  EXPECT_EQ(fixed::sqrt(fixed{}), fixed{});
}

#if SPINDLE_ASSERTS
TEST(Fixed, OverflowAndDivisionByZeroAreFailedAsserts) {
  ThrowOnAssert guard;
  EXPECT_THROW((void)(fixed::max() + fixed::epsilon()), AssertFailure);
  EXPECT_THROW((void)(fixed::min() - fixed::epsilon()), AssertFailure);
  EXPECT_THROW((void)(-fixed::min()), AssertFailure);
  EXPECT_THROW((void)(fixed::from_int(1000) * fixed::from_int(1000)), AssertFailure);
  EXPECT_THROW((void)(fixed::from_int(1000) / fixed::from_double(0.001)), AssertFailure);
  EXPECT_THROW((void)(fixed::one() / fixed{}), AssertFailure);
  EXPECT_THROW((void)fixed::from_int(524288), AssertFailure);
  EXPECT_THROW((void)fixed::sqrt(-fixed::one()), AssertFailure);
  try {
    (void)(fixed::from_int(1000) * fixed::from_int(1000));
  } catch (const AssertFailure& f) {
    EXPECT_NE(f.message.find("fixed overflow in *"), std::string::npos) << f.message;
  }
  // The edges themselves are in range.
  EXPECT_NO_THROW((void)(fixed::max() - fixed::epsilon() + fixed::epsilon()));
  EXPECT_NO_THROW((void)(fixed::from_int(724) * fixed::from_int(724)));  // 524176
}
#endif

}  // namespace
}  // namespace spindle::core
