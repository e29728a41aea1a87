// Private to the output devices: what device.cpp and sdl_device.cpp share.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "spindle/audio/device.h"
#include "spindle/base/result.h"

namespace spindle::audio::detail {

// Synchronous devices convert through a stack buffer of this many floats, so a device supports
// at most this many channels.
inline constexpr std::uint32_t kMaxDeviceChannels = 64;
inline constexpr std::uint32_t kChunkFloats = 4096;

// Rejects configs no device can honour; `what` ("WAV writer 'run.wav'") starts the message.
core::Status check_config(const DeviceConfig& config, const std::string& what);

// The counters behind DeviceStats. Relaxed atomics, so a device's own thread (SDL's callback)
// can count while any thread reads stats().
struct DeviceCounters {
  std::atomic<std::uint64_t> frames_played{0};
  std::atomic<std::uint64_t> underruns{0};
  std::atomic<std::uint64_t> silent_frames{0};

  void add_played(std::uint64_t frames) {
    frames_played.fetch_add(frames, std::memory_order_relaxed);
  }
  void add_underrun(std::uint64_t missing_frames) {
    underruns.fetch_add(1, std::memory_order_relaxed);
    silent_frames.fetch_add(missing_frames, std::memory_order_relaxed);
  }
  DeviceStats snapshot() const {
    return {frames_played.load(std::memory_order_relaxed),
            underruns.load(std::memory_order_relaxed),
            silent_frames.load(std::memory_order_relaxed)};
  }
};

}  // namespace spindle::audio::detail
