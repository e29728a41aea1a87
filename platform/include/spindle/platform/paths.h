// Where a game's files live. base_path(): the folder the program is in (assets shipped beside
// it). pref_path(): a folder of the user's that the game may write (saves, settings, input maps),
// made if it is missing: $XDG_DATA_HOME/<organisation>/<application>/ on Linux, falling back to
// ~/.local/share. Both end in '/'; neither needs a window or SDL to be started.
//
// Usage:
//
//   const auto prefs = spindle::platform::pref_path("Spindle", "asteroids");
//   if (!prefs) { log(prefs.status().message()); }                  // says which name and why
//   devices->save_map(prefs.value() + "controls.map", input);
//   const auto assets = spindle::platform::base_path().value() + "assets/";
#pragma once

#include <string>
#include <string_view>

#include <spindle/base/result.h>

namespace spindle::platform {

core::Result<std::string> base_path();
// Names are not empty, at most 255 bytes, and hold no '/', '\\' or control characters.
core::Result<std::string> pref_path(std::string_view organisation, std::string_view application);

}  // namespace spindle::platform
