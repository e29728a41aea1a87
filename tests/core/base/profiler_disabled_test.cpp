// Compiled as a build with the profiler macros off: zones must vanish.
#undef SPINDLE_PROFILER
#define SPINDLE_PROFILER 0
#include <spindle/base/profiler.h>

namespace spindle::core {

void run_compiled_out_zones() {
  SPINDLE_PROFILE_ZONE("compiled out");
  { SPINDLE_PROFILE_ZONE("compiled out"); }
}

}  // namespace spindle::core
