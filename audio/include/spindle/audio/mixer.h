// audio::Mixer: sounds, voices, buses, 3D, and mix() - which mixes in parallel over batches of
// voices on the job system and sums the batches in a fixed order, so the output is the same bit
// for bit in every job mode and with any number of workers.
//
// Usage:
//
//   spindle::audio::Mixer mixer({.sample_rate = 48000, .max_voices = 256});
//   const SoundId boom = mixer.add_sound(std::move(sound)).value();   // budgeted, validated
//   const BusId sfx = mixer.add_bus({.name = "sfx", .volume = 0.8f}).value();
//   VoiceHandle v = mixer.play(boom, {.volume = 0.5f, .pan = -0.3f, .bus = sfx});
//   mixer.set_pitch(v, 1.2f);                     // a stale handle (voice ended) does nothing
//   std::vector<float> out(2 * 800);              // 800 stereo frames
//   mixer.mix(jobs, /*split=*/4, /*tag=*/0, out); // or through the AudioPlugin's stage
//
// Voices. A handle is slot + play counter: when the voice ends its slot's counter moves on and
// old handles go stale. At most `max_mixed` voices are mixed; the rest are virtual (their
// position keeps moving, nothing is mixed) and become real again, at the right place, when they
// rank among the loudest again. Ranking: priority first, then audibility (volume x fades x
// attenuation x bus volume), then the older voice. play() with no free slot steals the least
// important voice when `steal` is set and it ranks below the new one; otherwise the play is
// refused (an invalid handle, counted in stats()).
//
// Pitch is resampling at run time: source frames advance by pitch x source rate / output rate
// per output frame, in 32.32 fixed point (the same positions in every run). Resampler::Linear
// (2 taps) or Resampler::Cubic (4-point Hermite: lower aliasing and less high-frequency loss,
// about twice the cost); see docs/audio.md for measured THD. Volumes and pans ramp linearly
// over each mix() call, fades over their length, so nothing clicks.
//
// 3D. set_listener() and a voice's `spatial` params: distance attenuation (inverse, linear or
// exponential between min and max distance), equal-power panning from the direction in the
// listener's frame, doppler pitch from the velocities along the line between them, and
// occlusion (0..1, e.g. from a physics raycast): a one-pole low-pass whose cutoff falls and a
// gain that drops (by at most 0.5) with it - muffled, never cut.
//
// Streams. add_stream(path) registers a long file; each voice playing it gets its own decoder
// and a buffer of decoded frames that mix() refills in jobs ahead of the play position (never on
// the output thread). Loops seek.
//
// The bank. With MixerConfig::bank_slots, add_banked_sound() registers sounds that live in the
// caller's memory and are copied into a fixed number of slots while they play (the N64's sound
// cache): more sounds than RAM, a fixed footprint, and when every slot is in use the quietest
// voice holding one is dropped.
//
// Threading: the control calls (play, stop, set_*) and mix() must not overlap; call them from
// one thread at a time (the AudioPlugin calls mix() from its stage, game stages run before).
// mix() allocates nothing; add_sound/add_stream/add_bus and the first play of a stream do.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <glm/glm.hpp>

#include "spindle/audio/sound.h"
#include "spindle/base/budget.h"
#include "spindle/base/cache.h"
#include "spindle/base/result.h"
#include "spindle/jobs/job_system.h"

