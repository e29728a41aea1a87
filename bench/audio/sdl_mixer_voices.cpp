// SDL2_mixer on SDL's `disk` audio driver writing to /dev/null with no delay: its audio thread runs
// SDL_mixer's callback back to back, unpaced. A post-mix hook on that thread counts the frames and
// parks the thread (blocked, no CPU) between rounds, so a round is a whole number of callbacks and
// its CPU time is that thread's clock (pthread_getcpuclockid) read while it is parked: mixing plus
// SDL's per-buffer write to /dev/null.
//
// The sound is loaded from a 44.1 kHz WAV and converted to 48 kHz float stereo at load (SDL_mixer
// has no runtime resampling and no pitch). Staggered starts: every voice gets a chunk pointing
// into one buffer holding the converted sound twice, at its start offset (Mix_QuickLoad_RAW does
// not copy), so a loop of that chunk is the sound rotated.
#include <pthread.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numbers>
#include <string>
#include <vector>

#include <SDL.h>
#include <SDL_mixer.h>

#include "workload.h"

namespace audio_bench {
namespace {

class SdlMixerVoices final : public Contender {
 public:
  ~SdlMixerVoices() override {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    if (open_) {
      Mix_HaltChannel(-1);
      Mix_CloseAudio();
    }
    for (Mix_Chunk* c : chunks_) Mix_FreeChunk(c);
    if (sdl_) SDL_QuitSubSystem(SDL_INIT_AUDIO);
  }

  bool start(const Workload& w, std::string& error) {
    setenv("SDL_AUDIODRIVER", "disk", 1);
    setenv("SDL_DISKAUDIOFILE", "/dev/null", 1);
    setenv("SDL_DISKAUDIODELAY", "0", 1);
    if (SDL_InitSubSystem(SDL_INIT_AUDIO) != 0) return fail(error, "SDL_InitSubSystem");
    sdl_ = true;
    if (Mix_OpenAudioDevice(kOutputRate, AUDIO_F32SYS, 2, kBlockFrames, nullptr, 0) != 0)
      return fail(error, "Mix_OpenAudioDevice");
    open_ = true;
    int rate = 0, channels = 0;
    Uint16 format = 0;
    if (Mix_QuerySpec(&rate, &format, &channels) == 0 || rate != int(kOutputRate) ||
        format != AUDIO_F32SYS || channels != 2)
      return fail(error, "the device is not 48 kHz float stereo");

    const std::vector<std::uint8_t> wav = sound_as_wav(w);
    Mix_Chunk* loaded = Mix_LoadWAV_RW(SDL_RWFromConstMem(wav.data(), int(wav.size())), 1);
    if (!loaded) return fail(error, "Mix_LoadWAV_RW");
    const Uint32 bytes = loaded->alen;
    twice_.resize(2 * std::size_t{bytes});
    std::memcpy(twice_.data(), loaded->abuf, bytes);
    std::memcpy(twice_.data() + bytes, loaded->abuf, bytes);
    Mix_FreeChunk(loaded);
    const std::uint32_t frames = bytes / kFrameBytes;

    const int n = static_cast<int>(w.voices.size());
    if (Mix_AllocateChannels(n) != n) return fail(error, "Mix_AllocateChannels");
    // Every voice starts in the same callback, so their offsets are the workload's (the audio
    // thread runs meanwhile; starting 1000 voices spans many callbacks and scrambles their
    // phases). SDL_mixer hides its device's id: the first SDL_OpenAudioDevice gets 2, checked here;
    // SDL's mutexes are recursive, so SDL_mixer's own locking inside still works.
    const DeviceHold hold(SDL_GetAudioDeviceStatus(kMixerDevice) == SDL_AUDIO_PLAYING);
    for (int i = 0; i < n; ++i) {
      const Voice& v = w.voices[static_cast<std::size_t>(i)];
      const auto offset = static_cast<std::uint32_t>(std::uint64_t{v.start_frame} * kOutputRate /
                                                     kSoundRate % frames);
      Mix_Chunk* chunk = Mix_QuickLoad_RAW(twice_.data() + std::size_t{offset} * kFrameBytes,
                                           frames * kFrameBytes);
      if (!chunk) return fail(error, "Mix_QuickLoad_RAW");
      chunks_.push_back(chunk);
      Mix_Volume(i, static_cast<int>(std::lround(v.volume * MIX_MAX_VOLUME)));
      if (w.which == Case::Pan) {
        // Equal-power gains, as Spindle pans.
        const float a = (v.pan + 1.0f) * std::numbers::pi_v<float> / 4.0f;
        if (!Mix_SetPanning(i, static_cast<Uint8>(std::lround(255.0f * std::cos(a))),
                            static_cast<Uint8>(std::lround(255.0f * std::sin(a)))))
          return fail(error, "Mix_SetPanning");
      } else if (w.which == Case::Spatial) {
        // The inverse-distance gain as SDL_mixer's distance byte (gain = 1 - byte / 255).
        const float gain = kMinDistance / (kMinDistance + kRolloff * (v.distance - kMinDistance));
        const auto degrees =
            static_cast<Sint16>(std::lround(v.azimuth * 180.0f / std::numbers::pi_v<float>) % 360);
        if (!Mix_SetPosition(i, degrees, static_cast<Uint8>(std::lround(255.0f * (1.0f - gain)))))
          return fail(error, "Mix_SetPosition");
      }
      if (Mix_PlayChannel(i, chunk, -1) != i) return fail(error, "Mix_PlayChannel");
    }
    return true;
  }

