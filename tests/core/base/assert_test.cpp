#include <spindle/base/assert.h>

#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace spindle::core {

// Defined in assert_disabled_test.cpp, compiled with SPINDLE_ASSERTS 0.
int run_disabled_asserts(int& evaluated);

namespace {

using test::AssertFailure;
using test::ThrowOnAssert;

TEST(Assert, PassingAssertDoesNothing) {
  ThrowOnAssert hook;
  int calls = 0;
  SPINDLE_ASSERT(++calls == 1, "evaluated once");
  SPINDLE_ASSERTF(calls == 1, "calls is %d", calls);
  EXPECT_EQ(calls, 1);
}

TEST(Assert, HookReceivesFileLineExpressionAndMessage) {
  ThrowOnAssert hook;
  int line = 0;
  try {
    line = __LINE__ + 1;
    SPINDLE_ASSERT(1 + 1 == 3, "arithmetic still works");
    FAIL() << "the assert did not fire";
  } catch (const AssertFailure& f) {
    EXPECT_NE(f.file.find("assert_test.cpp"), std::string::npos) << f.file;
    EXPECT_EQ(f.line, line);
    EXPECT_EQ(f.expression, "1 + 1 == 3");
    EXPECT_EQ(f.message, "arithmetic still works");
  }
}

TEST(Assert, FormattedMessage) {
  ThrowOnAssert hook;
  std::size_t index = 7, count = 5;
  try {
    SPINDLE_ASSERTF(index < count, "index %zu below count %zu", index, count);
    FAIL() << "the assert did not fire";
  } catch (const AssertFailure& f) {
    EXPECT_EQ(f.expression, "index < count");
    EXPECT_EQ(f.message, "index 7 below count 5");
  }
}

TEST(Assert, SetHandlerReturnsPreviousAndNullRestoresDefault) {
  AssertHandler first = set_assert_handler(&ThrowOnAssert::handler);
  EXPECT_EQ(assert_handler(), &ThrowOnAssert::handler);
  EXPECT_EQ(set_assert_handler(first), &ThrowOnAssert::handler);
  set_assert_handler(nullptr);
  EXPECT_EQ(assert_handler(), &default_assert_handler);
}

TEST(AssertDeathTest, DefaultHandlerPrintsAndAborts) {
  SPINDLE_DEATH_TEST_STYLE();
  EXPECT_DEATH(SPINDLE_ASSERT(2 < 1, "two is below one"),
               "assert_test.cpp:[0-9]+: assertion failed: 2 < 1: two is below one");
}

TEST(AssertDeathTest, HandlerThatReturnsStillAborts) {
  SPINDLE_DEATH_TEST_STYLE();
  EXPECT_DEATH(
      {
        set_assert_handler([](const char*, int, const char*, const char* message) {
          std::fprintf(stderr, "hook saw: %s\n", message);
        });
        SPINDLE_ASSERT(false, "must not continue");
      },
      "hook saw: must not continue");
}

TEST(Assert, DisabledAssertsDoNotEvaluateOrFire) {
  ThrowOnAssert hook;
  int evaluated = 0;
  EXPECT_NO_THROW(run_disabled_asserts(evaluated));
  EXPECT_EQ(evaluated, 0);
}

}  // namespace
}  // namespace spindle::core
