// Input recording and replay: a recorded run replays to the same world hash in every mode and
// worker count, frames of several steps are recorded per step, the file round-trips, and bad
// files are refused with the file and the line, never crash, and keep nothing.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/input_record.h>

#include "modes.h"

namespace spindle::core {
namespace {

// Trivially copyable without padding: the state hash reads its bytes.
struct Ship {
  float x = 0, y = 0;
  std::int32_t shots = 0;
};

// A small game whose world depends on every step's input: ships move with the axis and count
// their shots; a shot also spawns a bullet entity.
struct Game {
  std::unique_ptr<Engine> engine;
  ActionId fire, left, right;

  explicit Game(jobs::Mode mode = jobs::Mode::Single, std::uint32_t workers = 1) {
    engine = std::make_unique<Engine>(test::engine_config(mode, workers));
    World& w = engine->world();
    w.register_component<Ship>("ship");
    Input& input = use_input(*engine);
    fire = input.add_action("fire").value();
    left = input.add_action("left").value();
    right = input.add_action("right one").value();  // a name with a space, encoded in files
    for (int i = 0; i < 64; ++i) w.add<Ship>(w.create(), Ship{static_cast<float>(i), 0, 0});
    engine->add_system<Ship>("fly", [this](StageContext& ctx, Entity, Ship& s) {
      const Input& in = *ctx.world().resource<Input>();
      s.x += in.axis(right, left) * 0.5f;
      s.y += 0.01f * s.x;
      if (in.pressed(fire)) ++s.shots;
    });
  }
  std::uint64_t hash() const { return engine->world().state_hash(); }
};

ScriptedInput pilot(const Game& g) {
  ScriptedInput s;
  s.hold(g.fire, 3, 3);
  s.hold(g.fire, 10, 14);
  s.hold(g.right, 5, 40);
  s.hold(g.left, 30, 60);
  s.hold(g.fire, 70, 70);
  return s;
}

TEST(InputRecord, AReplayReproducesTheRunInEveryModeAndWorkerCount) {
  Game recorded;
  ScriptedInput script = pilot(recorded);
  InputRecorder recorder(*recorded.engine, &script);
  set_input_source(*recorded.engine, &recorder);
  for (int i = 0; i < 100; ++i) recorded.engine->step();
  EXPECT_EQ(recorder.steps(), 100u);
  const std::string text = recorder.text();
  EXPECT_EQ(text.rfind("spindle-input 1\nactions fire left right%20one\nsteps 100\n", 0), 0u)
      << text;
  const std::uint64_t expected = recorded.hash();

  spindle::test::expect_same_in_every_mode([&](jobs::Mode mode, std::uint32_t workers) {
    Game replayed(mode, workers);
    auto replay = InputReplay::parse(text, "recorded", *replayed.engine);
    EXPECT_TRUE(replay.ok()) << replay.status().message();
    if (!replay.ok()) return std::uint64_t{0};
    set_input_source(*replayed.engine, &replay.value());
    std::uint64_t steps = 0;
    while (!replay.value().finished()) replayed.engine->step(), ++steps;
    EXPECT_EQ(steps, 100u);
    EXPECT_EQ(replayed.hash(), expected) << jobs::to_string(mode) << " " << workers;
    return replayed.hash();
  });
}

// Recorded with frames of three steps (every step of a frame sees the frame's input), replayed
// one step per frame: each step gets what it saw, and the world ends the same.
TEST(InputRecord, FramesOfSeveralStepsAreRecordedPerStep) {
  Game recorded;
  ScriptedInput script = pilot(recorded);
  InputRecorder recorder(*recorded.engine, &script);
  set_input_source(*recorded.engine, &recorder);
  const std::int64_t step_ns = recorded.engine->config().fixed_step_ns;
  for (int i = 0; i < 30; ++i) recorded.engine->frame(3 * step_ns);
  recorded.engine->frame(step_ns / 2);  // a frame with no step: nothing recorded for it
  ASSERT_EQ(recorder.steps(), 90u);
  Game replayed;
  auto replay = InputReplay::parse(recorder.text(), "frames", *replayed.engine);
  ASSERT_TRUE(replay.ok()) << replay.status().message();
  set_input_source(*replayed.engine, &replay.value());
  while (!replay.value().finished()) replayed.engine->step();
  EXPECT_EQ(replayed.engine->tick(), 90u);
  EXPECT_EQ(replayed.hash(), recorded.hash());
}

TEST(InputRecord, TheRecorderPassesItsSourceThrough) {
  Game direct, through;
  ScriptedInput a = pilot(direct), b = pilot(through);
  set_input_source(*direct.engine, &a);
  InputRecorder recorder(*through.engine, &b);
  set_input_source(*through.engine, &recorder);
  for (int i = 0; i < 80; ++i) {
    direct.engine->step();
    through.engine->step();
    ASSERT_EQ(direct.hash(), through.hash()) << "step " << i;
  }
}

TEST(InputRecord, SavedFilesLoadAndBadPathsAreNamed) {
  Game recorded;
  ScriptedInput script = pilot(recorded);
  InputRecorder recorder(*recorded.engine, &script);
  set_input_source(*recorded.engine, &recorder);
  for (int i = 0; i < 50; ++i) recorded.engine->step();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("spindle_input_" + std::to_string(::getpid())))
          .string();
  ASSERT_TRUE(recorder.save(path).ok());
  Game replayed;
  auto replay = InputReplay::load(path, *replayed.engine);
  std::filesystem::remove(path);
  ASSERT_TRUE(replay.ok()) << replay.status().message();
  EXPECT_EQ(replay.value().steps(), 50u);

