// The audio anchor's mixing workload, the same for every library: one looping test sound (1.0 s,
// mono, 16-bit, 44.1 kHz), N voices with volumes, pans, 3D positions, pitches and velocities
// derived from the voice index, 48 kHz stereo float out. A Contender is one library mixing it on
// one thread; run() mixes a round and says how much CPU time the mixing thread used.
#pragma once

#include <time.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <glm/glm.hpp>

namespace audio_bench {

enum class Case : std::uint8_t {
  Volume,   // volume only
  Pan,      // volume + pan
  Spatial,  // 3D: inverse-distance attenuation, pitch 0.8..1.2, doppler from velocities
};
const char* to_string(Case c);
bool parse_case(std::string_view text, Case& c);

inline constexpr std::uint32_t kSoundRate = 44100;
inline constexpr std::uint32_t kSoundFrames = 44100;  // 1.0 s
inline constexpr std::uint32_t kOutputRate = 48000;
// Frames per mix call / render call / SDL callback: the same block for every library.
inline constexpr std::uint32_t kBlockFrames = 1024;
// What every library is told for the 3D case: OpenAL's AL_INVERSE_DISTANCE_CLAMPED.
inline constexpr float kMinDistance = 1;
inline constexpr float kMaxDistance = 100;
inline constexpr float kRolloff = 1;
inline constexpr float kSpeedOfSound = 343;

struct Voice {
  float volume = 1;          // ((i * 37) % 100) / 100 clamped to 0.05..0.95
  float azimuth = 0;         // radians clockwise from straight ahead (-Z): i x the golden angle
  float pan = 0;             // sin(azimuth): -1 left .. +1 right (0 in the volume case)
  float distance = 1;        // 1..50 (the 3D case)
  glm::vec3 position{0.0f};  // distance along the azimuth, listener at the origin facing -Z
  glm::vec3 velocity{0.0f};  // m/s, toward or away from the listener and sideways
  float pitch = 1;           // 0.8..1.2 in the 3D case, else 1
  std::uint32_t start_frame = 0;  // in the sound (44.1 kHz frames): staggered, not in phase
};

struct Workload {
  Case which = Case::Pan;
  std::vector<std::int16_t> sound;  // kSoundFrames mono samples at kSoundRate
  std::vector<Voice> voices;
};
Workload make_workload(Case which, std::uint32_t voices);

// The sound as a canonical 16-bit mono WAV file in memory (what SDL_mixer loads and converts).
std::vector<std::uint8_t> sound_as_wav(const Workload& w);

struct RoundResult {
  std::uint64_t cpu_ns = 0;  // CPU time of the mixing thread
  std::uint64_t frames = 0;  // output frames mixed
  double rms = 0;            // of the round's last block (both channels)
  std::string error;         // non-empty: the round does not count (and the run fails)
};

class Contender {
 public:
  virtual ~Contender() = default;
  virtual const char* name() const = 0;
  // Mixes at least `frames` output frames (whole blocks) of every voice.
  virtual RoundResult run(std::uint64_t frames) = 0;
  // What this library does not do of the case, or how it was measured; printed once.
  virtual std::string note() const { return {}; }
};

// nullptr and `error` set when the library cannot set the workload up.
std::unique_ptr<Contender> make_spindle(const Workload& w, bool cubic, std::string& error);
std::unique_ptr<Contender> make_sdl_mixer(const Workload& w, std::string& error);
std::unique_ptr<Contender> make_openal_soft(const Workload& w, bool cubic, std::string& error);

// The engine and a real-time SDL device for `seconds` of wall time; prints underruns
// (realtime.cpp).
int run_realtime(const Workload& w, double seconds, const std::string& driver);

// CPU time of a thread (CLOCK_THREAD_CPUTIME_ID: the caller's) in nanoseconds.
std::uint64_t thread_cpu_ns(clockid_t clock = CLOCK_THREAD_CPUTIME_ID);
double rms_of(std::span<const float> samples);

}  // namespace audio_bench
