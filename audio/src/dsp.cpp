// The mixer's formulas, kept apart so tests can check them against their definitions:
// attenuation models, the equal-power pan law, doppler, biquad coefficients (RBJ's Audio EQ
// Cookbook), and the bus reverb.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "dsp_internal.h"
#include "spindle/audio/mixer.h"

namespace spindle::audio {

float attenuation_gain(Attenuation model, float distance, float min_distance, float max_distance,
                       float rolloff) {
  min_distance = std::max(min_distance, 1e-4f);
  max_distance = std::max(max_distance, min_distance);
  const float d = std::clamp(distance, min_distance, max_distance);
  switch (model) {
    case Attenuation::None:
      return 1.0f;
    case Attenuation::Inverse:
      return min_distance / (min_distance + rolloff * (d - min_distance));
    case Attenuation::Linear:
      if (max_distance <= min_distance) return 1.0f;
      return std::clamp(1.0f - rolloff * (d - min_distance) / (max_distance - min_distance), 0.0f,
                        1.0f);
    case Attenuation::Exponential:
      return std::pow(d / min_distance, -rolloff);
  }
  return 1.0f;
}

glm::vec2 equal_power_pan(float pan) {
  const float angle = (std::clamp(pan, -1.0f, 1.0f) + 1.0f) * 0.25f * std::numbers::pi_v<float>;
  return {std::cos(angle), std::sin(angle)};
}

float doppler_factor(glm::vec3 listener_pos, glm::vec3 listener_vel, glm::vec3 source_pos,
                     glm::vec3 source_vel, float speed_of_sound, float doppler_scale) {
  const glm::vec3 d = listener_pos - source_pos;  // source -> listener
  const float len = glm::length(d);
  if (len < 1e-6f || doppler_scale <= 0 || speed_of_sound <= 0) return 1.0f;
  const glm::vec3 u = d / len;
  const float c = speed_of_sound;
  const float limit = c * 0.99f;
  // Positive: moving towards the other.
  const float vs = std::clamp(glm::dot(source_vel, u) * doppler_scale, -limit, limit);
  const float vl = std::clamp(-glm::dot(listener_vel, u) * doppler_scale, -limit, limit);
  return (c + vl) / (c - vs);
}

BiquadCoeffs biquad_coeffs(const BiquadDesc& desc, float sample_rate) {
  using Type = BiquadDesc::Type;
  if (desc.type == Type::None || sample_rate <= 0) return {};
  const float f = std::clamp(desc.frequency, 1.0f, sample_rate * 0.49f);
  const double w0 = 2.0 * std::numbers::pi * f / sample_rate;
  const double cw = std::cos(w0), sw = std::sin(w0);
  const double q = std::max(desc.q, 0.01f);
  const double alpha = sw / (2.0 * q);
  const double a = std::pow(10.0, desc.gain_db / 40.0);
  double b0 = 1, b1 = 0, b2 = 0, a0 = 1, a1 = 0, a2 = 0;
  switch (desc.type) {
    case Type::None:
      break;
    case Type::LowPass:
      b0 = (1 - cw) / 2, b1 = 1 - cw, b2 = (1 - cw) / 2;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case Type::HighPass:
      b0 = (1 + cw) / 2, b1 = -(1 + cw), b2 = (1 + cw) / 2;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case Type::BandPass:  // constant 0 dB peak gain
      b0 = alpha, b1 = 0, b2 = -alpha;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case Type::Notch:
      b0 = 1, b1 = -2 * cw, b2 = 1;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case Type::Peak:
      b0 = 1 + alpha * a, b1 = -2 * cw, b2 = 1 - alpha * a;
      a0 = 1 + alpha / a, a1 = -2 * cw, a2 = 1 - alpha / a;
      break;
    case Type::LowShelf: {
      const double s = 2 * std::sqrt(a) * alpha;
      b0 = a * ((a + 1) - (a - 1) * cw + s), b1 = 2 * a * ((a - 1) - (a + 1) * cw),
      b2 = a * ((a + 1) - (a - 1) * cw - s);
      a0 = (a + 1) + (a - 1) * cw + s, a1 = -2 * ((a - 1) + (a + 1) * cw),
      a2 = (a + 1) + (a - 1) * cw - s;
      break;
    }
    case Type::HighShelf: {
      const double s = 2 * std::sqrt(a) * alpha;
      b0 = a * ((a + 1) + (a - 1) * cw + s), b1 = -2 * a * ((a - 1) + (a + 1) * cw),
      b2 = a * ((a + 1) + (a - 1) * cw - s);
      a0 = (a + 1) - (a - 1) * cw + s, a1 = 2 * ((a - 1) - (a + 1) * cw),
      a2 = (a + 1) - (a - 1) * cw - s;
      break;
    }
  }
  return {static_cast<float>(b0 / a0), static_cast<float>(b1 / a0), static_cast<float>(b2 / a0),
          static_cast<float>(a1 / a0), static_cast<float>(a2 / a0)};
}

namespace detail {

void Biquad::process(float* interleaved, std::uint32_t frames) {
  if (!active) return;
  for (int ch = 0; ch < 2; ++ch) {
    float z1 = state[ch][0], z2 = state[ch][1];
    for (std::uint32_t i = 0; i < frames; ++i) {
      float& s = interleaved[2 * i + ch];
      const float x = s;
      const float y = c.b0 * x + z1;  // transposed direct form II
      z1 = c.b1 * x - c.a1 * y + z2;
      z2 = c.b2 * x - c.a2 * y;
      s = y;
    }
    // Denormals would make an idle bus slow.
    state[ch][0] = std::abs(z1) < 1e-20f ? 0.0f : z1;
    state[ch][1] = std::abs(z2) < 1e-20f ? 0.0f : z2;
  }
}

namespace {
// Freeverb's tunings at 44.1 kHz, scaled to the output rate; the right channel is offset.
constexpr std::uint32_t kCombDelays[Reverb::kCombs] = {1116, 1188, 1277, 1356};
constexpr std::uint32_t kAllPassDelays[Reverb::kAllPasses] = {556, 441};
constexpr std::uint32_t kStereoSpread = 23;
}  // namespace

Reverb::Reverb(float sample_rate, float room, float mix) : room_(room), mix_(mix) {
  const double scale = sample_rate / 44100.0;
  std::size_t total = 0;
  for (int ch = 0; ch < 2; ++ch) {
    for (int i = 0; i < kCombs; ++i)
      total += combs_[ch][i].size =
          static_cast<std::uint32_t>(std::max(1.0, (kCombDelays[i] + ch * kStereoSpread) * scale));
    for (int i = 0; i < kAllPasses; ++i)
      total += passes_[ch][i].size = static_cast<std::uint32_t>(
          std::max(1.0, (kAllPassDelays[i] + ch * kStereoSpread) * scale));
  }
  memory_ = std::make_unique<float[]>(total);
  std::fill_n(memory_.get(), total, 0.0f);
  float* p = memory_.get();
  for (int ch = 0; ch < 2; ++ch) {
    for (auto& c : combs_[ch]) c.buffer = p, p += c.size;
    for (auto& a : passes_[ch]) a.buffer = p, p += a.size;
  }
}

void Reverb::process(float* interleaved, std::uint32_t frames) {
  const float feedback = 0.7f + 0.28f * std::clamp(room_, 0.0f, 1.0f);
  const float damp = 0.2f;
  for (int ch = 0; ch < 2; ++ch) {
    for (std::uint32_t i = 0; i < frames; ++i) {
      float& s = interleaved[2 * i + ch];
      const float in = s * 0.015f;  // Freeverb's fixed input gain
      float wet = 0;
      for (Line& c : combs_[ch]) {
        const float out = c.buffer[c.at];
        c.filter = out * (1 - damp) + c.filter * damp;
        c.buffer[c.at] = in + c.filter * feedback;
        c.at = c.at + 1 == c.size ? 0 : c.at + 1;
        wet += out;
      }
      for (Line& a : passes_[ch]) {
        const float buffered = a.buffer[a.at];
        a.buffer[a.at] = wet + buffered * 0.5f;
        wet = buffered - wet;
        a.at = a.at + 1 == a.size ? 0 : a.at + 1;
      }
      s += wet * mix_ * 3.0f;
    }
    for (Line& c : combs_[ch]) c.filter = std::abs(c.filter) < 1e-20f ? 0.0f : c.filter;
  }
}

}  // namespace detail
}  // namespace spindle::audio
