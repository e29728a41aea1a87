// run(): the loop a game's main calls. Each frame: the engine's frame (the attached Devices pump
// SDL's events and write input at its start; fixed simulation steps; presentation stages), then
// the picture the game hands back is shown in the window, then pacing: vsync when the window
// has it, else sleeping (not spinning) to `target_fps` when set. Ends when something requests
// quit (a closed window, a stage, Escape bound by the game) or after `max_frames`.
//
// Usage (with a renderer: its image is shown as it is after each frame):
//
//   spindle::platform::RunStats stats =
//       spindle::platform::run(engine, window.get(), renderer.image(), {.target_fps = 60});
//
// Any RGBA8 picture works: an image type with data(), width(), height() and stride() (in
// pixels), or a function that returns a PixelView each frame.
//   std::printf("frames=%llu median_ms=%.3f p99_ms=%.3f\n", ...);
//
// Headless runs pass no window (nullptr) and usually a fixed frame time (`fixed_delta_ns`), so a
// run advances the same game time whatever the machine: the same inputs give the same world.
// The window's title shows the FPS once a second when `fps_in_title` is set.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>

#include <spindle/platform/window.h>

namespace spindle::core {
class Engine;
}

namespace spindle::platform {

struct RunConfig {
  std::uint64_t max_frames = 0;     // 0: until quit
  double target_fps = 0;            // > 0: sleep to this rate unless the window has vsync
  std::int64_t fixed_delta_ns = 0;  // > 0: every frame advances this much game time
  bool fps_in_title = true;
};

struct RunStats {
  std::uint64_t frames = 0;
  double median_ms = 0;  // frame time, over the last kWindow frames
  double p99_ms = 0;
  std::uint64_t present_errors = 0;  // logged once
  static constexpr std::uint32_t kWindow = 4096;
};

RunStats run(core::Engine& engine, Window* window, const std::function<PixelView()>& picture,
             const RunConfig& config = {});

// `image` (render::Image, or any type shaped like it) is read after every frame; it must outlive
// the call.
template <class Image>
requires requires(const Image& i) {
  { i.data() } -> std::convertible_to<const std::uint32_t*>;
  { i.width() } -> std::convertible_to<int>;
  { i.height() } -> std::convertible_to<int>;
  { i.stride() } -> std::convertible_to<int>;
}
RunStats run(core::Engine& engine, Window* window, const Image& image,
             const RunConfig& config = {}) {
  return run(
      engine, window,
      [&image] {
        return PixelView{image.data(), image.width(), image.height(), image.stride()};
      },
      config);
}

}  // namespace spindle::platform
