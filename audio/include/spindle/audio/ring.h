// audio::AudioRing: a lock-free single-producer single-consumer ring of interleaved float
// frames. The audio stage (producer) writes mixed audio ahead; the output device's thread
// (consumer) reads it. Neither side allocates, locks or waits.
//
// Usage:
//
//   spindle::audio::AudioRing ring(4096, 2);        // capacity in frames (rounded up to a power
//                                                   // of two), channels
//   ring.write(mixed, frames);                      // producer: returns frames written
//   std::uint32_t got = ring.read(out, frames);     // consumer: returns frames read
//
// Exactly one thread may write and one (other) thread may read at a time; size queries are
// safe from either side (a snapshot).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace spindle::audio {

class AudioRing {
 public:
  AudioRing(std::uint32_t capacity_frames, std::uint32_t channels);
  AudioRing(const AudioRing&) = delete;
  AudioRing& operator=(const AudioRing&) = delete;

  std::uint32_t channels() const { return channels_; }
  std::uint32_t capacity() const { return capacity_; }  // frames
  std::uint32_t readable() const;                       // frames the consumer can read now
  std::uint32_t writable() const;                       // frames the producer can write now

  // Producer: copies up to `frames` frames in; returns how many fitted.
  std::uint32_t write(const float* interleaved, std::uint32_t frames);
  // Consumer: copies up to `frames` frames out; returns how many there were.
  std::uint32_t read(float* interleaved, std::uint32_t frames);

 private:
  std::unique_ptr<float[]> data_;
  std::uint32_t capacity_ = 0;  // power of two
  std::uint32_t channels_ = 0;
  alignas(64) std::atomic<std::uint64_t> write_{0};  // frames ever written
  alignas(64) std::atomic<std::uint64_t> read_{0};   // frames ever read
};

}  // namespace spindle::audio
