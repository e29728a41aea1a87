// The SDL2 output device. SDL's audio thread calls callback(), which copies from the ring and
// counts; everything that may allocate, lock or log happens in open/close on the caller's thread.
//
// Underruns: a callback that finds fewer frames than SDL asked for plays silence for the rest and
// counts one underrun. Until the first frame ever arrives (the producer has not written yet, the
// device is just starting) the silence is not counted: that gap is start-up, not a glitch.
#include <SDL.h>

#include <cstring>
#include <mutex>

#include "device_detail.h"
#include "spindle/audio/device.h"

namespace spindle::audio {

namespace {

// SDL_InitSubSystem/QuitSubSystem count references themselves, but they are not thread-safe, and
// the driver is chosen by the first init; this lock makes open/close of several devices safe.
std::mutex& sdl_audio_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string driver_label(const std::string& driver) {
  return driver.empty() ? std::string("SDL's default audio driver")
                        : "SDL audio driver '" + driver + "'";
}

// Takes a reference on SDL's audio subsystem, started on `driver` if it was not running. Fails
// if it already runs another driver: SDL has one audio driver per process.
core::Status acquire_sdl_audio(const std::string& driver) {
  const bool was_running = SDL_WasInit(SDL_INIT_AUDIO) != 0;
  if (!was_running && !driver.empty()) {
    // Override priority: a plain hint would lose to the SDL_AUDIODRIVER environment variable.
    SDL_SetHintWithPriority(SDL_HINT_AUDIODRIVER, driver.c_str(), SDL_HINT_OVERRIDE);
  }
  const int rc = SDL_InitSubSystem(SDL_INIT_AUDIO);
  if (!was_running && !driver.empty()) SDL_ResetHint(SDL_HINT_AUDIODRIVER);
  if (rc != 0) return core::Status::error(driver_label(driver) + ": " + SDL_GetError());
  const char* current = SDL_GetCurrentAudioDriver();
  if (!driver.empty() && (current == nullptr || driver != current)) {
    SDL_QuitSubSystem(SDL_INIT_AUDIO);
    return core::Status::error(driver_label(driver) + ": SDL audio already runs driver '" +
                               (current ? current : "?") + "' (one driver per process)");
  }
  return {};
}

class SdlDevice final : public OutputDevice {
 public:
  SdlDevice(AudioRing& ring, const DeviceConfig& config) : ring_(ring), config_(config) {}
  ~SdlDevice() override { (void)close(); }

  const char* name() const override { return name_.c_str(); }
  bool realtime() const override { return true; }
  DeviceStats stats() const override { return counters_.snapshot(); }
  const DeviceConfig& config() const override { return config_; }

  core::Status open() {
    const std::string label = driver_label(config_.driver);
    if (core::Status s = detail::check_config(config_, label); !s) return s;
    if (ring_.channels() != config_.channels)
      return core::Status::error(label + ": the ring has " + std::to_string(ring_.channels()) +
                                 " channels, the device config " +
                                 std::to_string(config_.channels));
    if (config_.period_frames == 0 || config_.period_frames > 32768)
      return core::Status::error(label + ": period of " + std::to_string(config_.period_frames) +
                                 " frames (1 to 32768)");

    std::lock_guard lock(sdl_audio_mutex());
    if (core::Status s = acquire_sdl_audio(config_.driver); !s) return s;
    const char* current = SDL_GetCurrentAudioDriver();
    name_ = std::string("sdl:") + (current ? current : "?");

    SDL_AudioSpec want{};
    want.freq = static_cast<int>(config_.sample_rate);
    want.format = AUDIO_F32SYS;
    want.channels = static_cast<Uint8>(config_.channels);
    want.samples = static_cast<Uint16>(config_.period_frames);
    want.callback = &SdlDevice::callback;
    want.userdata = this;
    SDL_AudioSpec have{};
    // No allowed changes: SDL converts to whatever the hardware wants, so the callback always
    // gets the format the ring holds.
    id_ = SDL_OpenAudioDevice(nullptr, 0, &want, &have, 0);
    if (id_ == 0) {
      core::Status s =
          core::Status::error(label + ": opening the device failed: " + SDL_GetError());
      SDL_QuitSubSystem(SDL_INIT_AUDIO);
      return s;
    }
    // Should not happen with no allowed changes; playing the ring at another rate or format
    // would be wrong, so refuse rather than guess.
    if (have.freq != want.freq || have.format != want.format || have.channels != want.channels) {
      SDL_CloseAudioDevice(id_);
      id_ = 0;
      SDL_QuitSubSystem(SDL_INIT_AUDIO);
      return core::Status::error(label + ": SDL offered " + std::to_string(have.freq) + " Hz, " +
                                 std::to_string(have.channels) + " channels, SDL format " +
                                 std::to_string(have.format) + " instead of float");
    }
    SDL_PauseAudioDevice(id_, 0);
    return {};
  }

  // SDL marks a device whose hardware went away (or whose driver failed to write, as the disk
  // driver does) disabled: its status reads stopped while we still hold it open and unpaused.
  bool lost() const override {
    return id_ != 0 && SDL_GetAudioDeviceStatus(id_) == SDL_AUDIO_STOPPED;
  }

  core::Status close() override {
    if (id_ == 0) return {};
    std::lock_guard lock(sdl_audio_mutex());
    SDL_PauseAudioDevice(id_, 1);
    SDL_CloseAudioDevice(id_);  // joins SDL's audio thread: no callback runs after this
    id_ = 0;
    SDL_QuitSubSystem(SDL_INIT_AUDIO);
    return {};
  }

 private:
  // SDL's audio thread. Never allocates, locks or logs: it only copies and counts.
  static void SDLCALL callback(void* user, Uint8* stream, int len) {
    auto* self = static_cast<SdlDevice*>(user);
    auto* out = reinterpret_cast<float*>(stream);
    const std::uint32_t channels = self->config_.channels;
    const auto frames = static_cast<std::uint32_t>(len) / (channels * sizeof(float));
    const std::uint32_t got = self->ring_.read(out, frames);
    if (got < frames) {
      std::memset(out + std::size_t{got} * channels, 0,
                  std::size_t{frames - got} * channels * sizeof(float));
    }
    if (got > 0) self->started_ = true;
    if (got < frames && self->started_) self->counters_.add_underrun(frames - got);
    self->counters_.add_played(frames);
  }

  AudioRing& ring_;
  DeviceConfig config_;
  std::string name_ = "sdl";
  SDL_AudioDeviceID id_ = 0;
  // Touched only by the callback (SDL runs one at a time per device).
  bool started_ = false;
  detail::DeviceCounters counters_;
};

}  // namespace

core::Result<std::unique_ptr<OutputDevice>> open_sdl_device(AudioRing& ring,
                                                            const DeviceConfig& config) {
  // Built first: the callback's user pointer must stay valid for the device's life.
  auto device = std::make_unique<SdlDevice>(ring, config);
  if (core::Status s = device->open(); !s) return s;
  return std::unique_ptr<OutputDevice>(std::move(device));
}

}  // namespace spindle::audio