namespace spindle::audio {

using SoundId = std::uint32_t;  // index + 1; 0 is no sound
using BusId = std::uint8_t;     // 0 is the master bus

inline constexpr BusId kMasterBus = 0;
inline constexpr std::uint32_t kMaxBuses = 16;
// Voices per mixing batch: a batch is the unit of parallel work and of summation order.
inline constexpr std::uint32_t kVoicesPerBatch = 256;

struct VoiceHandle {
  std::uint32_t slot = ~0u;
  std::uint32_t generation = 0;
  bool valid() const { return slot != ~0u; }
  friend bool operator==(VoiceHandle, VoiceHandle) = default;
};

enum class Resampler : std::uint8_t { Linear, Cubic };
enum class Attenuation : std::uint8_t { None, Inverse, Linear, Exponential };

// Distance gain for `distance` under `model` (tested against the formulas in docs/audio.md):
//   inverse:     min / (min + rolloff (d - min))
//   linear:      1 - rolloff (d - min) / (max - min)       (clamped to 0..1)
//   exponential: (d / min)^-rolloff
// with d clamped to [min, max] (so beyond max the gain stays at its value at max).
float attenuation_gain(Attenuation model, float distance, float min_distance, float max_distance,
                       float rolloff);
// Equal-power pan: -1 left .. +1 right -> (left, right) gains with left^2 + right^2 = 1.
glm::vec2 equal_power_pan(float pan);
// Doppler factor (pitch multiplier) for a source and listener moving along the line between
// them: (c + v_listener) / (c - v_source), velocities projected on source->listener, speeds
// clamped below c.
float doppler_factor(glm::vec3 listener_pos, glm::vec3 listener_vel, glm::vec3 source_pos,
                     glm::vec3 source_vel, float speed_of_sound, float doppler_scale);

// A second-order IIR filter (RBJ cookbook), per bus or per test.
struct BiquadDesc {
  enum class Type : std::uint8_t {
    None,
    LowPass,
    HighPass,
    BandPass,
    Notch,
    Peak,
    LowShelf,
    HighShelf
  };
  Type type = Type::None;
  float frequency = 1000;  // Hz
  float q = 0.7071f;
  float gain_db = 0;  // Peak and shelves
};
struct BiquadCoeffs {
  float b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
};
BiquadCoeffs biquad_coeffs(const BiquadDesc& desc, float sample_rate);

struct BusDesc {
  std::string name = "bus";
  float volume = 1;
  BiquadDesc filter{};
  // A small Schroeder reverb (4 combs + 2 all-passes); 0 is off.
  float reverb_mix = 0;
  float reverb_room = 0.5f;   // 0..1: feedback of the combs
  BusId parent = kMasterBus;  // buses sum into their parent (the master sums into the output)
};

struct SpatialParams {
  glm::vec3 position{0.0f};
  glm::vec3 velocity{0.0f};
  Attenuation model = Attenuation::Inverse;
  float min_distance = 1;
  float max_distance = 100;
  float rolloff = 1;
  float occlusion = 0;  // 0 clear .. 1 fully occluded (muffled)
};

struct PlayParams {
  float volume = 1;
  float pan = 0;    // -1..1 (ignored when spatial: the direction pans)
  float pitch = 1;  // 1/64..64
  BusId bus = kMasterBus;
  std::int32_t priority = 0;  // higher is more important
  bool loop = false;
  std::uint64_t loop_start = 0;   // frames of the sound
  std::uint64_t loop_end = 0;     // 0: the end of the sound
  std::uint64_t start_frame = 0;  // where in the sound to start
  float fade_in = 0;              // seconds
  // Frames into the next mix() call at which the voice starts (sample-accurate start).
  std::uint32_t delay_frames = 0;
  bool spatial = false;
  SpatialParams spatial_params{};
  bool steal = false;  // no free slot: take the least important voice if it ranks lower
};

struct Listener {
  glm::vec3 position{0.0f};
  glm::vec3 forward{0.0f, 0.0f, -1.0f};
  glm::vec3 up{0.0f, 1.0f, 0.0f};
  glm::vec3 velocity{0.0f};
};

enum class VoiceState : std::uint8_t { Stopped, Playing, Virtual, Delayed };

struct MixerConfig {
  std::uint32_t sample_rate = 48000;  // output, stereo
  std::uint32_t max_voices = 256;     // slots (virtual voices included)
  std::uint32_t max_mixed = 256;      // voices mixed; the rest are virtual
  // Frames mixed per internal block: gains, 3D and the virtual/real choice are updated once a
  // block. A mix() call of more frames is done in blocks of this.
  std::uint32_t block_frames = 1024;
  Resampler resampler = Resampler::Linear;
  float master_volume = 1;
  float speed_of_sound = 343;
  float doppler_scale = 1;
  // Bytes of decoded sounds plus stream buffers this mixer may hold. add_sound() past it fails
  // with a message and keeps nothing; a stream play past it (or past max_streams) is refused and
  // counted. 0: no limit.
  std::size_t memory_budget = 0;
  std::uint32_t max_streams = 8;               // streamed voices playing at once
  std::uint32_t stream_buffer_frames = 16384;  // decoded frames held per streamed voice
  // The sound bank (add_banked_sound): a core::ResourceCache of bank_slots sounds of at most
  // bank_slot_bytes each, taken at construction from bank_arena (nullptr: the heap). 0 slots:
  // no bank.
  std::uint32_t bank_slots = 0;
  std::size_t bank_slot_bytes = 0;
  core::BudgetArena* bank_arena = nullptr;
};

// A sound whose samples stay in the caller's memory (a ROM, a mapped archive: it must outlive
// the mixer) and are copied into a slot of the mixer's bank while voices play it.
struct BankedSound {
  std::string name;
  std::uint32_t channels = 1;
  std::uint32_t sample_rate = 48000;
  std::span<const float> samples;  // interleaved
};

// How mix() runs its parallel sections: run(user, n, body, body_user) calls
// body(body_user, begin, end) over disjoint ranges covering [0, n) (on any threads) and returns
// when all have run. The AudioPlugin passes one over StageContext::parallel_for, so the mix's
// work is booked to its stage like every stage's; mix(jobs, split, tag, out) makes one over the
// job system. The ranges never change the output (batches are fixed, not the ranges).
struct ParallelRanges {
  using Body = void (*)(void* body_user, std::uint32_t begin, std::uint32_t end);
  void* user = nullptr;
  void (*run)(void* user, std::uint32_t n, Body body, void* body_user) = nullptr;
  std::uint32_t split = 1;  // how many ranges the runner makes at most (sizes the sections)
};

struct MixerStats {
  std::uint32_t voices = 0;  // playing (real + virtual + delayed)
  std::uint32_t mixed = 0;   // mixed in the last block
  std::uint32_t virtual_voices = 0;
  std::uint64_t plays = 0;
  std::uint64_t plays_refused = 0;  // no slot and nothing to steal, or over the stream budget
  std::uint64_t steals = 0;
  std::uint64_t stream_starved = 0;  // frames a stream had not decoded in time (played as 0)
  std::uint64_t frames_mixed = 0;
  std::size_t memory_used = 0;   // sounds + stream buffers
  std::uint64_t bank_drops = 0;  // the bank's panic mode: voices dropped to free a slot
};

class Mixer {
 public:
  explicit Mixer(MixerConfig config = {});
  ~Mixer();
  Mixer(const Mixer&) = delete;
  Mixer& operator=(const Mixer&) = delete;

