// Fuzz target `input_map`: a player's input map (platform::Devices::parse_map) over a game's
// default bindings. A refusal names the map and changes no binding; an accepted map is written
// back by map_text() in a form that parses to the same bindings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include <spindle/gameplay/input.h>
#include <spindle/platform/devices.h>

#include "fuzz_support.h"

namespace {

struct Rig {
  spindle::core::Input input;
  std::unique_ptr<spindle::platform::Devices> devices;
  Rig() {
    for (const char* name : {"jump", "left", "right", "fire", "pause", "look up"})
      (void)input.add_action(name);
    auto opened = spindle::platform::Devices::open({.driver = "dummy"});
    SPINDLE_FUZZ_CHECK(opened.ok(), opened.status().message());
    devices = std::move(opened).value();
  }
  void defaults() {
    using spindle::core::ActionId;
    const auto bind = [&](const char* action, const char* control) {
      const spindle::core::Status s = devices->bind(input.find_action(action), control);
      SPINDLE_FUZZ_CHECK(s, s.message());
    };
    for (std::uint32_t a = 0; a < input.action_count(); ++a)
      devices->unbind(ActionId(static_cast<std::uint16_t>(a)));
    bind("jump", "key:Space");
    bind("jump", "button:a");
    bind("left", "axis:leftx-");
    bind("fire", "mouse:1");
    bind("pause", "key:Escape");
  }
  std::string map() const {
    auto text = devices->map_text(input);
    SPINDLE_FUZZ_CHECK(text.ok(), text.status().message());
    return text.value();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  spindle::fuzz::quiet_logs();
  static Rig* rig = [] {
    ::setenv("SDL_VIDEODRIVER", "dummy", 1);
    return new Rig;  // lives for the process: SDL is opened once
  }();
  rig->defaults();
  const std::string before = rig->map();

  const spindle::core::Status st =
      rig->devices->parse_map(spindle::fuzz::text_of(data, size), "fuzz.map", rig->input);
  spindle::fuzz::outcome(st.ok(), st.message());
  if (!st) {
    SPINDLE_FUZZ_CHECK(starts_with(st.message(), "fuzz.map"), st.message());
    SPINDLE_FUZZ_CHECK(rig->map() == before, "a refused map changed the bindings");
    return 0;
  }
  const std::string after = rig->map();
  const spindle::core::Status again = rig->devices->parse_map(after, "written.map", rig->input);
  SPINDLE_FUZZ_CHECK(again, again.message() + "\nwritten:\n" + after);
  SPINDLE_FUZZ_CHECK(rig->map() == after,
                     "the written map reads back to other bindings:\n" + after);
  return 0;
}
