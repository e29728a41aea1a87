// The AudioPlugin in an engine: emitters follow their entities, the listener is the ears, the
// mixed output is the same bit for bit in every job mode and worker count, one-shots end, stops
// stop, occlusion asks its query, a WAV device records the run.
#include <filesystem>
#include <fstream>

#include <spindle/audio/audio_plugin.h>
#include <spindle/gameplay/transform.h>

#include "audio_test_util.h"
#include "modes.h"

namespace spindle::audio {
namespace {

using test::make_sound;

void place(core::World& w, core::Entity e, glm::vec3 at) {
  w.add<core::Transform>(e, core::Transform::from(at));
  w.add<core::WorldTransform>(e);
}

// Built field by field: GCC 12 warns (maybe-uninitialized) on designated initializers of this
// struct, which holds strings.
AudioPluginConfig plugin_config(Output output, MixerConfig mixer = {}, std::string wav = {}) {
  AudioPluginConfig c;
  c.output = output;
  c.mixer = mixer;
  c.wav_path = std::move(wav);
  return c;
}

struct Scene {
  core::Engine engine;
  AudioPlugin* audio = nullptr;
  SoundId tone = 0, click = 0;
  explicit Scene(const core::EngineConfig& cfg,
                 AudioPluginConfig acfg = plugin_config(Output::None))
      : engine(cfg) {
    engine.add_plugin<core::TransformPlugin>();
    audio = &engine.add_plugin<AudioPlugin>(std::move(acfg));
    tone = audio->mixer().add_sound(make_sound(test::sine(330, 1.0, 44100), 1, 44100)).value();
    click = audio->mixer().add_sound(make_sound(std::vector<float>(300, 0.3f))).value();
  }
};

void spawn_orchestra(Scene& s, int n) {
  core::World& w = s.engine.world();
  const core::Entity ears = w.create();
  place(w, ears, {0, 0, 0});
  w.add<AudioListener>(ears, AudioListener{});
  for (int i = 0; i < n; ++i) {
    const core::Entity e = w.create();
    const float a = 2.39996f * static_cast<float>(i);  // the golden angle
    const float r = 1.0f + static_cast<float>(i % 50);
    place(w, e, {r * std::cos(a), 0, r * std::sin(a)});
    w.add<AudioEmitter>(
        e, AudioEmitter{.sound = s.tone,
                        .volume = 0.05f + 0.9f * static_cast<float>((i * 37) % 100) / 100,
                        .pitch = 0.8f + 0.4f * static_cast<float>(i % 11) / 10,
                        .velocity = {0, 0, static_cast<float>(i % 7) - 3.0f},
                        .start_frame = static_cast<std::uint64_t>(i) * 977 % 44100});
  }
}

TEST(AudioPlugin, OutputIsTheSameInEveryModeAndWorkerCount) {
  ::spindle::test::expect_same_in_every_mode([](jobs::Mode mode, std::uint32_t workers) {
    Scene s(
        ::spindle::test::engine_config(mode, workers),
        plugin_config(Output::None, {.max_voices = 300, .max_mixed = 200, .block_frames = 256}));
    spawn_orchestra(s, 260);  // more voices than are mixed: virtual ones in the ranking too
    for (int i = 0; i < 20; ++i) {
      // Move everything a little each step: gains, pans and doppler change every block.
      s.engine.world().query<core::Transform, AudioEmitter>().each(
          [](core::Entity, core::Transform& t, AudioEmitter& e) {
            t.set_translation(t.translation() + e.velocity * (1.0f / 60));
          });
      s.engine.step();
    }
    EXPECT_EQ(s.audio->mixer().stats().mixed, 200u);
    EXPECT_EQ(s.audio->mixer().stats().virtual_voices, 60u);
    // 48 kHz for 20 fixed steps (1/60 s in whole nanoseconds: the remainder carries over).
    const auto step_ns = static_cast<std::uint64_t>(s.engine.config().fixed_step_ns);
    EXPECT_EQ(s.audio->stats().frames_mixed, 20 * step_ns * 48000 / 1'000'000'000);
    return s.audio->output_hash() ^ s.engine.world().state_hash();
  });
}

TEST(AudioPlugin, EmittersFollowTheirEntityAndStopWhenTold) {
  Scene s(::spindle::test::engine_config(jobs::Mode::Single, 1));
  core::World& w = s.engine.world();
  const core::Entity ears = w.create();
  place(w, ears, {0, 0, 0});
  w.add<AudioListener>(ears, AudioListener{});
  const core::Entity e = w.create();
  place(w, e, {-4, 0, 0});  // on the listener's left
  w.add<AudioEmitter>(e, AudioEmitter{.sound = s.tone, .model = Attenuation::None});
  s.engine.step();
  const VoiceHandle v = w.get<AudioEmitter>(e)->voice;
  ASSERT_TRUE(s.audio->mixer().playing(v));
  EXPECT_EQ(s.audio->mixer().stats().voices, 1u);
  w.get<core::Transform>(e)->set_translation({0, 0, 3});  // behind: no side
  s.engine.step();
  w.get<AudioEmitter>(e)->playing = false;
  s.engine.step();
  s.engine.step();
  EXPECT_FALSE(s.audio->mixer().playing(v));
  EXPECT_EQ(s.audio->mixer().stats().voices, 0u);
}

TEST(AudioPlugin, OneShotEmittersPlayOnce) {
  Scene s(::spindle::test::engine_config(jobs::Mode::Single, 1));
  core::World& w = s.engine.world();
  const core::Entity e = w.create();
  place(w, e, {0, 0, 0});
  w.add<AudioEmitter>(e, AudioEmitter{.sound = s.click, .loop = false});
  for (int i = 0; i < 4; ++i) s.engine.step();
  EXPECT_FALSE(w.get<AudioEmitter>(e)->playing) << "300 frames end within the first step";
  EXPECT_EQ(s.audio->mixer().stats().plays, 1u);
}

TEST(AudioPlugin, OcclusionQueryIsAskedForOccludingEmittersOnly) {
  std::atomic<int> asked{0};
  AudioPluginConfig cfg = plugin_config(Output::None);
  cfg.occlusion = [&asked](glm::vec3, glm::vec3) {
    asked.fetch_add(1);
    return 1.0f;
  };
  Scene s(::spindle::test::engine_config(jobs::Mode::Dynamic, 2), std::move(cfg));
  core::World& w = s.engine.world();
  for (int i = 0; i < 10; ++i) {
    const core::Entity e = w.create();
    place(w, e, {0, 0, -2});
    w.add<AudioEmitter>(e, AudioEmitter{.sound = s.tone, .occlude = i < 3});
  }
  s.engine.step();
  EXPECT_EQ(asked.load(), 3);
}

TEST(AudioPlugin, AWavDeviceRecordsWhatWasMixed) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("spindle_plugin_" + std::to_string(::getpid()) + ".wav");
  std::uint64_t frames = 0;
  {
    Scene s(::spindle::test::engine_config(jobs::Mode::Dynamic, 2),
            plugin_config(Output::WavFile, {}, path.string()));
    spawn_orchestra(s, 8);
    for (int i = 0; i < 30; ++i) s.engine.step();
    frames = s.audio->stats().frames_mixed;
    ASSERT_NE(s.audio->device(), nullptr);
    EXPECT_STREQ(s.audio->device()->name(), "wav");
  }
  ASSERT_EQ(frames, 30u * (core::kNsPerSecond / 60) * 48000 / core::kNsPerSecond);
  auto sound = load_sound(path.string());
  ASSERT_TRUE(sound) << sound.status().message();
  EXPECT_EQ(sound.value().frames(), frames);
  EXPECT_EQ(sound.value().channels(), 2u);
  double e = 0;
  for (float x : sound.value().samples()) e += double{x} * x;
  EXPECT_GT(e, 1.0) << "the file holds sound, not silence";
  std::filesystem::remove(path);
}

TEST(AudioPlugin, ABadDeviceFallsBackToTheNullDevice) {
  Scene s(::spindle::test::engine_config(jobs::Mode::Single, 1),
          plugin_config(Output::WavFile, {}, "/nonexistent/dir/out.wav"));
  ASSERT_NE(s.audio->device(), nullptr);
  EXPECT_STREQ(s.audio->device()->name(), "null");
  s.engine.step();
  EXPECT_EQ(s.audio->stats().frames_mixed, 799u) << "1/60 s in whole nanoseconds: 799.99 frames";
}

}  // namespace
}  // namespace spindle::audio
