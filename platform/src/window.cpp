#include "spindle/platform/window.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include <SDL.h>

#include <spindle/base/log.h>

#include "sdl_video.h"

namespace spindle::platform {

struct Window::Sdl {
  SDL_Window* window = nullptr;
  SDL_Renderer* renderer = nullptr;
  SDL_Texture* texture = nullptr;
  int texture_w = 0;
  int texture_h = 0;
  bool logged_resize = false;

  ~Sdl() {
    if (texture != nullptr) SDL_DestroyTexture(texture);
    if (renderer != nullptr) SDL_DestroyRenderer(renderer);
    if (window != nullptr) SDL_DestroyWindow(window);
    if (window != nullptr) detail::release_video();
  }
};

namespace {

constexpr int kMaxSide = 16384;

std::string sdl_error(const char* what) {
  return std::string(what) + ": " + SDL_GetError();
}

}  // namespace

core::Result<std::unique_ptr<Window>> Window::open(const WindowConfig& config) {
  if (config.width < 1 || config.width > kMaxSide || config.height < 1 ||
      config.height > kMaxSide) {
    return core::Status::error("window '" + config.title + "': size " +
                               std::to_string(config.width) + "x" + std::to_string(config.height) +
                               " is outside 1..16384");
  }
  const std::string who = "window '" + config.title + "'";
  if (core::Status s =
          detail::acquire_video_or_headless(config.driver, config.fallback_headless, who);
      !s) {
    return core::Status::error(who + ": " + s.message());
  }
  std::unique_ptr<Window> w(new Window());
  w->sdl_ = std::make_unique<Sdl>();
  Uint32 flags = SDL_WINDOW_ALLOW_HIGHDPI;
  if (config.resizable) flags |= SDL_WINDOW_RESIZABLE;
  if (config.fullscreen) flags |= SDL_WINDOW_FULLSCREEN_DESKTOP;
  w->sdl_->window = SDL_CreateWindow(config.title.c_str(), SDL_WINDOWPOS_CENTERED,
                                     SDL_WINDOWPOS_CENTERED, config.width, config.height, flags);
  if (w->sdl_->window == nullptr) {
    detail::release_video();
    return core::Status::error("window '" + config.title + "': " + sdl_error("SDL_CreateWindow"));
  }
  // Any renderer SDL has (GPU-backed where there is one), else its software renderer (headless).
  const Uint32 vsync = config.vsync ? SDL_RENDERER_PRESENTVSYNC : 0;
  w->sdl_->renderer = SDL_CreateRenderer(w->sdl_->window, -1, vsync);
  if (w->sdl_->renderer == nullptr)
    w->sdl_->renderer = SDL_CreateRenderer(w->sdl_->window, -1, SDL_RENDERER_SOFTWARE);
  if (w->sdl_->renderer == nullptr) {
    return core::Status::error("window '" + config.title + "': " + sdl_error("SDL_CreateRenderer"));
  }
  w->id_ = SDL_GetWindowID(w->sdl_->window);
  w->fullscreen_ = config.fullscreen;
  w->vsync_ = config.vsync;
  SDL_RendererInfo info{};
  if (SDL_GetRendererInfo(w->sdl_->renderer, &info) == 0)
    w->vsync_ = config.vsync && (info.flags & SDL_RENDERER_PRESENTVSYNC) != 0;
  // Headless there is no refresh to wait for (offscreen GL may claim vsync and not wait).
  if (w->headless()) w->vsync_ = false;
  return w;
}

Window::~Window() = default;

core::Status Window::present(PixelView view) {
  if (view.pixels == nullptr || view.width < 1 || view.height < 1 || view.width > kMaxSide ||
      view.height > kMaxSide) {
    return core::Status::error("window '" + title() + "': present() of an empty picture (" +
                               std::to_string(view.width) + "x" + std::to_string(view.height) +
                               ")");
  }
  const int stride = view.stride == 0 ? view.width : view.stride;
  if (stride < view.width) {
    return core::Status::error("window '" + title() + "': present() with stride " +
                               std::to_string(stride) + " below the width " +
                               std::to_string(view.width));
  }
  Sdl& s = *sdl_;
  if (s.texture == nullptr || s.texture_w != view.width || s.texture_h != view.height) {
    if (s.texture != nullptr) SDL_DestroyTexture(s.texture);
    s.texture = SDL_CreateTexture(s.renderer, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                  view.width, view.height);
    if (s.texture == nullptr) {
      s.texture_w = s.texture_h = 0;
      return core::Status::error("window '" + title() + "': " + sdl_error("SDL_CreateTexture"));
    }
    if (frames_ > 0 && !s.logged_resize) {
      s.logged_resize = true;
      SPINDLE_LOG_INFO(Core,
                       "window '%s': the presented picture changed size to %dx%d (texture "
                       "re-created; logged once)",
                       title().c_str(), view.width, view.height);
    }
    s.texture_w = view.width;
    s.texture_h = view.height;
  }
  const auto start = std::chrono::steady_clock::now();
  void* dst = nullptr;
  int pitch = 0;
  if (SDL_LockTexture(s.texture, nullptr, &dst, &pitch) != 0)
    return core::Status::error("window '" + title() + "': " + sdl_error("SDL_LockTexture"));
  const std::size_t row_bytes = static_cast<std::size_t>(view.width) * 4;
  for (int y = 0; y < view.height; ++y) {
    std::memcpy(static_cast<std::uint8_t*>(dst) + static_cast<std::ptrdiff_t>(y) * pitch,
                view.pixels + static_cast<std::ptrdiff_t>(y) * stride, row_bytes);
  }
  SDL_UnlockTexture(s.texture);
  last_copy_ns_ =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  SDL_RenderClear(s.renderer);
  SDL_RenderCopy(s.renderer, s.texture, nullptr, nullptr);
  SDL_RenderPresent(s.renderer);
  ++frames_;
  return {};
}

std::vector<std::uint32_t> Window::read_pixels() const {
  const Sdl& s = *sdl_;
  if (s.texture == nullptr) return {};
  // The back buffer after a present is undefined: draw the last picture again, read it, and
  // leave it unpresented (the next present() clears it).
  const int w = width(), h = height();
  if (w < 1 || h < 1) return {};
  std::vector<std::uint32_t> out(static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
  SDL_RenderClear(s.renderer);
  SDL_RenderCopy(s.renderer, s.texture, nullptr, nullptr);
  if (SDL_RenderReadPixels(s.renderer, nullptr, SDL_PIXELFORMAT_RGBA32, out.data(), w * 4) != 0)
    return {};
  return out;
}

void Window::set_title(std::string_view title) {
  SDL_SetWindowTitle(sdl_->window, std::string(title).c_str());
}

std::string Window::title() const {
  const char* t = SDL_GetWindowTitle(sdl_->window);
  return t != nullptr ? t : "";
}

core::Status Window::set_fullscreen(bool on) {
  if (SDL_SetWindowFullscreen(sdl_->window, on ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0) != 0)
    return core::Status::error("window '" + title() + "': " + sdl_error("SDL_SetWindowFullscreen"));
  fullscreen_ = on;
  return {};
}

core::Status Window::set_vsync(bool on) {
  if (SDL_RenderSetVSync(sdl_->renderer, on ? 1 : 0) != 0)
    return core::Status::error("window '" + title() + "': " + sdl_error("SDL_RenderSetVSync"));
  vsync_ = on && !headless();
  return {};
}

void Window::set_size(int width, int height) {
  SDL_SetWindowSize(sdl_->window, std::clamp(width, 1, kMaxSide), std::clamp(height, 1, kMaxSide));
}

int Window::width() const {
  int w = 0, h = 0;
  SDL_GetRendererOutputSize(sdl_->renderer, &w, &h);
  return w;
}

int Window::height() const {
  int w = 0, h = 0;
  SDL_GetRendererOutputSize(sdl_->renderer, &w, &h);
  return h;
}

bool Window::headless() const {
  const std::string d = driver();
  return d == "dummy" || d == "offscreen";
}

const char* Window::driver() const {
  const char* d = SDL_GetCurrentVideoDriver();
  return d != nullptr ? d : "";
}

}  // namespace spindle::platform
