// The mixer against mixes computed here from their definitions: gains and pan laws, delays,
// loops across block boundaries, pitch, fades, virtual voices, stealing, streams, buses, budgets.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <spindle/base/log.h>

#include "audio_test_util.h"

namespace spindle::audio {
namespace {

using test::make_sound;

std::vector<float> ramp_samples(std::size_t n) {
  std::vector<float> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  return s;
}

// What the mixer's linear resampler reads at a 32.32 position (the definition, written again).
float lerp_at(const std::vector<float>& s, std::uint64_t pos) {
  const std::size_t i = pos >> 32;
  const float t = static_cast<float>(static_cast<std::uint32_t>(pos)) * 0x1p-32f;
  const float a = i < s.size() ? s[i] : 0.0f;
  const float b = i + 1 < s.size() ? s[i + 1] : 0.0f;
  return a + (b - a) * t;
}

TEST(Mixer, OneVoiceIsItsSamplesTimesVolumeAndEqualPowerPan) {
  Mixer m({.block_frames = 256});
  const auto s = ramp_samples(1000);
  const SoundId id = m.add_sound(make_sound(s)).value();
  const VoiceHandle v = m.play(id, {.volume = 0.5f, .pan = -0.3f});
  ASSERT_TRUE(v.valid());
  const auto out = test::mix(m, 1200);
  const float angle = (-0.3f + 1.0f) * std::numbers::pi_v<float> / 4;
  const float gl = 0.5f * std::cos(angle), gr = 0.5f * std::sin(angle);
  for (std::size_t i = 0; i < 1200; ++i) {
    const float x = i < s.size() ? s[i] : 0.0f;
    ASSERT_NEAR(out[2 * i], x * gl, 1e-6f) << "frame " << i;
    ASSERT_NEAR(out[2 * i + 1], x * gr, 1e-6f) << "frame " << i;
  }
  EXPECT_FALSE(m.playing(v)) << "a one-shot ends at its last frame";
  EXPECT_EQ(m.stats().voices, 0u);
}

TEST(Mixer, StereoSoundsBalanceAndVoicesSum) {
  Mixer m({.block_frames = 64});
  std::vector<float> stereo(2 * 300);
  for (std::size_t i = 0; i < 300; ++i) {
    stereo[2 * i] = 0.25f * std::sin(0.1f * static_cast<float>(i));
    stereo[2 * i + 1] = -0.125f * std::cos(0.07f * static_cast<float>(i));
  }
  const auto mono = ramp_samples(500);
  const SoundId a = m.add_sound(make_sound(stereo, 2)).value();
  const SoundId b = m.add_sound(make_sound(mono)).value();
  m.play(a, {.volume = 0.8f, .pan = 0.5f});  // balance: left 0.5, right 1
  m.play(b, {.volume = 0.3f, .delay_frames = 37});
  const auto out = test::mix(m, 600);
  const float c = std::cos(std::numbers::pi_v<float> / 4);
  for (std::size_t i = 0; i < 600; ++i) {
    float l = 0, r = 0;
    if (i < 300) l += stereo[2 * i] * (0.8f * 0.5f), r += stereo[2 * i + 1] * 0.8f;
    if (i >= 37 && i - 37 < mono.size()) l += mono[i - 37] * 0.3f * c, r += mono[i - 37] * 0.3f * c;
    ASSERT_NEAR(out[2 * i], l, 1e-6f) << "frame " << i;
    ASSERT_NEAR(out[2 * i + 1], r, 1e-6f) << "frame " << i;
  }
}

TEST(Mixer, DelayedStartIsSampleAccurateAcrossCalls) {
  Mixer m({.block_frames = 128});
  const std::vector<float> one(50, 1.0f);
  const SoundId id = m.add_sound(make_sound(one)).value();
  m.play(id, {.pan = 1.0f, .delay_frames = 301});
  std::vector<float> right;
  for (std::uint32_t n : {100u, 100u, 77u, 200u}) {  // delays straddle calls and blocks
    const auto out = test::channel(test::mix(m, n), 1);
    right.insert(right.end(), out.begin(), out.end());
  }
  for (std::size_t i = 0; i < right.size(); ++i)
    ASSERT_EQ(right[i] != 0.0f, i >= 301 && i < 351) << "frame " << i;
}

TEST(Mixer, LoopPointsWrapAcrossBlocksAndPitchSteps) {
  for (const float pitch : {1.0f, 0.5f, 2.0f, 1.37f}) {
    Mixer m({.block_frames = 64});
    const auto s = ramp_samples(400);
    const SoundId id = m.add_sound(make_sound(s)).value();
    const VoiceHandle v =
        m.play(id, {.pitch = pitch, .loop = true, .loop_start = 100, .loop_end = 250});
    const auto out = test::channel(test::mix(m, 2000), 0);
    const float g = std::cos(std::numbers::pi_v<float> / 4);
    const auto step = static_cast<std::uint64_t>(static_cast<double>(pitch) * 4294967296.0);
    std::uint64_t pos = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      // Positions past the loop's end come back by whole loop lengths; the sample after the
      // last one of the loop is its first.
      while ((pos >> 32) >= 250) pos -= std::uint64_t{150} << 32;
      const std::size_t k = pos >> 32;
      const float t = static_cast<float>(static_cast<std::uint32_t>(pos)) * 0x1p-32f;
      const float a = s[k], b = k + 1 < 250 ? s[k + 1] : s[100];
      ASSERT_NEAR(out[i], (a + (b - a) * t) * g, 2e-6f) << "pitch " << pitch << " frame " << i;
      pos += step;
    }
    EXPECT_TRUE(m.playing(v));
    EXPECT_EQ(m.position(v), pos >> 32);
  }
}

TEST(Mixer, SourceRateIsConvertedAtRunTime) {
  Mixer m({.sample_rate = 48000});
  const auto s = ramp_samples(44100);
  const SoundId id = m.add_sound(make_sound(s, 1, 44100)).value();
  const VoiceHandle v = m.play(id, {.pan = -1.0f});
  const auto out = test::channel(test::mix(m, 4800), 0);
  const auto step = static_cast<std::uint64_t>(44100.0 / 48000.0 * 4294967296.0);
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], lerp_at(s, i * step), 1e-6f) << "frame " << i;
  EXPECT_EQ(m.position(v), (4800 * step) >> 32);
}

