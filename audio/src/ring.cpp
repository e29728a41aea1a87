#include "spindle/audio/ring.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include "spindle/base/assert.h"

namespace spindle::audio {

namespace {

// Where `frames` frames starting at frame `pos` lie in the flat storage: `first` floats from
// `offset`, then the rest from the start of the storage. write() and read() share this.
struct Wrapped {
  std::size_t offset;
  std::size_t first;
  std::size_t rest;
};

Wrapped wrap(std::uint64_t pos, std::uint32_t frames, std::uint32_t capacity,
             std::uint32_t channels) {
  const std::uint32_t start = static_cast<std::uint32_t>(pos & (capacity - 1));
  const std::uint32_t first = std::min(frames, capacity - start);
  return {std::size_t{start} * channels, std::size_t{first} * channels,
          std::size_t{frames - first} * channels};
}

}  // namespace

AudioRing::AudioRing(std::uint32_t capacity_frames, std::uint32_t channels) : channels_(channels) {
  SPINDLE_ASSERT(channels > 0, "AudioRing needs at least one channel");
  SPINDLE_ASSERT(capacity_frames <= (1u << 31), "AudioRing capacity above 2^31 frames");
  capacity_ = std::bit_ceil(std::max(capacity_frames, 1u));
  data_ = std::make_unique<float[]>(static_cast<std::size_t>(capacity_) * channels_);
}

std::uint32_t AudioRing::readable() const {
  // read_ first: write_ never falls behind it, so the difference cannot go negative. The other
  // side may move between the loads, hence the clamp.
  const std::uint64_t r = read_.load(std::memory_order_acquire);
  const std::uint64_t w = write_.load(std::memory_order_acquire);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(w - r, capacity_));
}

std::uint32_t AudioRing::writable() const {
  return capacity_ - readable();
}

std::uint32_t AudioRing::write(const float* interleaved, std::uint32_t frames) {
  const std::uint64_t w = write_.load(std::memory_order_relaxed);  // only this thread stores it
  // Acquire pairs with read()'s release: the consumer has finished copying out what it freed.
  const std::uint64_t r = read_.load(std::memory_order_acquire);
  const std::uint32_t n =
      std::min(frames, capacity_ - static_cast<std::uint32_t>(w - r));  // w - r <= capacity_
  if (n == 0) return 0;
  const Wrapped at = wrap(w, n, capacity_, channels_);
  std::memcpy(data_.get() + at.offset, interleaved, at.first * sizeof(float));
  std::memcpy(data_.get(), interleaved + at.first, at.rest * sizeof(float));
  write_.store(w + n, std::memory_order_release);  // publishes the samples to the consumer
  return n;
}

std::uint32_t AudioRing::read(float* interleaved, std::uint32_t frames) {
  const std::uint64_t r = read_.load(std::memory_order_relaxed);  // only this thread stores it
  const std::uint64_t w = write_.load(std::memory_order_acquire);
  const std::uint32_t n = std::min(frames, static_cast<std::uint32_t>(w - r));
  if (n == 0) return 0;
  const Wrapped at = wrap(r, n, capacity_, channels_);
  std::memcpy(interleaved, data_.get() + at.offset, at.first * sizeof(float));
  std::memcpy(interleaved + at.first, data_.get(), at.rest * sizeof(float));
  read_.store(r + n, std::memory_order_release);  // hands the slots back to the producer
  return n;
}

}  // namespace spindle::audio
