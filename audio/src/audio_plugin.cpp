#include "spindle/audio/audio_plugin.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "spindle/base/hash.h"
#include "spindle/base/log.h"
#include "spindle/gameplay/transform.h"

namespace spindle::audio {

std::uint64_t spindle_hash(const AudioEmitter& e) {
  core::Hasher h;
  auto bits = [](float f) { return std::uint64_t{std::bit_cast<std::uint32_t>(f)}; };
  h.add(e.sound);
  h.add(bits(e.volume) << 32 | bits(e.pitch));
  h.add(std::uint64_t{e.bus} | std::uint64_t{e.loop} << 8 | std::uint64_t{e.playing} << 9 |
        std::uint64_t{e.occlude} << 10 | std::uint64_t{static_cast<std::uint8_t>(e.model)} << 16 |
        std::uint64_t{static_cast<std::uint32_t>(e.priority)} << 32);
  h.add(bits(e.min_distance) << 32 | bits(e.max_distance));
  h.add(bits(e.rolloff));
  h.add(bits(e.velocity.x) << 32 | bits(e.velocity.y));
  h.add(bits(e.velocity.z));
  h.add(e.start_frame);
  h.add(std::uint64_t{e.voice.slot} << 32 | e.voice.generation);
  return h.value();
}

struct AudioPlugin::State {
  std::vector<float> buffer;  // one frame's mix, interleaved stereo
  std::uint64_t owed = 0;     // game time not yet mixed, in ns x sample rate
  std::size_t last = 0;       // samples of the last frame's mix in `buffer`
  bool realtime = false;
};

AudioPlugin::AudioPlugin(AudioPluginConfig config)
    : config_(std::move(config)),
      mixer_(std::make_unique<Mixer>(config_.mixer)),
      state_(std::make_unique<State>()) {
  config_.max_frames_per_frame = std::max<std::uint32_t>(config_.max_frames_per_frame, 64);
  config_.device.sample_rate = mixer_->config().sample_rate;
  config_.device.channels = 2;
  const std::uint32_t capacity = std::bit_ceil(
      std::max(config_.device.latency_frames * 2, config_.max_frames_per_frame) + 1024);
  ring_ = std::make_unique<AudioRing>(capacity, 2);
  state_->buffer.resize(std::size_t{config_.max_frames_per_frame} * 2);
}

AudioPlugin::~AudioPlugin() {
  if (device_) (void)device_->close();
}

std::span<const float> AudioPlugin::last_mix() const {
  return {state_->buffer.data(), state_->last};
}

namespace {

Listener listener_from(const core::WorldTransform& w, glm::vec3 velocity) {
  Listener l;
  l.position = glm::vec3(w.matrix[3]);
  const glm::vec3 forward = -glm::vec3(w.matrix[2]);
  const glm::vec3 up = glm::vec3(w.matrix[1]);
  if (glm::length(forward) > 1e-6f) l.forward = glm::normalize(forward);
  if (glm::length(up) > 1e-6f) l.up = glm::normalize(up);
  l.velocity = velocity;
  return l;
}

SpatialParams spatial_of(const AudioEmitter& e, const core::WorldTransform& w, float occlusion) {
  return {.position = glm::vec3(w.matrix[3]),
          .velocity = e.velocity,
          .model = e.model,
          .min_distance = e.min_distance,
          .max_distance = e.max_distance,
          .rolloff = e.rolloff,
          .occlusion = occlusion};
}

}  // namespace

void AudioPlugin::build(core::Engine& engine) {
  core::World& world = engine.world();
  world.register_component<AudioListener>("audio_listener");
  world.register_component<AudioEmitter>("audio_emitter");

  switch (config_.output) {
    case Output::None:
      break;
    case Output::Null:
      device_ = make_null_device(config_.device);
      break;
    case Output::WavFile:
    case Output::Sdl: {
      auto dev = config_.output == Output::Sdl ? open_sdl_device(*ring_, config_.device)
                                               : open_wav_writer(config_.wav_path, config_.device);
      if (dev) {
        device_ = std::move(dev).value();
      } else {
        SPINDLE_LOG_ERROR(Audio, "%s; playing to the null device instead", dev.status().c_str());
        device_ = make_null_device(config_.device);
      }
      break;
    }
  }
  state_->realtime = device_ && device_->realtime();

  Mixer* mixer = mixer_.get();
  const AudioPluginConfig* cfg = &config_;
  engine.add_stage(
      {.name = "audio_update",
       .phase = kAudioPhase,
       .access = core::Access(config_.occlusion_access)
                     .read<core::WorldTransform, AudioListener>()
                     .write<AudioEmitter, AudioAccess>(),
       .run =
           [mixer, cfg](core::StageContext& ctx) {
             core::World& w = ctx.world();
             w.query<const core::WorldTransform, const AudioListener>().each(
                 [&](core::Entity, const core::WorldTransform& t, const AudioListener& l) {
                   mixer->set_listener(listener_from(t, l.velocity));
                 });
             const glm::vec3 ears = mixer->listener().position;
             const auto emitters = w.query<const core::WorldTransform, AudioEmitter>();
             // Starts and stops change the mixer's voice table: one thread, in entity order.
             emitters.each([&](core::Entity, const core::WorldTransform& t, AudioEmitter& e) {
               const bool live = e.voice.valid() && mixer->playing(e.voice);
               if (e.playing && !live) {
                 if (e.voice.valid() && !e.loop) {  // a one-shot that finished
                   e.playing = false;
                   e.voice = {};
                   return;
                 }
                 e.voice = mixer->play(e.sound, {.volume = e.volume,
                                                 .pitch = e.pitch,
                                                 .bus = e.bus,
                                                 .priority = e.priority,
                                                 .loop = e.loop,
                                                 .start_frame = e.start_frame,
                                                 .spatial = true,
                                                 .spatial_params = spatial_of(e, t, 0.0f)});
               } else if (!e.playing && live) {
                 mixer->stop(e.voice, 0.02f);
                 e.voice = {};
               }
             });
             // Moving voices touches each its own slot: in parallel, occlusion rays included.
             ctx.parallel_for(emitters.size(), [&](std::uint32_t begin, std::uint32_t end) {
               emitters.each_range(
                   begin, end, [&](core::Entity, const core::WorldTransform& t, AudioEmitter& e) {
                     if (!e.voice.valid()) return;
                     const float occ = e.occlude && cfg->occlusion
                                           ? cfg->occlusion(ears, glm::vec3(t.matrix[3]))
                                           : 0.0f;
                     mixer->set_spatial(e.voice, spatial_of(e, t, occ));
                     mixer->set_volume(e.voice, e.volume);
                     mixer->set_pitch(e.voice, e.pitch);
                   });
             });
           },
       .simulation = false});

  engine.add_stage(
      {.name = "audio_mix",
       .phase = kAudioPhase,
       .access = core::Access{}.write<AudioAccess>(),
       .after = {"audio_update"},
       .run =
           [this](core::StageContext& ctx) {
             State& s = *state_;
             if (device_ && device_->lost()) replace_lost_device();
             const std::uint32_t rate = mixer_->config().sample_rate;
             std::uint64_t frames = 0;
             if (s.realtime) {
               const std::uint32_t readable = ring_->readable();
               const std::uint32_t target = config_.device.latency_frames;
               frames = readable < target ? target - readable : 0;
             } else {
               s.owed += static_cast<std::uint64_t>(std::max<std::int64_t>(ctx.dt_ns(), 0)) * rate;
               frames = s.owed / core::kNsPerSecond;
               s.owed -= frames * core::kNsPerSecond;
             }
             if (frames > config_.max_frames_per_frame) {
               stats_.frames_skipped += frames - config_.max_frames_per_frame;
               frames = config_.max_frames_per_frame;
             }
             s.last = frames * 2;
             if (frames == 0) return;
             const std::span<float> out(s.buffer.data(), frames * 2);
             // Through the stage's parallel_for: the mix's jobs are booked to audio_mix.
             const ParallelRanges parallel{
                 &ctx,
                 [](void* c, std::uint32_t n, ParallelRanges::Body body, void* body_user) {
                   static_cast<core::StageContext*>(c)->parallel_for(
                       n, [&](std::uint32_t b, std::uint32_t e) { body(body_user, b, e); });
                 },
                 ctx.split()};
             mixer_->mix(parallel, out);
             stats_.frames_mixed += frames;
             std::uint64_t h = hash_;
             for (float f : out) h = (h ^ std::bit_cast<std::uint32_t>(f)) * 0x100000001b3ull;
             hash_ = h;
             if (!device_) return;
             const std::uint32_t written =
                 ring_->write(out.data(), static_cast<std::uint32_t>(frames));
             stats_.ring_full += frames - written;
             device_->pump(*ring_);
           },
       .simulation = false});
}

void AudioPlugin::replace_lost_device() {
  ++stats_.device_losses;
  const std::string lost = device_->name();
  (void)device_->close();  // no callback runs after this: the ring is ours alone
  device_.reset();
  // What the lost device had not played yet is stale now.
  std::vector<float> drain(1024 * 2);
  while (ring_->read(drain.data(), 1024) > 0) {
  }
  if (config_.output == Output::Sdl && stats_.device_losses <= kMaxDeviceReopens) {
    if (auto dev = open_sdl_device(*ring_, config_.device)) {
      device_ = std::move(dev).value();
      ++stats_.device_reopens;
      SPINDLE_LOG_ERROR(Audio,
                        "audio device %s was lost (unplugged, or its driver failed); "
                        "opened %s again (reopen %u of at most %u)",
                        lost.c_str(), device_->name(), stats_.device_reopens, kMaxDeviceReopens);
    } else {
      SPINDLE_LOG_ERROR(Audio, "audio device %s was lost, and opening it again failed: %s",
                        lost.c_str(), dev.status().c_str());
    }
  }
  if (!device_) {
    device_ = make_null_device(config_.device);
    SPINDLE_LOG_ERROR(Audio,
                      "audio device %s was lost; playing to the null device from now on "
                      "(the game goes on without sound)",
                      lost.c_str());
  }
  state_->realtime = device_->realtime();
}

}  // namespace spindle::audio
