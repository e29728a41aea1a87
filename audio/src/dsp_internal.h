// Private DSP state for the mixer's buses: a stereo biquad and a small Schroeder reverb.
#pragma once

#include <cstdint>
#include <memory>

#include "spindle/audio/mixer.h"

namespace spindle::audio::detail {

// Transposed direct form II, one state per channel; `active` false passes audio through.
struct Biquad {
  BiquadCoeffs c{};
  float state[2][2] = {};
  bool active = false;
  void set(const BiquadDesc& desc, float sample_rate) {
    c = biquad_coeffs(desc, sample_rate);
    active = desc.type != BiquadDesc::Type::None;
  }
  void process(float* interleaved, std::uint32_t frames);
};

// Four damped combs in parallel, two all-passes in series, per channel (Freeverb's shape with
// fewer lines); its delay lines are allocated once, when the bus is added.
class Reverb {
 public:
  static constexpr int kCombs = 4;
  static constexpr int kAllPasses = 2;
  Reverb(float sample_rate, float room, float mix);
  void process(float* interleaved, std::uint32_t frames);  // adds the wet signal in place

 private:
  struct Line {
    float* buffer = nullptr;
    std::uint32_t size = 0;
    std::uint32_t at = 0;
    float filter = 0;
  };
  std::unique_ptr<float[]> memory_;
  Line combs_[2][kCombs];
  Line passes_[2][kAllPasses];
  float room_;
  float mix_;
};

}  // namespace spindle::audio::detail