TEST(Mixer, ResamplersKeepDistortionUnderTheirBounds) {
  // A 1 kHz sine recorded at 44.1 kHz, played at several pitches into 48 kHz. Measured THD+N
  // (docs/audio.md): linear about -62 dB at every pitch, cubic about -89 dB.
  struct Case {
    Resampler r;
    double bound_db;
  };
  for (const Case c : {Case{Resampler::Linear, -55.0}, Case{Resampler::Cubic, -80.0}}) {
    for (const float pitch : {0.75f, 1.0f, 1.3f}) {
      Mixer m({.block_frames = 512, .resampler = c.r});
      const SoundId id = m.add_sound(make_sound(test::sine(1000.0, 1.0, 44100), 1, 44100)).value();
      m.play(id, {.pan = -1.0f, .pitch = pitch, .loop = true});
      const auto out = test::channel(test::mix(m, 9600), 0);
      const std::vector<float> tail(out.begin() + 4800, out.end());
      const double db = test::thd_n_db(tail, 1000.0 * pitch, 48000.0);
      std::printf("%s pitch %.2f: THD+N %.1f dB\n", c.r == Resampler::Linear ? "linear" : "cubic",
                  pitch, db);
      EXPECT_LT(db, c.bound_db) << "pitch " << pitch;
    }
  }
}

TEST(Mixer, FadesRampLinearlyAndStopWithFadeEndsTheVoice) {
  Mixer m({.block_frames = 100});
  const SoundId id = m.add_sound(make_sound(std::vector<float>(48000, 1.0f))).value();
  const VoiceHandle v = m.play(id, {.pan = -1.0f, .loop = true, .fade_in = 400.0f / 48000});
  const auto in = test::channel(test::mix(m, 600), 0);
  for (std::size_t i = 0; i < 400; ++i) ASSERT_NEAR(in[i], static_cast<float>(i) / 400, 1e-4f);
  for (std::size_t i = 400; i < 600; ++i) ASSERT_NEAR(in[i], 1.0f, 1e-5f);
  m.stop(v, 200.0f / 48000);
  const auto out = test::channel(test::mix(m, 300), 0);
  for (std::size_t i = 0; i < 200; ++i)
    ASSERT_NEAR(out[i], 1.0f - static_cast<float>(i) / 200, 1e-4f) << i;
  for (std::size_t i = 200; i < 300; ++i) ASSERT_EQ(out[i], 0.0f);
  EXPECT_FALSE(m.playing(v));
}

