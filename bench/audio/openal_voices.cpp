// OpenAL Soft through ALC_SOFT_loopback: a device without a backend, rendered into a buffer on the
// calling thread by alcRenderSamplesSOFT (48 kHz stereo float), so the round's CPU time is this
// thread's clock. The source limit is the context's ALC_MONO_SOURCES = N (enough in 1.19: without
// it alGenSources stops at 255) and `sources` in a temporary config file (ALSOFT_CONF, read at the
// first ALC call), which also sets the resampler and turns the output limiter and HRTF off.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#include <AL/efx.h>

#include "workload.h"

namespace audio_bench {
namespace {

// Writes the config OpenAL Soft reads at its first ALC call; the file is removed once the device
// is open (the settings are read by then).
bool write_config(std::uint32_t sources, bool cubic, std::string& path) {
  char name[] = "/tmp/spindle_bench_alsoft_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) return false;
  const std::string text = "[general]\nsources = " + std::to_string(sources) +
                           "\nresampler = " + (cubic ? "cubic" : "linear") +
                           "\noutput-limiter = false\nhrtf = false\n";
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  path = name;
  return ok;
}

class OpenAlVoices final : public Contender {
 public:
  ~OpenAlVoices() override {
    if (context_) {
      if (!sources_.empty()) {
        alSourceStopv(static_cast<ALsizei>(sources_.size()), sources_.data());
        alDeleteSources(static_cast<ALsizei>(sources_.size()), sources_.data());
      }
      if (buffer_) alDeleteBuffers(1, &buffer_);
      alcMakeContextCurrent(nullptr);
      alcDestroyContext(context_);
    }
    if (device_) alcCloseDevice(device_);
  }

  bool start(const Workload& w, bool cubic, std::string& error) {
    const auto n = static_cast<ALsizei>(w.voices.size());
    cubic_ = cubic;
    std::string conf;
    if (!write_config(static_cast<std::uint32_t>(n), cubic, conf))
      return fail(error, "cannot write a config file in /tmp");
    setenv("ALSOFT_CONF", conf.c_str(), 1);
    const bool loopback = alcIsExtensionPresent(nullptr, "ALC_SOFT_loopback");
    auto open = reinterpret_cast<LPALCLOOPBACKOPENDEVICESOFT>(
        alcGetProcAddress(nullptr, "alcLoopbackOpenDeviceSOFT"));
    auto supported = reinterpret_cast<LPALCISRENDERFORMATSUPPORTEDSOFT>(
        alcGetProcAddress(nullptr, "alcIsRenderFormatSupportedSOFT"));
    render_ = reinterpret_cast<LPALCRENDERSAMPLESSOFT>(
        alcGetProcAddress(nullptr, "alcRenderSamplesSOFT"));
    if (loopback && open) device_ = open(nullptr);
    std::remove(conf.c_str());
    if (!loopback || !open || !supported || !render_ || !device_)
      return fail(error, "no ALC_SOFT_loopback device");
    if (!supported(device_, kOutputRate, ALC_STEREO_SOFT, ALC_FLOAT_SOFT))
      return fail(error, "the loopback device does not render 48 kHz stereo float");
    const ALCint attrs[] = {ALC_FORMAT_CHANNELS_SOFT,
                            ALC_STEREO_SOFT,
                            ALC_FORMAT_TYPE_SOFT,
                            ALC_FLOAT_SOFT,
                            ALC_FREQUENCY,
                            ALCint{kOutputRate},
                            ALC_MONO_SOURCES,
                            n,
                            ALC_STEREO_SOURCES,
                            0,
                            ALC_MAX_AUXILIARY_SENDS,
                            0,
                            ALC_HRTF_SOFT,
                            ALC_FALSE,
                            ALC_OUTPUT_LIMITER_SOFT,
                            ALC_FALSE,
                            0};
    context_ = alcCreateContext(device_, attrs);
    if (!context_ || !alcMakeContextCurrent(context_)) return fail(error, "alcCreateContext");

    alGenBuffers(1, &buffer_);
    alBufferData(buffer_, AL_FORMAT_MONO16, w.sound.data(),
                 static_cast<ALsizei>(w.sound.size() * sizeof(std::int16_t)), kSoundRate);
    const bool spatial = w.which == Case::Spatial;
    alDistanceModel(spatial ? AL_INVERSE_DISTANCE_CLAMPED : AL_NONE);
    alSpeedOfSound(kSpeedOfSound);
    alDopplerFactor(1);
    if (alGetError() != AL_NO_ERROR) return fail(error, "buffer or context settings refused");

    sources_.resize(static_cast<std::size_t>(n));
    alGenSources(n, sources_.data());
    if (alGetError() != AL_NO_ERROR) {
      ALCint mono = 0;
      alcGetIntegerv(device_, ALC_MONO_SOURCES, 1, &mono);
      sources_.clear();
      return fail(error, "alGenSources refused " + std::to_string(n) +
                             " sources (ALC_MONO_SOURCES " + std::to_string(mono) + ")");
    }
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      const Voice& v = w.voices[i];
      const ALuint s = sources_[i];
      alSourcei(s, AL_BUFFER, static_cast<ALint>(buffer_));
      alSourcei(s, AL_LOOPING, AL_TRUE);
      alSourcef(s, AL_GAIN, v.volume);
      if (spatial) {
        alSource3f(s, AL_POSITION, v.position.x, v.position.y, v.position.z);
        alSource3f(s, AL_VELOCITY, v.velocity.x, v.velocity.y, v.velocity.z);
        alSourcef(s, AL_PITCH, v.pitch);
        alSourcef(s, AL_REFERENCE_DISTANCE, kMinDistance);
        alSourcef(s, AL_MAX_DISTANCE, kMaxDistance);
        alSourcef(s, AL_ROLLOFF_FACTOR, kRolloff);
      } else {
        // A direction on the unit circle around the listener: straight ahead in the volume
        // case (centred; every mono source is panned by OpenAL Soft, it has no cheaper path).
        alSourcei(s, AL_SOURCE_RELATIVE, AL_TRUE);
        alSource3f(s, AL_POSITION, std::sin(v.azimuth), 0.0f, -std::cos(v.azimuth));
      }
      alSourcei(s, AL_SAMPLE_OFFSET, static_cast<ALint>(v.start_frame));
    }
    alSourcePlayv(n, sources_.data());
    if (alGetError() != AL_NO_ERROR) return fail(error, "the sources' settings or play refused");
    return true;
  }

