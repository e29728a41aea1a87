// Fuzz targets `wav` and `ogg` (this file, built with SPINDLE_FUZZ_OGG 0 or 1): the decoder of
// that format, then the same bytes streamed. A refusal names the file; an accepted sound passes
// Sound's own checks; a stream of bytes the decoder accepted gives the same samples up to where
// it ends (damage part-way ends a stream with error() set, never with other samples).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spindle/audio/sound.h>

#include "fuzz_support.h"

#ifndef SPINDLE_FUZZ_OGG
#define SPINDLE_FUZZ_OGG 0
#endif

namespace {

// The bytes as a file the stream can open: a memory file, by its /proc path.
struct MemoryFile {
  int fd = -1;
  std::string path;
  MemoryFile(const std::uint8_t* data, std::size_t size) {
    fd = ::memfd_create("spindle_fuzz", 0);
    SPINDLE_FUZZ_CHECK(fd >= 0, "memfd_create failed");
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd, data + done, size - done);
      SPINDLE_FUZZ_CHECK(n > 0, "write to the memory file failed");
      done += static_cast<std::size_t>(n);
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~MemoryFile() { ::close(fd); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  namespace audio = spindle::audio;
  spindle::fuzz::quiet_logs();
  const char* name = SPINDLE_FUZZ_OGG ? "fuzz.ogg" : "fuzz.wav";
  auto r = SPINDLE_FUZZ_OGG ? audio::decode_ogg({data, size}, name)
                            : audio::decode_wav({data, size}, name);
  spindle::fuzz::outcome(r.ok(), r.ok() ? "" : r.message());
  if (!r) {
    SPINDLE_FUZZ_CHECK(starts_with(r.message(), std::string(name) + ": "), r.message());
    return 0;
  }
  const audio::Sound& sound = r.value();
  // What Sound::create() checks, so every accepted sound could have been built by it.
  SPINDLE_FUZZ_CHECK(sound.channels() == 1 || sound.channels() == 2, "channels");
  SPINDLE_FUZZ_CHECK(
      sound.sample_rate() >= audio::kMinSampleRate && sound.sample_rate() <= audio::kMaxSampleRate,
      std::to_string(sound.sample_rate()));
  SPINDLE_FUZZ_CHECK(sound.frames() <= audio::kMaxSoundFrames, std::to_string(sound.frames()));
  SPINDLE_FUZZ_CHECK(sound.samples().size() == sound.frames() * sound.channels(), "part frame");
  for (float x : sound.samples()) SPINDLE_FUZZ_CHECK(std::isfinite(x), "a sample is not finite");
  if (sound.frames() > (std::uint64_t{1} << 22)) return 0;  // keep each input quick

  const MemoryFile file(data, size);
  auto opened = audio::open_stream(file.path);
  if (!opened) return 0;
  audio::StreamDecoder& stream = *opened.value();
  SPINDLE_FUZZ_CHECK(stream.channels() == sound.channels(), "stream and decoder differ");
  SPINDLE_FUZZ_CHECK(stream.sample_rate() == sound.sample_rate(), "stream and decoder differ");
  const std::uint32_t ch = sound.channels();
  std::vector<float> buffer(1000u * ch);
  std::uint64_t at = 0;
  for (std::uint32_t got; (got = stream.read(buffer.data(), 1000)) > 0; at += got) {
    SPINDLE_FUZZ_CHECK(at + got <= sound.frames(), "the stream gave more frames than the decoder");
    for (std::size_t i = 0; i < std::size_t{got} * ch; ++i)
      SPINDLE_FUZZ_CHECK(buffer[i] == sound.samples()[at * ch + i],
                         "streamed sample " + std::to_string(at * ch + i) + " differs");
  }
  SPINDLE_FUZZ_CHECK(at == sound.frames() || !stream.error().empty(),
                     "the stream ended early without an error");
  return 0;
}
