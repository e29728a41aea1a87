// Fuzz target `set_args`: "--set section.key=value" on a command line
// (core::Settings::apply_command_line), one argument per input line. All or none: a refusal
// names the command line and leaves every value as it was.
#include <cstddef>
#include <cstdint>
#include <string>

#include <spindle/base/config.h>

#include "fuzz_support.h"

namespace {

std::string snapshot(const spindle::core::Settings& s) {
  std::string out;
  for (const std::string& key : s.keys())
    out += key + '=' + s.get_string(key, "") + " @" + s.origin(key) + '\n';
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  spindle::fuzz::quiet_logs();
  spindle::core::Settings s;
  s.define_int("video.width", 1280, 320, 7680);
  s.define_bool("video.vsync", true);
  s.define_float("audio.volume", 0.8, 0.0, 1.0);
  const spindle::core::Status good =
      s.load_string("[video]\nwidth = 1920\n[audio]\nvolume = 0.5\n", "good.ini");
  SPINDLE_FUZZ_CHECK(good, good.message());
  const std::string before = snapshot(s);

  const spindle::fuzz::Args args =
      spindle::fuzz::split_args(spindle::fuzz::text_of(data, size), "game");
  const spindle::core::Status st = s.apply_command_line(args.argc(), args.argv.data());
  spindle::fuzz::outcome(st.ok(), st.message());
  if (!st) {
    SPINDLE_FUZZ_CHECK(starts_with(st.message(), "command line"), st.message());
    SPINDLE_FUZZ_CHECK(snapshot(s) == before, "a refused command line changed the settings");
    return 0;
  }
  SPINDLE_FUZZ_CHECK(s.get_int("video.width") >= 320 && s.get_int("video.width") <= 7680, "");
  const double volume = s.get_float("audio.volume");
  SPINDLE_FUZZ_CHECK(volume >= 0.0 && volume <= 1.0, std::to_string(volume));
  // Overrides stay in force over a file loaded after them.
  const std::string with_overrides = snapshot(s);
  const spindle::core::Status again =
      s.load_string("[video]\nwidth = 1920\n[audio]\nvolume = 0.5\n", "good.ini");
  SPINDLE_FUZZ_CHECK(again, again.message());
  SPINDLE_FUZZ_CHECK(snapshot(s) == with_overrides, "a reload dropped an override");
  return 0;
}
