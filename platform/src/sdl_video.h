// SDL's video (and events, game controller) subsystems, started on first use and shared by the
// windows and the Devices pump of a process. Internal to spindle::platform.
#pragma once

#include <string>

#include <spindle/base/result.h>

namespace spindle::platform::detail {

// Takes a reference on SDL video + game controllers, started on `driver` ("" for SDL's choice)
// if not running yet. Fails with SDL's reason, or if video already runs another driver.
core::Status acquire_video(const std::string& driver);
// As acquire_video, but when `driver` is "" and SDL's choice fails (no display), starts the
// "dummy" driver instead and logs that `who` runs headless. The first error if that fails too.
core::Status acquire_video_or_headless(const std::string& driver, bool fallback,
                                       const std::string& who);
void release_video();

}  // namespace spindle::platform::detail
