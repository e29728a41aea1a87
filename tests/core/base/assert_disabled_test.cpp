// Compiled as a build with asserts off: the checks must vanish but still compile.
#undef SPINDLE_ASSERTS
#define SPINDLE_ASSERTS 0
#include <spindle/base/assert.h>

namespace spindle::core {

int run_disabled_asserts(int& evaluated) {
  // Failing conditions with side effects: neither evaluated nor reported.
  SPINDLE_ASSERT(++evaluated == 100, "never checked");
  SPINDLE_ASSERTF(++evaluated < 0, "never formatted: %d", evaluated);
  SPINDLE_ASSERTF(false, "no arguments at all");
  return evaluated;
}

}  // namespace spindle::core
