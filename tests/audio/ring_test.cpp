// AudioRing: capacity rounding, full/empty, wrap-around against a reference queue, and a
// producer thread and a consumer thread moving a counter sequence (run under TSan in CI).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "modes.h"
#include "spindle/audio/ring.h"

namespace {

using spindle::audio::AudioRing;

TEST(AudioRing, CapacityRoundsUpToAPowerOfTwo) {
  EXPECT_EQ(AudioRing(1000, 2).capacity(), 1024u);
  EXPECT_EQ(AudioRing(1024, 2).capacity(), 1024u);
  EXPECT_EQ(AudioRing(1025, 1).capacity(), 2048u);
  EXPECT_EQ(AudioRing(3, 1).capacity(), 4u);
  EXPECT_EQ(AudioRing(1, 1).capacity(), 1u);
  EXPECT_EQ(AudioRing(0, 1).capacity(), 1u);  // never a ring that can hold nothing
  EXPECT_EQ(AudioRing(7, 5).channels(), 5u);
}

TEST(AudioRing, FullAndEmpty) {
  AudioRing ring(8, 2);
  float out[32] = {};
  EXPECT_EQ(ring.readable(), 0u);
  EXPECT_EQ(ring.writable(), 8u);
  EXPECT_EQ(ring.read(out, 4), 0u);

  std::vector<float> in(2 * 12);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  EXPECT_EQ(ring.write(in.data(), 12), 8u);  // only what fits
  EXPECT_EQ(ring.readable(), 8u);
  EXPECT_EQ(ring.writable(), 0u);
  EXPECT_EQ(ring.write(in.data(), 1), 0u);

  EXPECT_EQ(ring.read(out, 3), 3u);
  EXPECT_EQ(ring.writable(), 3u);
  EXPECT_EQ(ring.read(out + 6, 100), 5u);  // only what is there
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], static_cast<float>(i));
  EXPECT_EQ(ring.readable(), 0u);
  EXPECT_EQ(ring.writable(), 8u);
}

// Odd chunk sizes against a 3-channel ring of 16 frames: every split point of the storage is hit,
// and a std::deque says what must come out.
TEST(AudioRing, WrapAroundWithOddSizesMatchesAQueue) {
  constexpr std::uint32_t kChannels = 3;
  AudioRing ring(13, kChannels);
  ASSERT_EQ(ring.capacity(), 16u);
  std::deque<float> expected;
  const std::uint32_t write_sizes[] = {7, 5, 3, 11, 1, 13, 9};
  const std::uint32_t read_sizes[] = {5, 9, 1, 3, 15, 7};
  float next = 0.0f;
  std::vector<float> in(17 * kChannels);
  std::vector<float> out(17 * kChannels);
  for (int step = 0; step < 2000; ++step) {
    const std::uint32_t want = write_sizes[step % 7];
    for (float& v : in) v = next++;
    const std::uint32_t room = ring.writable();
    const std::uint32_t wrote = ring.write(in.data(), want);
    ASSERT_EQ(wrote, std::min(want, room));
    expected.insert(expected.end(), in.begin(), in.begin() + wrote * kChannels);
    next -= static_cast<float>(in.size() - wrote * kChannels);  // unwritten values are reused

    const std::uint32_t ask = read_sizes[step % 6];
    const std::uint32_t got = ring.read(out.data(), ask);
    ASSERT_EQ(
        got, std::min<std::uint32_t>(ask, static_cast<std::uint32_t>(expected.size() / kChannels)));
    for (std::uint32_t i = 0; i < got * kChannels; ++i) {
      ASSERT_EQ(out[i], expected.front()) << "step " << step << " sample " << i;
      expected.pop_front();
    }
    ASSERT_EQ(ring.readable() * kChannels, expected.size());
  }
}

// One thread writes frames (n, ~n) for n = 0, 1, 2...; the other checks each arrives once and in
// order. Chunk sizes vary on both sides so the threads meet at every point of the storage.
TEST(AudioRing, ProducerAndConsumerThreadsMoveACounterSequence) {
  const auto total = static_cast<std::uint32_t>(3'000'000 * spindle::test::stress_scale());
  AudioRing ring(1000, 2);
  std::thread producer([&] {
    float chunk[2 * 97];
    std::uint32_t n = 0;
    std::uint32_t step = 0;
    while (n < total) {
      const std::uint32_t size = std::min<std::uint32_t>(1 + (step++ * 37) % 97, total - n);
      for (std::uint32_t i = 0; i < size; ++i) {
        chunk[2 * i] = static_cast<float>(n + i);
        chunk[2 * i + 1] = -static_cast<float>(n + i);
      }
      std::uint32_t done = 0;
      while (done < size) {
        const std::uint32_t w = ring.write(chunk + 2 * done, size - done);
        if (w == 0) std::this_thread::yield();
        done += w;
      }
      n += size;
    }
  });

  float chunk[2 * 89];
  std::uint32_t expected = 0;
  std::uint32_t step = 0;
  std::uint32_t mismatches = 0;
  while (expected < total) {
    const std::uint32_t got = ring.read(chunk, 1 + (step++ * 53) % 89);
    if (got == 0) std::this_thread::yield();
    for (std::uint32_t i = 0; i < got; ++i, ++expected) {
      // Exact in float: every value stays below 2^24.
      if (chunk[2 * i] != static_cast<float>(expected) ||
          chunk[2 * i + 1] != -static_cast<float>(expected))
        ++mismatches;
    }
  }
  producer.join();
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(expected, total);
  EXPECT_EQ(ring.readable(), 0u);
}

}  // namespace
