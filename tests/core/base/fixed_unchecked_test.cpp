// spindle::core::fixed in a build without asserts (this binary only: fixed.h is inline, so it must
// not share a program with the checked build's copy): overflow and division by zero still give
// the defined results fixed.h states, the same on every CPU.
#undef SPINDLE_ASSERTS
#define SPINDLE_ASSERTS 0
#include <spindle/base/fixed.h>

#include <cstdint>

#include <gtest/gtest.h>

namespace spindle::core {
namespace {

TEST(FixedUnchecked, OverflowWrapsTheRawValueModulo2To32) {
  EXPECT_EQ(fixed::max() + fixed::epsilon(), fixed::min());
  EXPECT_EQ(fixed::min() - fixed::epsilon(), fixed::max());
  EXPECT_EQ(-fixed::min(), fixed::min());
  // 1000 * 1000 = 1e6: raw 4096e6 wraps to 4096e6 - 2^32.
  EXPECT_EQ((fixed::from_int(1000) * fixed::from_int(1000)).raw(),
            static_cast<std::int32_t>(std::int64_t{4'096'000'000} - (std::int64_t{1} << 32)));
}

TEST(FixedUnchecked, DivisionByZeroGivesTheEndOfTheRangeOrZero) {
  EXPECT_EQ(fixed::one() / fixed{}, fixed::max());
  EXPECT_EQ(-fixed::one() / fixed{}, fixed::min());
  EXPECT_EQ(fixed{} / fixed{}, fixed{});
  EXPECT_EQ(fixed::sqrt(-fixed::one()), fixed{});
}

}  // namespace
}  // namespace spindle::core
