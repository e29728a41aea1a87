#include "workload.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace audio_bench {

const char* to_string(Case c) {
  switch (c) {
    case Case::Volume:
      return "volume";
    case Case::Pan:
      return "pan";
    case Case::Spatial:
      return "3d";
  }
  return "?";
}

bool parse_case(std::string_view text, Case& c) {
  for (Case k : {Case::Volume, Case::Pan, Case::Spatial})
    if (text == to_string(k)) {
      c = k;
      return true;
    }
  return false;
}

Workload make_workload(Case which, std::uint32_t voices) {
  Workload w;
  w.which = which;
  // 0.4 sin(220 Hz) + 0.2 sin(331 Hz) + noise of +-0.02 from a fixed xorshift (the same samples
  // with every compiler, unlike <random>'s distributions).
  w.sound.resize(kSoundFrames);
  std::uint32_t state = 0x9e3779b9u;
  for (std::uint32_t n = 0; n < kSoundFrames; ++n) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const double noise = (static_cast<double>(state) / 4294967295.0 * 2.0 - 1.0) * 0.02;
    const double t = static_cast<double>(n) / kSoundRate;
    const double x = 0.4 * std::sin(2 * std::numbers::pi * 220 * t) +
                     0.2 * std::sin(2 * std::numbers::pi * 331 * t) + noise;
    w.sound[n] = static_cast<std::int16_t>(std::lround(x * 32767.0));
  }

  const double golden_angle = std::numbers::pi * (3.0 - std::sqrt(5.0));
  w.voices.resize(voices);
  for (std::uint32_t i = 0; i < voices; ++i) {
    Voice& v = w.voices[i];
    v.volume = std::clamp(static_cast<float>((i * 37u) % 100u) / 100.0f, 0.05f, 0.95f);
    // Golden-ratio steps through the sound: the tones' phases spread evenly (a fixed stride
    // such as 7919 frames is about half a 220 Hz period and makes neighbours cancel).
    v.start_frame =
        static_cast<std::uint32_t>(std::fmod(i * (std::numbers::phi - 1.0), 1.0) * kSoundFrames);
    if (which == Case::Volume) continue;
    v.azimuth = static_cast<float>(std::fmod(i * golden_angle, 2 * std::numbers::pi));
    const glm::vec3 dir{std::sin(v.azimuth), 0.0f, -std::cos(v.azimuth)};
    v.pan = dir.x;
    if (which != Case::Spatial) continue;
    v.distance = 1.0f + 49.0f * static_cast<float>((i * 61u) % 100u) / 99.0f;
    v.position = dir * v.distance;
    // Radial -10..10 m/s (doppler about 0.97..1.03) plus a sideways drift.
    const float radial = 0.5f * (static_cast<float>((i * 29u) % 41u) - 20.0f);
    v.velocity = dir * radial + glm::vec3{dir.z, 0.0f, -dir.x} * 3.0f;
    v.pitch = 0.8f + 0.4f * static_cast<float>((i * 53u) % 101u) / 100.0f;
  }
  return w;
}

std::vector<std::uint8_t> sound_as_wav(const Workload& w) {
  const auto data_bytes = static_cast<std::uint32_t>(w.sound.size() * 2);
  std::vector<std::uint8_t> out(44 + std::size_t{data_bytes});
  std::size_t at = 0;
  auto put = [&](std::uint32_t v, int bytes) {
    for (int b = 0; b < bytes; ++b) out[at++] = static_cast<std::uint8_t>(v >> (8 * b));
  };
  auto tag = [&](const char* t) {
    for (int b = 0; b < 4; ++b) out[at++] = static_cast<std::uint8_t>(t[b]);
  };
  tag("RIFF");
  put(36 + data_bytes, 4);
  tag("WAVE");
  tag("fmt ");
  put(16, 4);
  put(1, 2);  // PCM
  put(1, 2);  // mono
  put(kSoundRate, 4);
  put(kSoundRate * 2, 4);  // bytes per second
  put(2, 2);               // block align
  put(16, 2);              // bits
  tag("data");
  put(data_bytes, 4);
  for (std::int16_t s : w.sound) put(static_cast<std::uint16_t>(s), 2);
  return out;
}

std::uint64_t thread_cpu_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

double rms_of(std::span<const float> samples) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (float s : samples) sum += static_cast<double>(s) * s;
  return std::sqrt(sum / static_cast<double>(samples.size()));
}

}  // namespace audio_bench