  auto missing = InputReplay::load(path + ".missing", *replayed.engine);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path + ".missing"), std::string::npos);
  auto directory =
      InputReplay::load(std::filesystem::temp_directory_path().string(), *replayed.engine);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos);
  EXPECT_FALSE(recorder.save("/nonexistent-dir/run.input").ok());
}

struct BadCase {
  const char* text;
  const char* says;  // the message names the file and this
};

TEST(InputRecord, BadFilesAreRefusedNamingTheLine) {
  Game game;
  const BadCase cases[] = {
      {"", "recorded:1: the header ends early"},
      {"hello\n", "recorded:1: not an input recording"},
      {"spindle-input 2\n", "recorded:1: version 2"},
      {"spindle-input 1\nsteps 3\n", "recorded:2: expected the \"actions\" line"},
      {"spindle-input 1\nactions fire jump\nsteps 1\n1 -\n",
       "recorded:2: the game declares no action 'jump'"},
      {"spindle-input 1\nactions fire fire\nsteps 1\n1 -\n",
       "recorded:2: action 'fire' is listed twice"},
      {"spindle-input 1\nactions fi%zre\nsteps 1\n1 -\n",
       "recorded:2: action name 'fi%zre' is badly encoded"},
      {"spindle-input 1\nactions fire\nsteps x\n", "recorded:3: expected \"steps N\""},
      {"spindle-input 1\nactions fire\nsteps 2000000000\n",
       "recorded:3: 2000000000 steps, over the limit"},
      {"spindle-input 1\nactions fire\nsteps 4\n2 fire\n1 -\n",
       "recorded:5: the runs end after 3 of the 4 steps"},
      {"spindle-input 1\nactions fire\nsteps 4\n5 fire\n", "recorded:4: runs past the 4 steps"},
      {"spindle-input 1\nactions fire\nsteps 4\n0 fire\n", "recorded:4: expected a step count"},
      {"spindle-input 1\nactions fire\nsteps 4\n-4 fire\n", "recorded:4: expected a step count"},
      {"spindle-input 1\nactions fire\nsteps 4\n4\n", "recorded:4: expected the held actions"},
      {"spindle-input 1\nactions fire\nsteps 4\n4 left\n",
       "recorded:4: 'left' is not in the actions line"},
      {"spindle-input 1\nactions fire\nsteps 4\n2 fire\n\n2 -\n", "recorded:5: empty line"},
      {"spindle-input 1\nactions fire\nsteps 4\n99999999999999999999999 fire\n",
       "recorded:4: expected a step count"},
  };
  for (const BadCase& c : cases) {
    auto r = InputReplay::parse(c.text, "recorded", *game.engine);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << "got: " << r.status().message() << "\nwanted: " << c.says;
  }
  // Windows line ends and a missing last newline are fine.
  auto crlf = InputReplay::parse("spindle-input 1\r\nactions fire\r\nsteps 2\r\n2 fire", "crlf",
                                 *game.engine);
  ASSERT_TRUE(crlf.ok()) << crlf.status().message();
  EXPECT_EQ(crlf.value().steps(), 2u);
}

// Every truncation of a real recording is refused (the counts no longer add up, or the header is
// cut), and random damage never crashes: it is refused, or parses to something valid.
TEST(InputRecord, EveryTruncationIsRefusedAndDamageNeverCrashes) {
  Game recorded;
  ScriptedInput script = pilot(recorded);
  InputRecorder recorder(*recorded.engine, &script);
  set_input_source(*recorded.engine, &recorder);
  for (int i = 0; i < 80; ++i) recorded.engine->step();
  const std::string text = recorder.text();
  Game game;
  ASSERT_TRUE(InputReplay::parse(text, "full", *game.engine).ok());
  for (std::size_t n = 0; n + 1 < text.size(); ++n) {
    // Cutting only the final newline leaves a whole file.
    auto r = InputReplay::parse(std::string_view(text).substr(0, n), "cut", *game.engine);
    EXPECT_FALSE(r.ok()) << "truncated to " << n << " bytes:\n" << text.substr(0, n);
  }
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string damaged = text;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      damaged[rng() % damaged.size()] = static_cast<char>(rng() % 256);
    auto r = InputReplay::parse(damaged, "damaged", *game.engine);
    if (r.ok()) {
      EXPECT_LE(r.value().steps(), InputReplay::kMaxSteps);
    } else {
      EXPECT_EQ(r.status().message().rfind("damaged:", 0), 0u) << r.status().message();
    }
  }
}

}  // namespace
}  // namespace spindle::core