TEST(Mixer, StaleHandlesDoNothing) {
  Mixer m({.max_voices = 1});
  const SoundId id = m.add_sound(make_sound(std::vector<float>(10, 0.5f))).value();
  const VoiceHandle first = m.play(id);
  test::mix(m, 64);  // it ends; its slot is reused
  ASSERT_FALSE(m.playing(first));
  const VoiceHandle second = m.play(id, {.loop = true});
  ASSERT_EQ(second.slot, first.slot);
  ASSERT_NE(second.generation, first.generation);
  m.stop(first);
  m.set_volume(first, 0.0f);
  m.set_pitch(first, 3.0f);
  EXPECT_TRUE(m.playing(second)) << "a stale stop reached the slot's new voice";
  const auto out = test::mix(m, 64);
  EXPECT_NEAR(out[0], 0.5f * std::cos(std::numbers::pi_v<float> / 4), 1e-6f);
  EXPECT_EQ(m.position(second), 64u % 10u);
  EXPECT_FALSE(m.play(0).valid());
  EXPECT_FALSE(m.play(99).valid());
  EXPECT_EQ(m.stats().plays_refused, 2u);
}

TEST(Mixer, VirtualVoicesKeepTimeAndResumeWhereTheyWouldBe) {
  Mixer m({.max_voices = 4, .max_mixed = 1, .block_frames = 256});
  const auto s = ramp_samples(48000);
  const SoundId id = m.add_sound(make_sound(s)).value();
  const VoiceHandle loud = m.play(id, {.volume = 0.9f, .pan = -1.0f, .loop = true});
  const VoiceHandle quiet =
      m.play(id, {.volume = 0.1f, .pan = 1.0f, .loop = true, .start_frame = 5});
  const auto first = test::mix(m, 1024);
  EXPECT_EQ(m.state(loud), VoiceState::Playing);
  EXPECT_EQ(m.state(quiet), VoiceState::Virtual);
  EXPECT_EQ(m.stats().mixed, 1u);
  EXPECT_EQ(m.stats().virtual_voices, 1u);
  for (std::size_t i = 0; i < 1024; ++i) ASSERT_EQ(first[2 * i + 1], 0.0f) << "virtual was mixed";
  EXPECT_EQ(m.position(quiet), 5u + 1024u);
  // The loud one goes quiet: the other one comes back at its position, ramping up from silence
  // over the block.
  m.set_volume(loud, 0.01f);
  const auto both = test::mix(m, 256);
  const auto right = test::channel(both, 1);
  const auto left = test::channel(both, 0);
  // The loud one leaves the mix fading from its last gain to silence over the block: no click.
  for (std::size_t i = 0; i < 256; ++i) {
    const float gain = 0.9f - 0.9f / 256 * static_cast<float>(i);
    ASSERT_NEAR(left[i], s[1024 + i] * gain, 1e-5f) << "frame " << i;
  }
  EXPECT_EQ(m.state(quiet), VoiceState::Playing);
  EXPECT_EQ(m.state(loud), VoiceState::Virtual);
  EXPECT_EQ(m.stats().mixed, 1u) << "the fading one is not counted as mixed";
  for (std::size_t i = 0; i < 256; ++i) {
    const float gain = 0.1f * static_cast<float>(i) / 256;
    ASSERT_NEAR(right[i], s[5 + 1024 + i] * gain, 1e-5f) << "frame " << i;
  }
  EXPECT_EQ(m.position(quiet), 5u + 1024u + 256u);
  EXPECT_EQ(m.position(loud), 1024u + 256u);
}

TEST(Mixer, PriorityBeatsLoudnessWhenChoosingWhatToMix) {
  Mixer m({.max_voices = 4, .max_mixed = 1});
  const SoundId id = m.add_sound(make_sound(std::vector<float>(4800, 0.5f))).value();
  const VoiceHandle loud = m.play(id, {.volume = 1.0f, .loop = true});
  const VoiceHandle important = m.play(id, {.volume = 0.2f, .priority = 5, .loop = true});
  test::mix(m, 128);
  EXPECT_EQ(m.state(important), VoiceState::Playing);
  EXPECT_EQ(m.state(loud), VoiceState::Virtual);
}