  const char* name() const override { return "openal_soft"; }

  std::string note() const override {
    return std::string("openal_soft: loopback rendering on this thread, resampler ") +
           (cubic_ ? "cubic" : "linear") + ", no output limiter, no HRTF, no aux sends";
  }

  RoundResult run(std::uint64_t frames) override {
    RoundResult r;
    const std::uint64_t t0 = thread_cpu_ns();
    for (; r.frames < frames; r.frames += kBlockFrames)
      render_(device_, block_.data(), kBlockFrames);
    r.cpu_ns = thread_cpu_ns() - t0;
    r.rms = rms_of(block_);
    std::size_t playing = 0;
    for (ALuint s : sources_) {
      ALint state = 0;
      alGetSourcei(s, AL_SOURCE_STATE, &state);
      playing += state == AL_PLAYING;
    }
    if (playing != sources_.size())
      r.error = "openal_soft: " + std::to_string(playing) + " of " +
                std::to_string(sources_.size()) + " sources playing";
    return r;
  }

 private:
  static bool fail(std::string& error, const std::string& why) {
    error = "openal_soft: " + why;
    return false;
  }

  bool cubic_ = false;
  ALCdevice* device_ = nullptr;
  ALCcontext* context_ = nullptr;
  LPALCRENDERSAMPLESSOFT render_ = nullptr;
  ALuint buffer_ = 0;
  std::vector<ALuint> sources_;
  std::vector<float> block_ = std::vector<float>(2 * kBlockFrames);
};

}  // namespace

std::unique_ptr<Contender> make_openal_soft(const Workload& w, bool cubic, std::string& error) {
  auto c = std::make_unique<OpenAlVoices>();
  if (!c->start(w, cubic, error)) return nullptr;
  return c;
}

}  // namespace audio_bench