  // After the voices have started (the device no longer held): parks the audio thread.
  bool park(std::string& error) {
    // From here the audio thread parks at the end of its next callback.
    Mix_SetPostMix(&SdlMixerVoices::post_mix, this);
    std::unique_lock lock(mutex_);
    if (!wake_.wait_for(lock, std::chrono::seconds(10), [&] { return parked_; }))
      return fail(error, "the disk driver's audio thread never ran the mixer");
    return true;
  }

  const char* name() const override { return "sdl_mixer"; }

  std::string note() const override {
    return std::string(
               "sdl_mixer: CPU time of SDL's disk-driver audio thread (unpaced, to "
               "/dev/null), whole callbacks; sound converted to 48 kHz at load") +
           (case_ == Case::Spatial ? "; 3d is Mix_SetPosition: no pitch, no doppler" : "");
  }

  RoundResult run(std::uint64_t frames) override {
    RoundResult r;
    std::unique_lock lock(mutex_);
    const std::uint64_t c0 = thread_cpu_ns(clock_);
    frames_ = 0;
    target_ = frames;
    running_ = true;
    wake_.notify_all();
    if (!wake_.wait_for(lock, std::chrono::seconds(600), [&] { return parked_ && !running_; })) {
      r.error = "sdl_mixer: the audio thread stopped mixing";
      return r;
    }
    r.cpu_ns = thread_cpu_ns(clock_) - c0;
    r.frames = frames_;
    r.rms = rms_;
    return r;
  }

  void set_case(Case c) { case_ = c; }

 private:
  static constexpr std::uint32_t kFrameBytes = 2 * sizeof(float);
  static constexpr SDL_AudioDeviceID kMixerDevice = 2;

  struct DeviceHold {
    explicit DeviceHold(bool hold) : held(hold) {
      if (held) SDL_LockAudioDevice(kMixerDevice);
    }
    ~DeviceHold() {
      if (held) SDL_UnlockAudioDevice(kMixerDevice);
    }
    DeviceHold(const DeviceHold&) = delete;
    DeviceHold& operator=(const DeviceHold&) = delete;
    bool held;
  };

  static bool fail(std::string& error, const char* what) {
    error = std::string("sdl_mixer: ") + what + ": " + SDL_GetError();
    return false;
  }

  // On SDL's audio thread, after SDL_mixer has mixed a callback's buffer.
  static void SDLCALL post_mix(void* self_ptr, Uint8* stream, int len) {
    auto& self = *static_cast<SdlMixerVoices*>(self_ptr);
    std::unique_lock lock(self.mutex_);
    if (!self.have_clock_)
      self.have_clock_ = pthread_getcpuclockid(pthread_self(), &self.clock_) == 0;
    if (self.running_) {
      self.frames_ += static_cast<std::uint64_t>(len) / kFrameBytes;
      if (self.frames_ >= self.target_) {
        self.running_ = false;
        self.rms_ = rms_of({reinterpret_cast<const float*>(stream),
                            static_cast<std::size_t>(len) / sizeof(float)});
      }
    }
    if (self.running_ || self.quit_ || !self.have_clock_) return;
    self.parked_ = true;
    self.wake_.notify_all();
    self.wake_.wait(lock, [&] { return self.running_ || self.quit_; });
    self.parked_ = false;
  }

  Case case_ = Case::Pan;
  bool sdl_ = false, open_ = false;
  std::vector<std::uint8_t> twice_;
  std::vector<Mix_Chunk*> chunks_;
  // Shared with the audio thread.
  std::mutex mutex_;
  std::condition_variable wake_;
  clockid_t clock_{};
  bool have_clock_ = false, running_ = false, parked_ = false, quit_ = false;
  std::uint64_t frames_ = 0, target_ = 0;
  double rms_ = 0;
};

}  // namespace

std::unique_ptr<Contender> make_sdl_mixer(const Workload& w, std::string& error) {
  auto c = std::make_unique<SdlMixerVoices>();
  c->set_case(w.which);
  if (!c->start(w, error) || !c->park(error)) return nullptr;
  return c;
}

}  // namespace audio_bench