TEST(Mixer, StealingTakesTheLeastImportantVoiceOnly) {
  Mixer m({.max_voices = 3});
  const SoundId id = m.add_sound(make_sound(std::vector<float>(48000, 0.1f))).value();
  const VoiceHandle a = m.play(id, {.volume = 0.5f, .priority = 1, .loop = true});
  const VoiceHandle b = m.play(id, {.volume = 0.9f, .loop = true});
  const VoiceHandle c = m.play(id, {.volume = 0.2f, .loop = true});
  test::mix(m, 64);  // audibility is known after a block
  EXPECT_FALSE(m.play(id, {.volume = 1.0f}).valid()) << "no steal asked: refused";
  const VoiceHandle d = m.play(id, {.volume = 0.5f, .loop = true, .steal = true});
  ASSERT_TRUE(d.valid());
  EXPECT_FALSE(m.playing(c)) << "the quietest voice of the lowest priority goes first";
  EXPECT_TRUE(m.playing(a) && m.playing(b));
  EXPECT_FALSE(m.play(id, {.volume = 1.0f, .priority = -1, .steal = true}).valid())
      << "a lower priority steals nothing";
  test::mix(m, 64);
  EXPECT_FALSE(m.play(id, {.volume = 0.2f, .steal = true}).valid())
      << "a quieter voice of the same priority steals nothing";
  EXPECT_EQ(m.stats().steals, 1u);
  EXPECT_EQ(m.stats().plays_refused, 3u);
}

TEST(Mixer, SpatialVoicesFollowTheAttenuationModelAndPanFromTheirDirection) {
  struct Case {
    Attenuation model;
    float distance;
  };
  for (const Case c : {Case{Attenuation::Inverse, 0.5f}, Case{Attenuation::Inverse, 7.0f},
                       Case{Attenuation::Linear, 30.0f}, Case{Attenuation::Exponential, 12.0f},
                       Case{Attenuation::Inverse, 500.0f}}) {
    Mixer m;
    const SoundId id = m.add_sound(make_sound(std::vector<float>(4800, 1.0f))).value();
    // Listener at the origin looking down -Z: +X is to its right.
    m.play(id, {.spatial = true,
                .spatial_params = {.position = {c.distance, 0, 0},
                                   .model = c.model,
                                   .min_distance = 1,
                                   .max_distance = 100,
                                   .rolloff = 1}});
    const auto out = test::mix(m, 64);
    const float d = std::clamp(c.distance, 1.0f, 100.0f);
    float expected = 1;
    if (c.model == Attenuation::Inverse) expected = 1 / (1 + (d - 1));
    if (c.model == Attenuation::Linear) expected = 1 - (d - 1) / 99;
    if (c.model == Attenuation::Exponential) expected = std::pow(d, -1.0f);
    EXPECT_NEAR(out[1], expected, 1e-6f) << "distance " << c.distance;
    EXPECT_NEAR(out[0], 0.0f, 1e-6f) << "a source on the right is silent on the left";
  }
}

TEST(Mixer, DopplerShiftsPitchByTheApproachSpeed) {
  Mixer m({.speed_of_sound = 343});
  const SoundId id = m.add_sound(make_sound(test::sine(500, 1.0, 48000))).value();
  const float v = 34.3f;  // a tenth of the speed of sound, towards the listener
  const VoiceHandle h =
      m.play(id, {.loop = true,
                  .spatial = true,
                  .spatial_params = {
                      .position = {0, 0, -10}, .velocity = {0, 0, v}, .model = Attenuation::None}});
  const auto out = test::channel(test::mix(m, 48000), 0);
  const double factor = 343.0 / (343.0 - v);
  const auto step = static_cast<std::uint64_t>(factor * 4294967296.0);
  EXPECT_NEAR(static_cast<double>(m.position(h)), static_cast<double>((48000 * step >> 32) % 48000),
              1.0);
  EXPECT_LT(test::thd_n_db(out, 500 * factor, 48000), -40.0) << "not a 550 Hz sine";
}

TEST(Mixer, OcclusionMufflesWithoutCutting) {
  auto level = [](float occlusion, double frequency) {
    Mixer m;
    const SoundId id = m.add_sound(make_sound(test::sine(frequency, 1.0, 48000))).value();
    m.play(id, {.loop = true,
                .spatial = true,
                .spatial_params = {
                    .position = {0, 0, -1}, .model = Attenuation::None, .occlusion = occlusion}});
    const auto out = test::channel(test::mix(m, 9600), 0);
    double e = 0;
    for (std::size_t i = 4800; i < out.size(); ++i) e += double{out[i]} * out[i];
    return std::sqrt(e / 4800);
  };
  const double low_clear = level(0, 200), low_occluded = level(1, 200);
  const double high_clear = level(0, 8000), high_occluded = level(1, 8000);
  EXPECT_GT(low_occluded, 0.4 * low_clear) << "a low tone stays audible";
  EXPECT_LT(high_occluded, 0.1 * high_clear) << "a high tone is muffled";
}

