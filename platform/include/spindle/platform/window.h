// Window: an SDL2 window that shows a picture the game hands it each frame (the renderer's
// image, or any RGBA8 pixels), through an SDL streaming texture. Headless (SDL's `dummy` video
// driver, chosen by WindowConfig::driver or the SDL_VIDEODRIVER variable) everything works the
// same and nothing is shown; read_pixels() then still returns what was presented. With no display
// at all, open() falls back to the dummy driver by itself (WindowConfig::fallback_headless).
//
// Usage:
//
//   auto opened = spindle::platform::Window::open({.title = "My game", .width = 1280,
//                                                  .height = 720, .vsync = true});
//   if (!opened) { log(opened.status().message()); return 1; }   // says what and why
//   std::unique_ptr<spindle::platform::Window> window = std::move(opened).value();
//   ...
//   const spindle::render::Image& img = renderer.image();         // or any RGBA8 buffer
//   window->present({img.data(), img.width(), img.height(), img.stride()});
//   window->set_fullscreen(!window->fullscreen());                // e.g. on Alt+Enter
//
// A pixel is a std::uint32_t whose bytes in memory are R, G, B, A (render::Image's layout).
// present() stretches the picture to the window; resizing the window (by the user, or
// set_size()) needs nothing from the game. The time present() spends copying pixels into the
// texture is measured (last_copy_ns()). SDL's video subsystem is shared: several windows, the
// Devices pump and the audio device may live side by side; the first to start video picks the
// driver.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/result.h>

namespace spindle::platform {

// Pixels to show: width x height, rows `stride` pixels apart (0: width). Not owned.
struct PixelView {
  const std::uint32_t* pixels = nullptr;
  int width = 0;
  int height = 0;
  int stride = 0;
};

struct WindowConfig {
  std::string title = "Spindle";
  int width = 1280;  // the window's size in screen coordinates, 1..16384
  int height = 720;
  bool resizable = true;
  bool fullscreen = false;  // borderless at the desktop's resolution
  bool vsync = true;        // present() waits for the display's refresh
  // SDL video driver: "" for SDL's choice (or SDL_VIDEODRIVER), "dummy" for headless runs.
  std::string driver{};
  // With no display (SDL's choice of driver fails: a server, CI), open on "dummy" instead and
  // say so in the log, so the same game runs headless. Off: the failure is the result.
  bool fallback_headless = true;
};

class Window {
 public:
  // Opens a window; an error names the setting or what SDL said (no display, a bad driver).
  static core::Result<std::unique_ptr<Window>> open(const WindowConfig& config);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  // Shows `view` (stretched to the window). An empty view or a null pointer is an error, and
  // nothing is shown; a new size re-creates the texture (logged once per size change).
  core::Status present(PixelView view);
  // The last presented picture as SDL drew it, `width() x height()` of the drawable area, RGBA8
  // rows without padding; empty if nothing was presented or the driver cannot read back.
  std::vector<std::uint32_t> read_pixels() const;

  void set_title(std::string_view title);
  std::string title() const;
  core::Status set_fullscreen(bool on);
  bool fullscreen() const { return fullscreen_; }
  core::Status set_vsync(bool on);
  bool vsync() const { return vsync_; }  // present() waits for a refresh (never headless)
  void set_size(int width, int height);
  // The drawable size in pixels (follows resizes once the pump has seen them).
  int width() const;
  int height() const;
  bool focused() const { return focused_; }
  // Frames presented, and the nanoseconds the last present() spent copying pixels.
  std::uint64_t frames_presented() const { return frames_; }
  std::int64_t last_copy_ns() const { return last_copy_ns_; }
  const char* driver() const;  // SDL's video driver name
  bool headless() const;       // nothing is shown: SDL's dummy or offscreen driver
  std::uint32_t sdl_id() const { return id_; }

  // For Devices: window events (resize, focus) from the pump.
  void on_focus(bool focused) { focused_ = focused; }

 private:
  Window() = default;
  struct Sdl;
  std::unique_ptr<Sdl> sdl_;
  std::uint32_t id_ = 0;
  bool fullscreen_ = false;
  bool vsync_ = false;
  bool focused_ = true;
  std::uint64_t frames_ = 0;
  std::int64_t last_copy_ns_ = 0;
};

}  // namespace spindle::platform
