// Fuzz target `loadtest_cli`: spindle_loadtest's command line, one argument per input line, run
// with --dry-run (checked and described, nothing run or written). Exit code 0 (a run it would do,
// or --help) with nothing on stderr, or 2 with one message that names the program.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_support.h"
#include "loadtest.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  spindle::fuzz::quiet_logs();
  const spindle::fuzz::Args args = spindle::fuzz::split_args(spindle::fuzz::text_of(data, size),
                                                             "spindle_loadtest", {"--dry-run"});
  std::ostringstream out, err;
  const int code = spindle::loadtest::run_loadtest(args.argc(), args.argv.data(), out, err);
  SPINDLE_FUZZ_CHECK(code == 0 || code == 2,
                     "exit code " + std::to_string(code) + ": " + err.str());
  spindle::fuzz::outcome(code == 0, err.str());
  if (code == 0) {
    SPINDLE_FUZZ_CHECK(err.str().empty(), err.str());
    SPINDLE_FUZZ_CHECK(!out.str().empty(), "a dry run said nothing");
  } else {
    SPINDLE_FUZZ_CHECK(starts_with(err.str(), "spindle_loadtest: "), err.str());
  }
  return 0;
}
