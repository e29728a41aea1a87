// AudioPlugin: the Mixer as a stage of the frame. Entities with an AudioEmitter (and a
// WorldTransform) play 3D voices that follow them; the entity with an AudioListener is the ears.
// Each frame `audio_update` moves voices to their entities and `audio_mix` mixes the frame's audio
// in parallel (split as the job mode decides, booked like any stage) into a lock-free ring that
// the output device reads.
//
// Usage:
//
//   auto& audio = engine.add_plugin<spindle::audio::AudioPlugin>(spindle::audio::AudioPluginConfig{
//       .mixer = {.max_voices = 512}, .output = spindle::audio::Output::Sdl});
//   const auto hum =
//   audio.mixer().add_sound(spindle::audio::load_sound("hum.wav").value()).value();
//   world.add<spindle::audio::AudioEmitter>(robot, {.sound = hum, .loop = true});
//   world.add<spindle::audio::AudioListener>(camera, {});
//   audio.mixer().play(boom, {.volume = 0.7f});        // one-shots: straight to the mixer from
//                                                      // a stage that declares write<AudioAccess>
//
// Stages (presentation: once per frame, after the simulation steps; kAudioPhase):
//   audio_update  reads WorldTransform, AudioListener; writes AudioEmitter: starts, moves and
//                 stops emitters' voices; occlusion rays (if `occlusion` is set)
//   audio_mix     mixes this frame's frames: paced by game time (frame delta x rate, the
//                 remainder carried: the same input gives the same samples) or, with a real-time
//                 device, by the ring's fill (kept at DeviceConfig::latency_frames)
// Stages of a game that call the mixer declare `.write<spindle::audio::AudioAccess>()`. A stage
// that starts sounds from what happened (a hit, a pickup) is a presentation stage
// (`.simulation = false`) in a phase before kAudioPhase, Phase::Gameplay for example: it runs
// once per frame, after the steps and before audio_update, and its sounds are mixed that frame.
// A simulation stage may start sounds too, but it runs once per step: a frame of three steps
// starts three one-shots if each step asks for one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <glm/glm.hpp>

#include "spindle/audio/device.h"
#include "spindle/audio/mixer.h"
#include "spindle/audio/ring.h"
#include "spindle/engine/engine.h"

namespace spindle::audio {

// After rendering's phases (600, 700): presentation work that may run beside them.
inline constexpr core::Phase kAudioPhase{"audio", 800};

// Stands for the Mixer in stages' access sets.
struct AudioAccess {};

// Ears: position and orientation from the entity's WorldTransform (forward is -Z, up is +Y).
struct AudioListener {
  glm::vec3 velocity{0.0f};  // for doppler
};

// A sound that plays from its entity while `playing` is true (looping, or once).
struct AudioEmitter {
  SoundId sound = 0;
  float volume = 1;
  float pitch = 1;
  BusId bus = kMasterBus;
  std::int32_t priority = 0;
  bool loop = true;
  bool playing = true;   // false stops the voice (a short fade)
  bool occlude = false;  // ask AudioPluginConfig::occlusion each frame
  Attenuation model = Attenuation::Inverse;
  float min_distance = 1;
  float max_distance = 100;
  float rolloff = 1;
  glm::vec3 velocity{0.0f};  // for doppler (e.g. copied from a rigid body)
  std::uint64_t start_frame = 0;
  VoiceHandle voice{};  // set by audio_update
};
// The world's state hash reads its fields, not its padding.
std::uint64_t spindle_hash(const AudioEmitter& e);

enum class Output : std::uint8_t { None, Null, WavFile, Sdl };

struct AudioPluginConfig {
  MixerConfig mixer{};
  Output output = Output::Null;
  DeviceConfig device{};
  std::string wav_path{};  // Output::WavFile
  // 0..1 occlusion between the listener and an emitter (e.g. physics_occlusion() from
  // spindle/audio/physics_occlusion.h), asked for emitters with `occlude` set; what it reads
  // goes in occlusion_access so the frame graph orders audio_update after its writers.
  std::function<float(glm::vec3 listener, glm::vec3 emitter)> occlusion{};
  core::Access occlusion_access{};
  // Largest mix per frame (frames); a longer frame mixes this much and counts the rest skipped.
  std::uint32_t max_frames_per_frame = 8192;
};

struct AudioPluginStats {
  std::uint64_t frames_mixed = 0;
  std::uint64_t frames_skipped = 0;  // a frame longer than max_frames_per_frame
  std::uint64_t ring_full = 0;       // frames the ring had no room for (a stalled device)
  // Output devices that went away while playing (OutputDevice::lost()). Each loss is logged as
  // an error; the plugin opens the device again (SDL's default: where a game's sound goes when a
  // headset is unplugged) up to kMaxDeviceReopens times, then plays to the null device, mixing by
  // game time as without a card. The reopen runs in the audio stage of the frame that saw the
  // loss (opening a device can take milliseconds, at most kMaxDeviceReopens times a run); apart
  // from that the game never waits for a device.
  std::uint32_t device_losses = 0;
  std::uint32_t device_reopens = 0;  // of those, reopened
};

class AudioPlugin final : public core::Plugin {
 public:
  static constexpr std::uint32_t kMaxDeviceReopens = 3;
  explicit AudioPlugin(AudioPluginConfig config = {});
  ~AudioPlugin() override;
  const char* name() const override { return "audio"; }
  // Opens the device; an error opening it is logged and the plugin falls back to the null
  // device (a game keeps running without sound).
  void build(core::Engine& engine) override;

  Mixer& mixer() { return *mixer_; }
  AudioRing& ring() { return *ring_; }
  OutputDevice* device() { return device_.get(); }
  // A hash of every sample mixed so far (their bits, in order): equal across job modes and
  // worker counts for the same input with Output::None, Null and WavFile, which mix by game time.
  // Output::Sdl mixes as much as the device's ring has room for, which depends on when the
  // device read it (real time): the samples are the same sounds, but how many are mixed by a
  // given frame is not, so the hash is not reproducible there. Compare hashes with Output::Null.
  std::uint64_t output_hash() const { return hash_; }
  const AudioPluginStats& stats() const { return stats_; }
  // What audio_mix mixed in the last frame (interleaved stereo; empty before the first): meters,
  // visualisers, tests.
  std::span<const float> last_mix() const;

 private:
  struct State;
  AudioPluginConfig config_;
  std::unique_ptr<Mixer> mixer_;
  std::unique_ptr<AudioRing> ring_;
  std::unique_ptr<OutputDevice> device_;
  std::unique_ptr<State> state_;
  // audio_mix's answer to a lost device: reopen it, or fall back to the null device.
  void replace_lost_device();
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
  AudioPluginStats stats_{};
};

}  // namespace spindle::audio
