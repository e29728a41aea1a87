// Private to audio/: the layout of a WAV file's samples (found by walking its RIFF chunks) and
// their one conversion to float, shared by decode_wav (whole file in memory) and the WAV stream
// (the file read a piece at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "byte_source.h"
#include "spindle/base/result.h"

namespace spindle::audio::detail {

enum class SampleCoding : std::uint8_t { Pcm, Float };

struct WavLayout {
  std::uint32_t channels = 0;     // 1 or 2
  std::uint32_t sample_rate = 0;  // kMinSampleRate..kMaxSampleRate
  std::uint32_t bits = 0;         // per sample: 8, 16, 24, 32 (PCM); 32, 64 (float)
  std::uint32_t block_align = 0;  // bytes per frame: channels * bits / 8
  SampleCoding coding = SampleCoding::Pcm;
  std::uint64_t data_offset = 0;  // file offset of the first sample
  std::uint64_t frames = 0;       // whole frames in 'data', all present in the source
};

// Walks the chunks up to 'data' and validates everything a decoder relies on: a returned layout
// names only bytes the source holds and at most kMaxSoundFrames frames. Chunks after 'data' are
// never read.
core::Result<WavLayout> parse_wav(ByteSource& source, std::string_view name);

// Converts `frames` frames at `src` (layout.block_align bytes each) to interleaved floats: 8-bit
// (x-128)/128, 16/24/32-bit x/2^(bits-1), float as is. Returns how many samples were written
// before the first non-finite one (frames * channels when all are finite).
std::size_t convert_wav_samples(const std::uint8_t* src, std::size_t frames,
                                const WavLayout& layout, float* out);

}  // namespace spindle::audio::detail
