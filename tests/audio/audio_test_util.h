// Shared by the audio tests: sounds built from formulas, mixing a mixer single-threaded, and a
// sine fit that measures what is not the sine (THD + noise).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "spindle/audio/mixer.h"
#include "spindle/audio/sound.h"

namespace spindle::audio::test {

inline Sound make_sound(std::vector<float> samples, std::uint32_t channels = 1,
                        std::uint32_t rate = 48000, const char* name = "test") {
  auto s = Sound::create(std::move(samples), channels, rate, name);
  EXPECT_TRUE(s) << s.status().message();
  return std::move(s).value();
}

inline std::vector<float> sine(double frequency, double seconds, std::uint32_t rate,
                               float amplitude = 0.5f) {
  std::vector<float> out(static_cast<std::size_t>(seconds * rate));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = amplitude * static_cast<float>(std::sin(2 * std::numbers::pi * frequency *
                                                     static_cast<double>(i) / rate));
  return out;
}

// Frames of output, interleaved stereo, mixed without a job system.
inline std::vector<float> mix(Mixer& m, std::uint32_t frames) {
  std::vector<float> out(std::size_t{frames} * 2);
  m.mix(out);
  return out;
}

inline std::vector<float> channel(const std::vector<float>& stereo, int c) {
  std::vector<float> out(stereo.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = stereo[2 * i + c];
  return out;
}

// Least-squares fit of a cos + b sin + c at `frequency`; returns the residual's RMS over the
// fitted sine's RMS in dB (THD + N).
inline double thd_n_db(const std::vector<float>& x, double frequency, double rate) {
  double scc = 0, sss = 0, scs = 0, sc = 0, ss = 0, sx = 0, sxc = 0, sxs = 0;
  const double n = static_cast<double>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = 2 * std::numbers::pi * frequency * static_cast<double>(i) / rate;
    const double c = std::cos(w), s = std::sin(w);
    scc += c * c, sss += s * s, scs += c * s, sc += c, ss += s;
    sx += x[i], sxc += x[i] * c, sxs += x[i] * s;
  }
  // Solve the 3x3 normal equations by Cramer's rule.
  const double m[3][3] = {{scc, scs, sc}, {scs, sss, ss}, {sc, ss, n}};
  const double r[3] = {sxc, sxs, sx};
  auto det = [](const double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
           a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  };
  const double d = det(m);
  double coef[3];
  for (int k = 0; k < 3; ++k) {
    double t[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) t[i][j] = j == k ? r[i] : m[i][j];
    coef[k] = det(t) / d;
  }
  double residual = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = 2 * std::numbers::pi * frequency * static_cast<double>(i) / rate;
    const double e = x[i] - (coef[0] * std::cos(w) + coef[1] * std::sin(w) + coef[2]);
    residual += e * e;
  }
  const double signal = (coef[0] * coef[0] + coef[1] * coef[1]) / 2 * n;
  return 10 * std::log10(residual / signal);
}

}  // namespace spindle::audio::test