TEST(Mixer, BusesApplyVolumeAndTheirFilter) {
  Mixer m;
  const BusId music = m.add_bus({.name = "music", .volume = 0.5f}).value();
  const BusId muffled = m.add_bus({.name = "muffled",
                                   .filter = {.type = BiquadDesc::Type::LowPass, .frequency = 300}})
                            .value();
  const SoundId dc = m.add_sound(make_sound(std::vector<float>(48000, 0.4f))).value();
  const SoundId hiss = m.add_sound(make_sound(test::sine(12000, 1.0, 48000))).value();
  m.play(dc, {.pan = -1.0f, .bus = music, .loop = true});
  m.play(hiss, {.pan = 1.0f, .bus = muffled, .loop = true});
  const auto out = test::mix(m, 4800);
  EXPECT_NEAR(out[2 * 100], 0.2f, 1e-6f) << "bus volume";
  double e = 0;
  for (std::size_t i = 2400; i < 4800; ++i) e += double{out[2 * i + 1]} * out[2 * i + 1];
  EXPECT_LT(std::sqrt(e / 2400), 0.01) << "12 kHz through a 300 Hz low-pass";
  EXPECT_FALSE(m.add_bus({.name = "orphan", .parent = 9}));
}

TEST(Mixer, MemoryBudgetRefusesAndKeepsWhatWasLoaded) {
  Mixer m({.memory_budget = 48000 * 4 + 100});
  const SoundId first = m.add_sound(make_sound(std::vector<float>(48000, 0.25f))).value();
  const auto second = m.add_sound(make_sound(std::vector<float>(100, 0.5f), 1, 48000, "big.wav"));
  ASSERT_FALSE(second);
  EXPECT_NE(second.status().message().find("big.wav"), std::string::npos);
  EXPECT_NE(second.status().message().find("budget"), std::string::npos);
  EXPECT_EQ(m.stats().memory_used, 48000u * 4);
  m.play(first, {.pan = -1.0f});
  EXPECT_NEAR(test::mix(m, 16)[0], 0.25f, 1e-6f);
}

// The sound bank: a banked sound mixes exactly as the same samples added whole, from a slot of
// a fixed-size cache that holds it while it plays.
TEST(MixerBank, ABankedSoundSoundsExactlyLikeTheSameSoundInMemory) {
  const std::vector<float> samples = test::sine(440, 0.2, 48000);
  Mixer whole({.block_frames = 256});
  const SoundId w = whole.add_sound(make_sound(samples)).value();
  Mixer banked({.block_frames = 256, .bank_slots = 2, .bank_slot_bytes = samples.size() * 4});
  const auto b = banked.add_banked_sound({"a4", 1, 48000, samples});
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(banked.sound(b.value()), nullptr);  // no Sound object: its samples are the caller's
  whole.play(w, {.volume = 0.7f, .pitch = 1.3f});
  banked.play(b.value(), {.volume = 0.7f, .pitch = 1.3f});
  EXPECT_EQ(test::mix(whole, 4000), test::mix(banked, 4000));
  ASSERT_NE(banked.bank(), nullptr);
  EXPECT_EQ(banked.bank()->misses, 1u);
  EXPECT_EQ(banked.bank()->locked, 1u);  // held while it plays
  test::mix(banked, 8000);               // past its end: the voice ends, the slot is let go
  EXPECT_EQ(banked.bank()->locked, 0u);
  EXPECT_EQ(banked.bank()->resident, 1u);  // and kept: the next play is a hit
  banked.play(b.value());
  EXPECT_EQ(banked.bank()->hits, 1u);
}

