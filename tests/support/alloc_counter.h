// Counting replacements of the global operator new/delete, for tests that prove a path
// allocates nothing. Link alloc_counter.cpp into a test binary of its own (it replaces the
// operators for the whole binary) and compare heap_allocations() before and after.
//
//   SPINDLE_REQUIRE_ALLOCATION_COUNTING();         // skips where counting cannot work
//   const long before = spindle::test::heap_allocations();
//   run_frame();
//   EXPECT_EQ(spindle::test::heap_allocations() - before, 0);
#pragma once

#include <gtest/gtest.h>

namespace spindle::test {

// Calls of any operator new (plain, array, aligned, nothrow) since the program started.
long heap_allocations();

// The executable's replacements take precedence over the sanitizer runtimes' own operator new
// (which stay interposed on malloc underneath), so counting works in every build. Kept as a
// switch for toolchains where it does not.
inline constexpr bool kAllocationCountingPossible = true;

}  // namespace spindle::test

#define SPINDLE_REQUIRE_ALLOCATION_COUNTING()        \
  if (!::spindle::test::kAllocationCountingPossible) \
  GTEST_SKIP() << "operator new cannot be replaced in this build"
