// Spindle's Mixer on the calling thread: mix(span) without a job system, every voice real
// (max_voices = max_mixed = N), so the count is voices per core.
#include <string>
#include <vector>

#include "spindle/audio/mixer.h"
#include "spindle/audio/sound.h"
#include "workload.h"

namespace audio_bench {
namespace {

using namespace spindle::audio;

class SpindleVoices final : public Contender {
 public:
  SpindleVoices(std::uint32_t voices, Resampler resampler)
      : voices_(voices),
        mixer_(MixerConfig{.sample_rate = kOutputRate,
                           .max_voices = voices,
                           .max_mixed = voices,
                           .block_frames = kBlockFrames,
                           .resampler = resampler}),
        block_(2 * kBlockFrames) {}

  bool start(const Workload& w, std::string& error) {
    std::vector<float> samples(w.sound.size());
    for (std::size_t n = 0; n < w.sound.size(); ++n) samples[n] = w.sound[n] / 32768.0f;
    auto sound = Sound::create(std::move(samples), 1, kSoundRate, "anchor_tone");
    if (!sound) return fail(error, sound.message());
    auto id = mixer_.add_sound(std::move(sound).value());
    if (!id) return fail(error, id.message());
    mixer_.set_listener({.velocity = glm::vec3{0.0f}});
    for (const Voice& v : w.voices) {
      PlayParams p{.volume = v.volume,
                   .pan = v.pan,
                   .pitch = v.pitch,
                   .loop = true,
                   .start_frame = v.start_frame};
      if (w.which == Case::Spatial) {
        p.spatial = true;
        p.spatial_params = {.position = v.position,
                            .velocity = v.velocity,
                            .model = Attenuation::Inverse,
                            .min_distance = kMinDistance,
                            .max_distance = kMaxDistance,
                            .rolloff = kRolloff};
      }
      if (!mixer_.play(id.value(), p).valid())
        return fail(error, "play() refused a voice (" + std::to_string(mixer_.stats().voices) +
                               " playing of " + std::to_string(voices_) + ")");
    }
    return true;
  }

  const char* name() const override { return "spindle"; }

  RoundResult run(std::uint64_t frames) override {
    RoundResult r;
    const std::uint64_t t0 = thread_cpu_ns();
    for (; r.frames < frames; r.frames += kBlockFrames) mixer_.mix(block_);
    r.cpu_ns = thread_cpu_ns() - t0;
    r.rms = rms_of(block_);
    const MixerStats& s = mixer_.stats();
    if (s.mixed != voices_ || s.virtual_voices != 0)
      r.error = "mixed " + std::to_string(s.mixed) + " voices (" +
                std::to_string(s.virtual_voices) + " virtual), expected " + std::to_string(voices_);
    return r;
  }

 private:
  static bool fail(std::string& error, const std::string& why) {
    error = "spindle: " + why;
    return false;
  }

  std::uint32_t voices_;
  Mixer mixer_;
  std::vector<float> block_;
};

}  // namespace

std::unique_ptr<Contender> make_spindle(const Workload& w, bool cubic, std::string& error) {
  auto c = std::make_unique<SpindleVoices>(static_cast<std::uint32_t>(w.voices.size()),
                                           cubic ? Resampler::Cubic : Resampler::Linear);
  if (!c->start(w, error)) return nullptr;
  return c;
}

}  // namespace audio_bench