// Filled past its size: six sounds through three slots. While all three are held, a louder play
// drops the quietest voice holding a slot (the panic mode); a quieter one is refused; a sound
// already resident plays without touching the others.
TEST(MixerBank, AFullBankDropsTheQuietestVoiceOrRefuses) {
  Mixer m({.bank_slots = 3, .bank_slot_bytes = 48000 * 4});
  std::vector<std::vector<float>> data;
  std::vector<SoundId> ids;
  for (int i = 0; i < 6; ++i) data.push_back(std::vector<float>(48000, 0.1f * (i + 1)));
  for (int i = 0; i < 6; ++i) {
    std::string name = std::to_string(i);  // appended: GCC 12 warns on "s" + ... (-Wrestrict)
    name += ".raw";
    ids.push_back(m.add_banked_sound({name, 1, 48000, data[i]}).value());
  }
  const VoiceHandle loud = m.play(ids[0], {.volume = 0.9f, .loop = true});
  const VoiceHandle quiet = m.play(ids[1], {.volume = 0.1f, .loop = true});
  const VoiceHandle mid = m.play(ids[2], {.volume = 0.5f, .loop = true});
  test::mix(m, 64);  // audibility is known after a block
  EXPECT_EQ(m.bank()->locked, 3u);
  const VoiceHandle again = m.play(ids[0], {.volume = 0.3f});  // resident: shares the slot
  EXPECT_TRUE(again.valid());
  EXPECT_EQ(m.stats().bank_drops, 0u);
  const VoiceHandle fourth = m.play(ids[3], {.volume = 0.6f, .loop = true});
  ASSERT_TRUE(fourth.valid());
  EXPECT_FALSE(m.playing(quiet)) << "the quietest voice holding a slot alone gave it up";
  EXPECT_TRUE(m.playing(loud) && m.playing(mid) && m.playing(again));
  EXPECT_EQ(m.stats().bank_drops, 1u);
  EXPECT_EQ(m.bank()->panics, 1u);
  test::mix(m, 64);
  EXPECT_FALSE(m.play(ids[4], {.volume = 0.05f}).valid()) << "quieter than all: refused";
  EXPECT_EQ(m.stats().bank_drops, 1u);
  EXPECT_EQ(m.stats().plays_refused, 1u);
  // What plays is what was asked: the fourth sound's level (0.4) at volume 0.6, centred.
  m.stop(loud);
  m.stop(mid);
  m.stop(again);
  const float centre = 0.6f * 0.4f * std::sqrt(0.5f);
  EXPECT_NEAR(test::mix(m, 256)[200], centre, 1e-5f);
}

TEST(MixerBank, BadBankedSoundsAreRefusedWithTheirName) {
  std::vector<float> ok(100, 0.1f), odd(101, 0.1f), nan(10, 0.1f);
  nan[3] = std::nanf("");
  Mixer none;
  auto r = none.add_banked_sound({"x.raw", 1, 48000, ok});
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("no sound bank"), std::string::npos) << r.message();
  Mixer m({.bank_slots = 1, .bank_slot_bytes = 256});
  r = m.add_banked_sound({"big.raw", 1, 48000, ok});
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("big.raw: 400 bytes do not fit a bank slot of 256"), std::string::npos)
      << r.message();
  r = m.add_banked_sound({"odd.raw", 2, 48000, std::span(odd).first(21)});
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("not whole frames"), std::string::npos) << r.message();
  r = m.add_banked_sound({"nan.raw", 1, 48000, nan});
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("sample 3 is not finite"), std::string::npos) << r.message();
  r = m.add_banked_sound({"rate.raw", 1, 7, std::span(ok).first(10)});
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("sample rate 7"), std::string::npos) << r.message();
  EXPECT_TRUE(m.add_banked_sound({"fine.raw", 1, 48000, std::span(ok).first(64)}));
}

class MixerStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("spindle_mixer_stream_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write_wav(const std::vector<float>& samples, std::uint32_t channels,
                        std::uint32_t rate) {
    // Appended, not "s" + ...: GCC 12 warns (-Wrestrict) on that concatenation.
    std::string name = std::to_string(files_++);
    name += ".wav";
    const std::string path = (dir_ / name).string();
    const auto bytes = encode_wav(samples, channels, rate, WavFormat::Float32);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  std::filesystem::path dir_;
  int files_ = 0;
};

