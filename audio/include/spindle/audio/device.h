// Output devices: where the mixed audio goes. An SDL2 audio device (any SDL driver: `disk` in
// tests, `dummy` headless, a real card when there is one), a WAV-file writer (render a run to a
// file) and a null device (discards).
//
// Usage:
//
//   spindle::audio::AudioRing ring(8192, 2);
//   auto dev = spindle::audio::open_sdl_device(ring, {.sample_rate = 48000});  // Result<...>
//   ... the producer writes into `ring`; SDL's thread reads it ...
//   dev.value()->stats().underruns;
//
//   auto file = spindle::audio::open_wav_writer("run.wav", {.sample_rate = 48000});
//   file.value()->pump(ring);        // synchronous devices drain the ring when pumped
//
// A real-time device (realtime() == true) reads the ring from its own thread at the device's
// pace; the producer keeps the ring about `latency_frames` full. Its callback never allocates,
// locks or decodes: it copies from the ring and, when the ring runs dry, plays silence for the
// rest and counts an underrun. A synchronous device (WAV writer, null) takes whatever is in the
// ring when pump() is called from the producer's side.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "spindle/audio/ring.h"
#include "spindle/base/result.h"

namespace spindle::audio {

struct DeviceConfig {
  std::uint32_t sample_rate = 48000;
  std::uint32_t channels = 2;
  // Real-time devices: how far ahead the producer mixes (frames in the ring), and the device's
  // own buffer (SDL's `samples`).
  std::uint32_t latency_frames = 2048;
  std::uint32_t period_frames = 512;
  // SDL audio driver to use ("disk", "dummy", "pulseaudio"...); empty: SDL's choice
  // (SDL_AUDIODRIVER if set).
  std::string driver{};
};

struct DeviceStats {
  std::uint64_t frames_played = 0;  // frames taken from the ring (or silence played)
  // Callbacks that found fewer frames than they needed. Not counted before the first frame ever
  // arrives: silence while the producer has not started is start-up, not a glitch.
  std::uint64_t underruns = 0;
  std::uint64_t silent_frames = 0;  // frames of silence played for those underruns
};

class OutputDevice {
 public:
  virtual ~OutputDevice() = default;
  virtual const char* name() const = 0;
  // True: a thread of the device reads the ring at the device's pace.
  virtual bool realtime() const = 0;
  // Synchronous devices: take everything readable from the ring now (called by the producer).
  virtual void pump(AudioRing& ring) { (void)ring; }
  // Stops the device thread (real-time) or finishes the file; also done by the destructor.
  virtual core::Status close() { return {}; }
  // The device went away while open (unplugged, its driver or file failed): it plays nothing
  // more. Close it and open another (AudioPlugin does, once a frame).
  virtual bool lost() const { return false; }
  virtual DeviceStats stats() const = 0;
  virtual const DeviceConfig& config() const = 0;
};

// Opens SDL's audio subsystem and a device reading `ring` (which must outlive the device), float
// stereo at config.sample_rate. An error names the driver and SDL's message.
core::Result<std::unique_ptr<OutputDevice>> open_sdl_device(AudioRing& ring,
                                                            const DeviceConfig& config);
// Writes 16-bit PCM (or float) WAV; the header's sizes are patched on close().
core::Result<std::unique_ptr<OutputDevice>> open_wav_writer(const std::string& path,
                                                            const DeviceConfig& config,
                                                            bool float_samples = false);
std::unique_ptr<OutputDevice> make_null_device(const DeviceConfig& config = {});

}  // namespace spindle::audio
