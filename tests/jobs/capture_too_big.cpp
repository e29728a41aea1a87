// Must NOT compile: a job whose callable holds more than kCaptureBytes. CTest builds this file
// and expects the compiler to stop with the job system's static_assert message, so a callable
// that would not fit a job slot is reported when the game is built, not run inline at run time.
#include <array>

#include "spindle/jobs/job_system.h"

int main() {
  spindle::jobs::JobSystem js;
  spindle::jobs::Counter counter;
  std::array<char, spindle::jobs::kCaptureBytes + 1> big{};
  js.run(counter, {"too big"}, [big] { (void)big; });
  js.wait(counter);
  return 0;
}