TEST_F(MixerStreams, AStreamSoundsExactlyLikeTheSameSoundInMemory) {
  const auto s = test::sine(441, 0.5, 44100);  // 22050 frames: many buffer refills
  const std::string path = write_wav(s, 1, 44100);
  for (const bool loop : {false, true}) {
    const MixerConfig cfg{.block_frames = 256, .stream_buffer_frames = 2048};
    Mixer streamed(cfg), memory(cfg);
    const SoundId a = streamed.add_stream(path).value();
    const SoundId b = memory.add_sound(make_sound(s, 1, 44100)).value();
    const PlayParams p{
        .pitch = 1.3f, .loop = loop, .loop_start = 1000, .loop_end = 20000, .start_frame = 300};
    const VoiceHandle va = streamed.play(a, p);
    const VoiceHandle vb = memory.play(b, p);
    for (std::uint32_t n : {700u, 1300u, 4096u, 12000u, 9000u}) {
      const auto x = test::mix(streamed, n), y = test::mix(memory, n);
      for (std::size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(x[i], y[i]) << (loop ? "looping" : "one-shot") << ", a call of " << n
                              << " frames, sample " << i;
    }
    EXPECT_EQ(streamed.playing(va), memory.playing(vb));
    EXPECT_EQ(streamed.playing(va), loop);
    if (loop) {
      EXPECT_EQ(streamed.position(va), memory.position(vb));
    }
    EXPECT_EQ(streamed.stats().stream_starved, 0u);
  }
}

TEST_F(MixerStreams, StreamSlotsAreLimitedAndReused) {
  const std::string path = write_wav(std::vector<float>(4410, 0.1f), 1, 44100);
  Mixer m({.max_streams = 1});
  const SoundId id = m.add_stream(path).value();
  const VoiceHandle first = m.play(id);
  ASSERT_TRUE(first.valid());
  EXPECT_FALSE(m.play(id).valid()) << "one stream slot";
  test::mix(m, 5000);  // 4410 frames at 44.1 kHz are 4800 at 48 kHz
  EXPECT_FALSE(m.playing(first));
  EXPECT_TRUE(m.play(id).valid()) << "its slot is free again";
  EXPECT_FALSE(m.add_stream((dir_ / "missing.ogg").string()));
}

// A streamed file deleted while it plays, and one deleted or swapped for a FIFO before the next
// play (issue 24's faults): the voice playing keeps the file it opened and sounds to its end as if
// nothing happened; a later play is refused promptly, counted, with the reason in the log; the
// mixer and its other voices go on.
TEST_F(MixerStreams, AFileDeletedOrReplacedWhileStreamedLosesNothingAlreadyPlaying) {
  const auto s = test::sine(441, 0.5, 44100);
  const std::string path = write_wav(s, 1, 44100);
  const MixerConfig cfg{.block_frames = 256, .stream_buffer_frames = 2048};
  Mixer streamed(cfg), memory(cfg);
  const SoundId a = streamed.add_stream(path).value();
  const SoundId b = memory.add_sound(make_sound(s, 1, 44100)).value();
  const VoiceHandle va = streamed.play(a);
  memory.play(b);
  auto x = test::mix(streamed, 3000), y = test::mix(memory, 3000);
  ASSERT_EQ(x, y);
  std::filesystem::remove(path);
  for (int i = 0; i < 10; ++i) {
    x = test::mix(streamed, 3000);
    y = test::mix(memory, 3000);
    ASSERT_EQ(x, y) << "after the file was deleted, call " << i;
  }
  EXPECT_FALSE(streamed.playing(va));
  EXPECT_EQ(streamed.stats().stream_starved, 0u);

  std::vector<std::string> log;
  const int sink = core::logger().add_sink(
      [](void* lines, const core::LogRecord& r) {
        static_cast<std::vector<std::string>*>(lines)->emplace_back(r.text, r.text_size);
      },
      &log);
  const std::uint64_t refused = streamed.stats().plays_refused;
  EXPECT_FALSE(streamed.play(a).valid()) << "the file is gone";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(streamed.play(a).valid()) << "a FIFO where the file was";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5))
      << "refused without waiting for a writer";
  EXPECT_EQ(streamed.stats().plays_refused, refused + 2);
  core::logger().remove_sink(sink);
  bool said_why = false;
  for (const auto& line : log)
    said_why = said_why || line.find("not a regular file (a FIFO)") != std::string::npos;
  EXPECT_TRUE(said_why);
  // The mixer goes on: a sound played now is heard.
  streamed.play(streamed.add_sound(make_sound(s, 1, 44100)).value());
  float loudest = 0;
  for (const float v : test::mix(streamed, 512)) loudest = std::max(loudest, std::abs(v));
  EXPECT_GT(loudest, 0.1f);
}

}  // namespace
}  // namespace spindle::audio
