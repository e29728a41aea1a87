// The guard of the SINGLE_THREADED suites (tests/support/single_threaded.cpp): a suite that claims
// to start no thread, and does, must end with a message, not pass silently outside
// ThreadSanitizer's sight. This suite is declared SINGLE_THREADED itself.
#include <gtest/gtest.h>

#include <thread>

namespace {

TEST(SingleThreadedGuard, AThreadStartedInADeclaredSingleThreadedSuiteEndsTheProcess) {
  EXPECT_DEATH(std::thread([] {}).join(), "declared SINGLE_THREADED .* but started a thread");
}

}  // namespace
