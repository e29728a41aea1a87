// Counts heap allocations: a steady-state audio frame (voices starting and ending, virtual
// voices, a streamed voice refilling, the plugin's stages in an engine) allocates nothing. This
// binary replaces the global operator new/delete, so it holds only these tests.
#include <filesystem>
#include <fstream>

#include <spindle/audio/audio_plugin.h>
#include <spindle/gameplay/transform.h>

#include "alloc_counter.h"
#include "audio_test_util.h"
#include "modes.h"

namespace spindle::audio {
namespace {

class Allocations : public ::testing::TestWithParam<jobs::Mode> {};

TEST_P(Allocations, MixingAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(::spindle::test::job_config(GetParam()));
  const auto dir = std::filesystem::temp_directory_path();
  const std::string path =
      (dir / ("spindle_alloc_" + std::to_string(::getpid()) + ".wav")).string();
  {
    const auto bytes = encode_wav(test::sine(300, 0.5, 44100), 1, 44100, WavFormat::Pcm16);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  Mixer m(
      {.max_voices = 400, .max_mixed = 300, .block_frames = 512, .resampler = Resampler::Cubic});
  const BusId sfx = m.add_bus({.name = "sfx",
                               .filter = {.type = BiquadDesc::Type::LowPass, .frequency = 5000},
                               .reverb_mix = 0.2f})
                        .value();
  const SoundId tone =
      m.add_sound(test::make_sound(test::sine(440, 0.25, 44100), 1, 44100)).value();
  const SoundId music = m.add_stream(path).value();
  for (int i = 0; i < 380; ++i)  // 342 of them loop: more than are mixed
    m.play(tone, {.volume = 0.01f * static_cast<float>(i % 100),
                  .pitch = 0.9f + 0.001f * i,
                  .bus = i % 2 ? sfx : kMasterBus,
                  .loop = i % 10 != 0,
                  .spatial = i % 4 == 0,
                  .spatial_params = {.position = {static_cast<float>(i % 9), 0, -2},
                                     .occlusion = i % 8 == 0 ? 0.5f : 0.0f}});
  m.play(music, {.loop = true});
  std::vector<float> out(2 * 1600);
  for (int i = 0; i < 3; ++i) m.mix(js, 4, 0, out);  // warm-up: thread-locals, first refills
  const long before = ::spindle::test::heap_allocations();
  for (int frame = 0; frame < 30; ++frame) {
    // One-shots ending and new ones starting in their slots, with stealing.
    m.play(tone, {.volume = 0.5f, .steal = true});
    m.mix(js, 1 + frame % 8, 0, std::span<float>(out).first(2 * (800 + 17 * frame)));
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_GT(m.stats().virtual_voices, 0u)
      << m.stats().voices << " voices, " << m.stats().mixed << " mixed";
  EXPECT_EQ(m.stats().stream_starved, 0u);
  std::filesystem::remove(path);
}

TEST_P(Allocations, AnEngineFrameWithThePluginAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  core::Engine engine(::spindle::test::engine_config(GetParam(), 2));
  engine.add_plugin<core::TransformPlugin>();
  AudioPluginConfig config;  // field by field: GCC 12 misreads designated strings here
  config.output = Output::Null;
  auto& audio = engine.add_plugin<AudioPlugin>(std::move(config));
  const SoundId tone =
      audio.mixer().add_sound(test::make_sound(test::sine(220, 0.5, 44100), 1, 44100)).value();
  core::World& w = engine.world();
  const core::Entity ears = w.create();
  w.add<core::Transform>(ears, core::Transform::from(glm::vec3(0)));
  w.add<core::WorldTransform>(ears);
  w.add<AudioListener>(ears, AudioListener{});
  for (int i = 0; i < 200; ++i) {
    const core::Entity e = w.create();
    w.add<core::Transform>(e, core::Transform::from(glm::vec3(static_cast<float>(i % 13), 0, -3)));
    w.add<core::WorldTransform>(e);
    w.add<AudioEmitter>(e, AudioEmitter{.sound = tone, .loop = i % 5 != 0});
  }
  for (int i = 0; i < 5; ++i) engine.step();
  const long before = ::spindle::test::heap_allocations();
  for (int i = 0; i < 30; ++i) engine.step();
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_GT(audio.stats().frames_mixed, 0u);
}

// The sound bank in steady frames: plays that miss and load into a slot, plays that drop the
// quietest voice to free one (the panic mode), voices ending and letting their slots go: nothing
// is allocated after start-up.
TEST(BankAllocations, BankedPlaysAndTheirPanicAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  std::vector<std::vector<float>> data;
  for (int i = 0; i < 8; ++i) data.push_back(test::sine(200 + 50 * i, 0.05, 48000));
  Mixer m({.max_voices = 16, .block_frames = 256, .bank_slots = 3, .bank_slot_bytes = 2400 * 4});
  std::vector<SoundId> ids;
  for (const auto& d : data) ids.push_back(m.add_banked_sound({"tone", 1, 48000, d}).value());
  std::vector<float> out(2 * 512);
  m.play(ids[0], {.volume = 0.1f});
  m.mix(out);  // warm-up: the first refusal's log line
  m.play(ids[1], {.volume = 0.0f});
  m.play(ids[2], {.volume = 0.0f});
  m.mix(out);
  m.play(ids[3], {.volume = 0.0f});  // refused: logged once, here
  const long before = ::spindle::test::heap_allocations();
  for (int frame = 0; frame < 40; ++frame) {
    m.play(ids[frame % 8], {.volume = 0.1f + 0.02f * (frame % 5), .loop = frame % 3 == 0});
    m.mix(out);
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_GT(m.stats().bank_drops, 0u);
  EXPECT_GT(m.bank()->evictions, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Allocations,
    ::testing::ValuesIn(::spindle::test::own_modes()),  // oneTBB allocates inside
    ::spindle::test::mode_name);

}  // namespace
}  // namespace spindle::audio
