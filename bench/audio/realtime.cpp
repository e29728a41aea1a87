// spindle_bench_audio --realtime S: the engine with the AudioPlugin playing N 3D voices of the
// workload through a real-time SDL device for S seconds of wall time (SDL's `disk` driver into
// /dev/null by default, paced like a sound card), frames paced at 60 Hz in dynamic mode, voices
// circling the listener. Prints the underruns the device counted: the mixer keeps the ring at
// the device's latency, so any underrun means a frame was late with its audio.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <spindle/audio/audio_plugin.h>
#include <spindle/gameplay/transform.h>
#include <glm/gtc/matrix_transform.hpp>

#include "workload.h"

namespace audio_bench {

int run_realtime(const Workload& w, double seconds, const std::string& driver) {
  using namespace spindle;
  if (driver == "disk" && std::getenv("SDL_DISKAUDIOFILE") == nullptr)
    setenv("SDL_DISKAUDIOFILE", "/dev/null", 1);
  core::EngineConfig ec;
  ec.mode = jobs::Mode::Dynamic;
  core::Engine engine(ec);
  audio::AudioPluginConfig config;
  config.output = audio::Output::Sdl;
  config.device.driver = driver;
  config.device.latency_frames = 2048;  // 43 ms
  config.device.period_frames = 512;
  const auto n = static_cast<std::uint32_t>(w.voices.size());
  config.mixer.max_voices = config.mixer.max_mixed = n + 1;
  auto& plugin = engine.add_plugin<audio::AudioPlugin>(std::move(config));
  if (plugin.device() == nullptr || !plugin.device()->realtime()) {
    std::fprintf(stderr, "spindle_bench_audio: the SDL device (driver '%s') did not open\n",
                 driver.c_str());
    return 1;
  }
  std::vector<float> samples(w.sound.begin(), w.sound.end());
  for (float& s : samples) s /= 32768.0f;
  const audio::SoundId tone =
      plugin.mixer()
          .add_sound(audio::Sound::create(std::move(samples), 1, kSoundRate, "test").value())
          .value();
  core::World& world = engine.world();
  const core::Entity ears = world.create();
  world.add<core::WorldTransform>(ears);
  world.add<audio::AudioListener>(ears, audio::AudioListener{});
  std::vector<core::Entity> emitters;
  for (const Voice& v : w.voices) {
    const core::Entity e = world.create();
    world.add<core::WorldTransform>(
        e, core::WorldTransform{.matrix = glm::translate(glm::mat4(1), v.position)});
    world.add<audio::AudioEmitter>(e, audio::AudioEmitter{.sound = tone,
                                                          .volume = v.volume,
                                                          .pitch = v.pitch,
                                                          .min_distance = kMinDistance,
                                                          .max_distance = kMaxDistance,
                                                          .rolloff = kRolloff,
                                                          .velocity = v.velocity,
                                                          .start_frame = v.start_frame});
    emitters.push_back(e);
  }
  using clock = std::chrono::steady_clock;
  const auto period = std::chrono::nanoseconds(core::kNsPerSecond / 60);
  const auto start = clock::now();
  auto next = start;
  auto last = start;
  std::vector<double> frame_ms, mix_ms;
  const int mix_stage = engine.find_stage("audio_mix");
  float angle = 0;
  while (clock::now() - start < std::chrono::duration<double>(seconds)) {
    const auto now = clock::now();
    angle += 0.01f;
    for (std::size_t i = 0; i < emitters.size(); ++i) {
      const glm::vec3 p = glm::vec3(glm::rotate(glm::mat4(1), angle, glm::vec3(0, 1, 0)) *
                                    glm::vec4(w.voices[i].position, 1.0f));
      world.get<core::WorldTransform>(emitters[i])->matrix = glm::translate(glm::mat4(1), p);
    }
    engine.frame((now - last).count());
    last = now;
    frame_ms.push_back(static_cast<double>(engine.last_frame().frame_ns) * 1e-6);
    mix_ms.push_back(static_cast<double>(engine.last_frame().stages[mix_stage].wall_ns) * 1e-6);
    next += period;
    std::this_thread::sleep_until(next);  // frame pacing: the audio runs on the device's clock
  }
  const audio::DeviceStats d = plugin.device()->stats();
  (void)plugin.device()->close();
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::printf(
      "realtime: %u voices (3D, pitch, doppler), %.0f s through SDL's '%s' driver, dynamic mode\n"
      "frames %zu, median frame %.3f ms, median audio_mix %.3f ms\n"
      "device: %llu frames played, %llu underruns, %llu silent frames; mixer: %llu frames "
      "mixed, ring full %llu\n",
      n, seconds, driver.c_str(), frame_ms.size(), median(frame_ms), median(mix_ms),
      static_cast<unsigned long long>(d.frames_played),
      static_cast<unsigned long long>(d.underruns),
      static_cast<unsigned long long>(d.silent_frames),
      static_cast<unsigned long long>(plugin.stats().frames_mixed),
      static_cast<unsigned long long>(plugin.stats().ring_full));
  return d.underruns == 0 ? 0 : 3;
}

}  // namespace audio_bench