  const MixerConfig& config() const;

  core::Result<SoundId> add_sound(Sound sound);
  core::Result<SoundId> add_stream(const std::string& path);  // validates by opening it once
  // A sound played from the bank (MixerConfig::bank_slots): a play loads it into a free or least
  // recently used slot, locked while any voice plays it. When every slot is held by playing
  // voices, the bank's panic mode drops the quietest voice that holds a slot alone, if it ranks
  // below the new one (counted in MixerStats::bank_drops; otherwise the play is refused).
  core::Result<SoundId> add_banked_sound(const BankedSound& sound);
  const core::CacheStats* bank() const;  // nullptr without a bank
  const Sound* sound(SoundId id) const;  // nullptr for streams and unknown ids
  core::Result<BusId> add_bus(BusDesc desc);
  void set_bus_volume(BusId bus, float volume);
  void set_bus_filter(BusId bus, const BiquadDesc& filter);

  VoiceHandle play(SoundId sound, const PlayParams& params = {});
  void stop(VoiceHandle voice, float fade_out_seconds = 0);
  void stop_all();
  void set_volume(VoiceHandle voice, float volume, float fade_seconds = 0);
  void set_pan(VoiceHandle voice, float pan);
  void set_pitch(VoiceHandle voice, float pitch);
  void set_priority(VoiceHandle voice, std::int32_t priority);
  void set_spatial(VoiceHandle voice, const SpatialParams& params);
  void set_listener(const Listener& listener);
  const Listener& listener() const;

  VoiceState state(VoiceHandle voice) const;  // Stopped for stale handles
  bool playing(VoiceHandle voice) const { return state(voice) != VoiceState::Stopped; }
  // The voice's position in its sound, in frames (whole part), 0 for stale handles.
  std::uint64_t position(VoiceHandle voice) const;

  // Mixes out.size() / 2 stereo frames (interleaved L, R) in parallel over voice batches;
  // `split` is how many jobs the caller's mode asks for, `tag` books them (StageContext::tag()).
  void mix(jobs::JobSystem& jobs, std::uint32_t split, std::uint16_t tag, std::span<float> out);
  // The same without a job system (the single-threaded build, tests).
  void mix(std::span<float> out);
  // The same through the caller's parallel-for (see ParallelRanges).
  void mix(const ParallelRanges& parallel, std::span<float> out);

  const MixerStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spindle::audio
