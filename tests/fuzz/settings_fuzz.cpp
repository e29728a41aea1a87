// Fuzz target `settings`: a settings file (core::Settings::load_string). A refusal names the file
// and line and leaves every value as the good file before it left them; an accepted file gives
// values every getter reads without failing.
#include <cstddef>
#include <cstdint>
#include <string>

#include <spindle/base/config.h>

#include "fuzz_support.h"

namespace {

spindle::core::Settings defined() {
  spindle::core::Settings s;
  s.define_int("video.width", 1280, 320, 7680);
  s.define_bool("video.vsync", true);
  s.define_float("audio.volume", 0.8, 0.0, 1.0);
  s.define_string("game.scene", "menu");
  return s;
}

constexpr const char* kGood =
    "top = 1\n[video]\nwidth = 1920\nvsync = off\n[audio]\nvolume = 0.25\n[game]\nscene = level1\n";

std::string snapshot(const spindle::core::Settings& s) {
  std::string out;
  for (const std::string& key : s.keys()) out += key + '=' + s.get_string(key, "") + '\n';
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  spindle::fuzz::quiet_logs();
  spindle::core::Settings s = defined();
  const spindle::core::Status good = s.load_string(kGood, "good.ini");
  SPINDLE_FUZZ_CHECK(good, good.message());
  const std::string before = snapshot(s);

  const spindle::core::Status st = s.load_string(spindle::fuzz::text_of(data, size), "fuzz.ini");
  spindle::fuzz::outcome(st.ok(), st.message());
  if (!st) {
    SPINDLE_FUZZ_CHECK(starts_with(st.message(), "fuzz.ini"), st.message());
    SPINDLE_FUZZ_CHECK(snapshot(s) == before, "a refused file changed the settings");
    return 0;
  }
  // Defined keys hold values in their ranges (the getters assert that they parse).
  SPINDLE_FUZZ_CHECK(s.get_int("video.width") >= 320 && s.get_int("video.width") <= 7680, "");
  const double volume = s.get_float("audio.volume");
  SPINDLE_FUZZ_CHECK(volume >= 0.0 && volume <= 1.0, std::to_string(volume));
  (void)s.get_bool("video.vsync");
  (void)s.get_string("game.scene");
  for (const std::string& key : s.keys()) {
    SPINDLE_FUZZ_CHECK(s.has(key), key);
    SPINDLE_FUZZ_CHECK(starts_with(s.origin(key), "fuzz.ini:"), s.origin(key));
    (void)s.get_int(key, 0);
    (void)s.get_float(key, 0.0);
    (void)s.get_bool(key, false);
  }
  return 0;
}
