// The mixer's formulas against their definitions: the pan law, the attenuation models, doppler,
// and biquad responses measured by running a sine through the filter.
#include <cmath>
#include <numbers>

#include "audio_test_util.h"
#include "dsp_internal.h"

namespace spindle::audio {
namespace {

TEST(PanLaw, EqualPowerKeepsTotalPowerAndEndsOnOneSide) {
  for (float pan = -1.0f; pan <= 1.0f; pan += 0.125f) {
    const glm::vec2 g = equal_power_pan(pan);
    EXPECT_NEAR(g.x * g.x + g.y * g.y, 1.0f, 1e-6f) << "pan " << pan;
    EXPECT_GE(g.x, 0.0f);
    EXPECT_GE(g.y, 0.0f);
  }
  EXPECT_NEAR(equal_power_pan(-1).y, 0.0f, 1e-7f);
  EXPECT_NEAR(equal_power_pan(1).x, 0.0f, 1e-7f);
  EXPECT_NEAR(equal_power_pan(0).x, equal_power_pan(0).y, 1e-7f);
  EXPECT_NEAR(equal_power_pan(0).x, std::sqrt(0.5f), 1e-6f) << "-3 dB in the centre";
  EXPECT_EQ(equal_power_pan(7).x, equal_power_pan(1).x) << "clamped";
}

TEST(Attenuation, ModelsMatchTheirFormulasAndClampToTheirRange) {
  for (float d = 0.0f; d < 150.0f; d += 0.75f) {
    const float c = std::clamp(d, 2.0f, 80.0f);
    EXPECT_NEAR(attenuation_gain(Attenuation::Inverse, d, 2, 80, 1.5f), 2 / (2 + 1.5f * (c - 2)),
                1e-6f);
    EXPECT_NEAR(attenuation_gain(Attenuation::Linear, d, 2, 80, 1.0f), 1 - (c - 2) / 78, 1e-6f);
    EXPECT_NEAR(attenuation_gain(Attenuation::Exponential, d, 2, 80, 2.0f), std::pow(c / 2, -2.0f),
                1e-6f);
    EXPECT_EQ(attenuation_gain(Attenuation::None, d, 2, 80, 1.0f), 1.0f);
  }
  EXPECT_EQ(attenuation_gain(Attenuation::Linear, 50, 2, 80, 3.0f), 0.0f) << "never negative";
  // Non-increasing with distance in every model.
  for (auto model : {Attenuation::Inverse, Attenuation::Linear, Attenuation::Exponential}) {
    float last = 2;
    for (float d = 0; d < 200; d += 0.5f) {
      const float g = attenuation_gain(model, d, 1, 100, 1);
      EXPECT_LE(g, last);
      last = g;
    }
  }
}

TEST(Doppler, ApproachRaisesRecedeLowersStillIsOne) {
  const glm::vec3 at{0, 0, 0}, still{0, 0, 0}, src{0, 0, -20};
  EXPECT_FLOAT_EQ(doppler_factor(at, still, src, still, 343, 1), 1.0f);
  EXPECT_NEAR(doppler_factor(at, still, src, {0, 0, 10}, 343, 1), 343.0f / 333.0f, 1e-5f);
  EXPECT_NEAR(doppler_factor(at, still, src, {0, 0, -10}, 343, 1), 343.0f / 353.0f, 1e-5f);
  EXPECT_NEAR(doppler_factor(at, {0, 0, -10}, src, still, 343, 1), 353.0f / 343.0f, 1e-5f);
  EXPECT_FLOAT_EQ(doppler_factor(at, still, src, {10, 0, 0}, 343, 1), 1.0f) << "sideways";
  EXPECT_FLOAT_EQ(doppler_factor(at, still, src, {0, 0, 10}, 343, 0), 1.0f) << "scale 0: off";
  EXPECT_TRUE(std::isfinite(doppler_factor(at, still, src, {0, 0, 1e6f}, 343, 1)))
      << "faster than sound is clamped";
}

// Gain of the filter at `frequency`, measured on a sine after it settled.
double measured_gain(const BiquadDesc& desc, double frequency) {
  detail::Biquad f;
  f.set(desc, 48000);
  const auto x = test::sine(frequency, 0.5, 48000, 0.5f);
  std::vector<float> stereo(2 * x.size());
  for (std::size_t i = 0; i < x.size(); ++i) stereo[2 * i] = stereo[2 * i + 1] = x[i];
  f.process(stereo.data(), static_cast<std::uint32_t>(x.size()));
  double in = 0, out = 0;
  for (std::size_t i = x.size() / 2; i < x.size(); ++i) {
    in += double{x[i]} * x[i];
    out += double{stereo[2 * i]} * stereo[2 * i];
  }
  return std::sqrt(out / in);
}

TEST(Biquad, ResponsesHaveTheirShape) {
  using T = BiquadDesc::Type;
  const BiquadDesc lp{.type = T::LowPass, .frequency = 1000};
  EXPECT_NEAR(measured_gain(lp, 100), 1.0, 0.02);
  EXPECT_NEAR(measured_gain(lp, 1000), std::sqrt(0.5), 0.02) << "-3 dB at the cutoff (Q 0.707)";
  EXPECT_LT(measured_gain(lp, 10000), 0.02);
  const BiquadDesc hp{.type = T::HighPass, .frequency = 1000};
  EXPECT_LT(measured_gain(hp, 100), 0.02);
  EXPECT_NEAR(measured_gain(hp, 10000), 1.0, 0.02);
  const BiquadDesc peak{.type = T::Peak, .frequency = 2000, .q = 1, .gain_db = 6};
  EXPECT_NEAR(measured_gain(peak, 2000), std::pow(10.0, 6.0 / 20), 0.03);
  EXPECT_NEAR(measured_gain(peak, 100), 1.0, 0.03);
  const BiquadDesc notch{.type = T::Notch, .frequency = 3000, .q = 2};
  EXPECT_LT(measured_gain(notch, 3000), 0.05);
  const BiquadDesc shelf{.type = T::LowShelf, .frequency = 500, .gain_db = -12};
  EXPECT_NEAR(measured_gain(shelf, 50), std::pow(10.0, -12.0 / 20), 0.03);
  EXPECT_NEAR(measured_gain(shelf, 15000), 1.0, 0.03);
}

TEST(Reverb, AddsADecayingTailAfterAnImpulse) {
  detail::Reverb r(48000, 0.5f, 0.5f);
  std::vector<float> buf(2 * 48000, 0.0f);
  buf[0] = buf[1] = 1.0f;
  r.process(buf.data(), 48000);
  auto energy = [&](std::size_t from, std::size_t to) {
    double e = 0;
    for (std::size_t i = from; i < to; ++i) e += double{buf[2 * i]} * buf[2 * i];
    return e;
  };
  EXPECT_GT(energy(1000, 6000), 0.0) << "a tail after the dry impulse";
  EXPECT_GT(energy(1000, 6000), 4 * energy(30000, 35000)) << "it decays";
  for (float f : buf) ASSERT_TRUE(std::isfinite(f));
}

}  // namespace
}  // namespace spindle::audio
