// The mixer's inner loop: resample one voice (linear or 4-point Hermite), optionally low-pass it
// (occlusion), and add it into a stereo buffer under a linear gain ramp. Positions are 32.32
// fixed point, so every run steps through the same source positions.
#pragma once

#include <cstdint>

namespace spindle::audio::detail {

struct Ramp {
  float l, r;    // gains now
  float dl, dr;  // added per frame
};

template <int Ch>
struct DirectSource {
  const float* d;
  float operator()(std::int64_t i, int c) const { return d[i * Ch + c]; }
};

inline float hermite(float xm1, float x0, float x1, float x2, float t) {
  const float c1 = 0.5f * (x1 - xm1);
  const float c2 = xm1 - 2.5f * x0 + 2.0f * x1 - 0.5f * x2;
  const float c3 = 0.5f * (x2 - xm1) + 1.5f * (x0 - x1);
  return ((c3 * t + c2) * t + c1) * t + x0;
}

template <int Ch, bool Cubic, bool Filter, class Source>
inline void mix_run(const Source& src, std::uint64_t& pos, std::uint64_t step, std::uint32_t n,
                    float* out, Ramp& g, float (&lp)[2], float lp_a) {
  std::uint64_t p = pos;
  float gl = g.l, gr = g.r;
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto idx = static_cast<std::int64_t>(p >> 32);
    const float t = static_cast<float>(static_cast<std::uint32_t>(p)) * 0x1p-32f;
    float s[Ch];
    for (int c = 0; c < Ch; ++c) {
      if constexpr (Cubic) {
        s[c] = hermite(src(idx - 1, c), src(idx, c), src(idx + 1, c), src(idx + 2, c), t);
      } else {
        const float a = src(idx, c);
        s[c] = a + (src(idx + 1, c) - a) * t;
      }
      if constexpr (Filter) {
        lp[c] += lp_a * (s[c] - lp[c]);
        s[c] = lp[c];
      }
    }
    out[2 * i] += s[0] * gl;
    out[2 * i + 1] += s[Ch - 1] * gr;
    gl += g.dl;
    gr += g.dr;
    p += step;
  }
  pos = p;
  g.l = gl;
  g.r = gr;
}

}  // namespace spindle::audio::detail
