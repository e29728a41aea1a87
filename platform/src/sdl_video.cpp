#include "sdl_video.h"

#include <mutex>

#include <SDL.h>

#include <spindle/base/log.h>

namespace spindle::platform::detail {

namespace {

// SDL_InitSubSystem counts references but is not thread-safe, and the first init picks the
// driver: one lock for every window and pump of the process.
std::mutex& video_mutex() {
  static std::mutex mutex;
  return mutex;
}

constexpr Uint32 kSubsystems = SDL_INIT_VIDEO | SDL_INIT_EVENTS | SDL_INIT_GAMECONTROLLER;

}  // namespace

core::Status acquire_video(const std::string& driver) {
  std::lock_guard lock(video_mutex());
  const bool was_running = SDL_WasInit(SDL_INIT_VIDEO) != 0;
  if (!was_running && !driver.empty()) {
    // Override: a plain hint would lose to the SDL_VIDEODRIVER environment variable.
    SDL_SetHintWithPriority(SDL_HINT_VIDEODRIVER, driver.c_str(), SDL_HINT_OVERRIDE);
  }
  const int rc = SDL_InitSubSystem(kSubsystems);
  if (!was_running && !driver.empty()) SDL_ResetHint(SDL_HINT_VIDEODRIVER);
  const std::string label = driver.empty() ? std::string("SDL's default video driver")
                                           : "SDL video driver '" + driver + "'";
  if (rc != 0) return core::Status::error(label + ": " + SDL_GetError());
  const char* current = SDL_GetCurrentVideoDriver();
  if (!driver.empty() && (current == nullptr || driver != current)) {
    SDL_QuitSubSystem(kSubsystems);
    return core::Status::error(label + ": SDL video already runs driver '" +
                               (current != nullptr ? current : "?") + "' (one per process)");
  }
  return {};
}

core::Status acquire_video_or_headless(const std::string& driver, bool fallback,
                                       const std::string& who) {
  core::Status s = acquire_video(driver);
  if (s || !driver.empty() || !fallback || !acquire_video("dummy")) return s;
  SPINDLE_LOG_INFO(Core, "%s: no display (%s); running headless on SDL's dummy video driver",
                   who.c_str(), s.message().c_str());
  return {};
}

void release_video() {
  std::lock_guard lock(video_mutex());
  SDL_QuitSubSystem(kSubsystems);
}

}  // namespace spindle::platform::detail
