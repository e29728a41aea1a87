// Input (gameplay/input.h): actions a game declares, names refused with a reason, pressed /
// held / released over frames of a real Engine fed by ScriptedInput, axes, and ids the Input did
// not hand out.
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>

#include "test_support.h"

namespace spindle::core {
namespace {

TEST(Input, ActionsGetIdsInDeclarationOrderAndAreFoundByName) {
  Input input(8);
  EXPECT_EQ(input.capacity(), 8u);
  EXPECT_EQ(input.action_count(), 0u);
  const Result<ActionId> fire = input.add_action("fire");
  const Result<ActionId> jump = input.add_action("jump");
  ASSERT_TRUE(fire.ok()) << fire.message();
  ASSERT_TRUE(jump.ok()) << jump.message();
  EXPECT_EQ(fire.value(), ActionId{0});
  EXPECT_EQ(jump.value(), ActionId{1});
  EXPECT_EQ(input.action_count(), 2u);
  EXPECT_EQ(input.find_action("jump"), jump.value());
  EXPECT_EQ(input.find_action("fire"), fire.value());
  EXPECT_TRUE(input.find_action("Fire").is_none());  // names are case-sensitive
  EXPECT_TRUE(input.find_action("").is_none());
  EXPECT_EQ(input.action_name(jump.value()), "jump");
  EXPECT_EQ(input.action_name(ActionId::none()), "");
  EXPECT_TRUE(ActionId{}.is_none());
  EXPECT_EQ(ActionId{}, ActionId::none());
  // The same declarations give the same ids in another Input (ids may go into replays).
  Input other(8);
  EXPECT_EQ(other.add_action("fire").value(), fire.value());
}

TEST(Input, EmptyAndDuplicateNamesAreRefusedWithAReason) {
  test::ScopedLogCapture log;
  Input input(8);
  const ActionId fire = input.add_action("fire").value();

  const Result<ActionId> empty = input.add_action("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.message(), "input: an action needs a name");

  const Result<ActionId> again = input.add_action("fire");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "input: action 'fire' is declared already (id 0)");

  EXPECT_EQ(input.action_count(), 1u);
  EXPECT_EQ(input.find_action("fire"), fire);
  // Each refusal is logged once, as an error on the Core channel, with the same text.
  ASSERT_EQ(log.count(LogLevel::Error), 2u);
  EXPECT_EQ(log.lines()[0].channel, LogChannel::Core);
  EXPECT_EQ(log.lines()[0].message, empty.message());
  EXPECT_EQ(log.lines()[1].message, again.message());
}

TEST(Input, CapacityIsFixedWhenMade) {
  test::ScopedLogCapture log;
  Input input(2);
  ASSERT_TRUE(input.add_action("a").ok());
  ASSERT_TRUE(input.add_action("b").ok());
  const Result<ActionId> c = input.add_action("c");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("no room for action 'c': all 2 actions are declared"),
            std::string::npos)
      << c.message();
  EXPECT_TRUE(input.find_action("c").is_none());
  EXPECT_EQ(input.action_count(), 2u);

  // An ActionId cannot name more than kMaxCapacity actions: a larger capacity is cut, and said.
  Input huge(Input::kMaxCapacity + 10);
  EXPECT_EQ(huge.capacity(), Input::kMaxCapacity);
  EXPECT_EQ(log.count(LogLevel::Warning), 1u);
}

// An engine whose Input is fed by a script, and a simulation stage recording what it reads.
struct InputRig {
  struct Seen {
    std::uint64_t frame;
    std::uint64_t tick;
    bool pressed, held, released;
    float axis;
    friend bool operator==(const Seen&, const Seen&) = default;
  };

  explicit InputRig(std::int64_t fixed_step_ns = kNsPerSecond / 60) {
    EngineConfig c = test::engine_config(jobs::Mode::Single, 1);
    c.fixed_step_ns = fixed_step_ns;
    engine = std::make_unique<Engine>(c);
    Input& input = use_input(*engine);
    fire = input.add_action("fire").value();
    left = input.add_action("left").value();
    right = input.add_action("right").value();
    engine->add_stage(
        {.name = "read_input", .phase = Phase::Input, .run = [this](StageContext& ctx) {
           const Input& in = *ctx.world().resource<Input>();
           seen.push_back({ctx.engine().frame_number(), ctx.tick(), in.pressed(fire), in.held(fire),
                           in.released(fire), in.axis(right, left)});
         }});
  }
  const Input& input() { return *engine->world().resource<Input>(); }

  std::unique_ptr<Engine> engine;
  ActionId fire, left, right;
  std::vector<Seen> seen;
};

// hold(fire, 2, 4): pressed on frame 2 only, held on frames 2..4, released on frame 5 only.
TEST(Input, PressedHeldReleasedFollowTheScriptFrameByFrame) {
  InputRig rig;
  ScriptedInput script;
  script.hold(rig.fire, 2, 4);
  set_input_source(*rig.engine, &script);
  struct State {
    bool pressed, held, released;
  };
  const State expected[] = {{false, false, false}, {false, false, false}, {true, true, false},
                            {false, true, false},  {false, true, false},  {false, false, true},
                            {false, false, false}, {false, false, false}};
  for (std::uint64_t frame = 0; frame < std::size(expected); ++frame) {
    rig.engine->step();
    // The game's loop after the frame reads what the frame's step read.
    const Input& in = rig.input();
    EXPECT_EQ(in.pressed(rig.fire), expected[frame].pressed) << "frame " << frame;
    EXPECT_EQ(in.held(rig.fire), expected[frame].held) << "frame " << frame;
    EXPECT_EQ(in.released(rig.fire), expected[frame].released) << "frame " << frame;
    ASSERT_EQ(rig.seen.size(), frame + 1);
    EXPECT_EQ(rig.seen[frame].frame, frame);
    EXPECT_EQ(rig.seen[frame].pressed, expected[frame].pressed) << "frame " << frame;
    EXPECT_EQ(rig.seen[frame].held, expected[frame].held) << "frame " << frame;
    EXPECT_EQ(rig.seen[frame].released, expected[frame].released) << "frame " << frame;
  }
  EXPECT_EQ(rig.input().unknown_ids(), 0u);
}

// Input is polled once per simulation step, before its stages: a press is pressed() in exactly
// one step whatever the frames' step counts (polled per frame, each step of a three-step frame
// saw it pressed, and a recording could not be replayed step by step), and a frame that runs no
// step leaves it as the last step saw it.
TEST(Input, PolledOncePerStepSoAPressIsSeenOnce) {
  constexpr std::int64_t kStep = 10'000'000;
  InputRig rig(kStep);
  ScriptedInput script;
  script.hold(rig.fire, 1, 2);  // steps (ticks) 1 and 2
  set_input_source(*rig.engine, &script);
  rig.engine->frame(2 * kStep);  // frame 0: ticks 0, 1; fire pressed in tick 1
  rig.engine->frame(2 * kStep);  // frame 1: ticks 2, 3; held in 2, released in 3
  rig.engine->frame(kStep / 2);  // frame 2: no step, no poll
  EXPECT_EQ(rig.engine->last_frame().steps, 0u);
  EXPECT_TRUE(rig.input().released(rig.fire)) << "as tick 3 left it";
  rig.engine->frame(kStep);  // frame 3: half a step left over + one: tick 4
  using S = InputRig::Seen;
  EXPECT_EQ(rig.seen, (std::vector<S>{{0, 0, false, false, false, 0.0f},
                                      {0, 1, true, true, false, 0.0f},
                                      {1, 2, false, true, false, 0.0f},
                                      {1, 3, false, false, true, 0.0f},
                                      {3, 4, false, false, false, 0.0f}}));
}

TEST(Input, AxisIsPositiveMinusNegative) {
  InputRig rig;
  ScriptedInput script;
  script.hold(rig.right, 1, 2);
  script.hold(rig.left, 2, 3);
  set_input_source(*rig.engine, &script);
  for (int i = 0; i < 5; ++i) rig.engine->step();
  ASSERT_EQ(rig.seen.size(), 5u);
  const float expected[] = {0.0f, 1.0f, 0.0f, -1.0f, 0.0f};
  for (std::size_t f = 0; f < 5; ++f) EXPECT_EQ(rig.seen[f].axis, expected[f]) << "frame " << f;
}

// An id this Input did not hand out reads as not held, is refused by set(), is counted, and is
// logged once; it never reaches another action's state.
TEST(Input, UnknownIdsReadAsNotHeldAndAreCountedOnce) {
  test::ScopedLogCapture log;
  Input input(4);
  const ActionId fire = input.add_action("fire").value();
  Input bigger(8);
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(bigger.add_action(name).ok());
  const ActionId foreign = bigger.find_action("c");  // id 2: nothing of that id in `input`
  const ActionId past_end{3};                        // within capacity, never declared

  input.set(fire, true);
  for (ActionId bad : {ActionId::none(), foreign, past_end}) {
    EXPECT_FALSE(input.held(bad));
    EXPECT_FALSE(input.pressed(bad));
    EXPECT_FALSE(input.released(bad));
    EXPECT_FALSE(input.set(bad, true));
    EXPECT_EQ(input.action_name(bad), "");
  }
  EXPECT_EQ(input.axis(fire, foreign), 1.0f);
  EXPECT_TRUE(input.held(fire));
  EXPECT_EQ(input.unknown_ids(), 3u * 4u + 1u);  // held, pressed, released, set; axis
  EXPECT_EQ(log.count(LogLevel::Warning), 1u);
}

// A script naming an id that was never declared does not disturb the declared ones.
TEST(Input, ScriptWithAStaleIdRunsAndReportsIt) {
  test::ScopedLogCapture log;
  InputRig rig;
  ScriptedInput script;
  script.hold(ActionId{40}, 0, 10);
  script.hold(rig.fire, 1, 1);
  set_input_source(*rig.engine, &script);
  for (int i = 0; i < 3; ++i) rig.engine->step();
  ASSERT_EQ(rig.seen.size(), 3u);
  EXPECT_TRUE(rig.seen[1].pressed);
  EXPECT_FALSE(rig.seen[0].held || rig.seen[2].held);
  EXPECT_EQ(rig.input().unknown_ids(), 3u);  // one refused set() per frame
  EXPECT_EQ(log.count(LogLevel::Warning), 1u);
}

// Replacing the source by nullptr lets go of everything: what was held reads as released.
TEST(Input, NoSourceMeansNothingHeld) {
  InputRig rig;
  ScriptedInput script;
  script.hold(rig.fire, 0, 100);
  set_input_source(*rig.engine, &script);
  rig.engine->step();
  EXPECT_TRUE(rig.input().pressed(rig.fire));
  set_input_source(*rig.engine, nullptr);
  rig.engine->step();
  EXPECT_TRUE(rig.input().released(rig.fire));
  rig.engine->step();
  EXPECT_FALSE(rig.input().held(rig.fire));
  EXPECT_FALSE(rig.input().released(rig.fire));
  // Another source can take over; the actions stay declared.
  ScriptedInput again;
  again.hold(rig.fire, 3, 3);
  set_input_source(*rig.engine, &again);
  rig.engine->step();
  EXPECT_TRUE(rig.input().pressed(rig.fire));
  EXPECT_EQ(rig.input().action_count(), 3u);
}

// use_input() makes the engine's Input once, with the capacity asked first.
TEST(Input, UseInputMakesOneInputPerEngine) {
  test::ScopedLogCapture log;
  ScriptedInput script;  // outlives the engine that polls it
  Engine engine(test::engine_config(jobs::Mode::Single, 1));
  Input& first = use_input(engine, 4);
  EXPECT_EQ(first.capacity(), 4u);
  EXPECT_EQ(&use_input(engine), &first);
  EXPECT_EQ(log.count(LogLevel::Warning), 0u);
  EXPECT_EQ(&use_input(engine, 16), &first);  // too late to grow: said in the log
  EXPECT_EQ(first.capacity(), 4u);
  EXPECT_EQ(log.count(LogLevel::Warning), 1u);
  set_input_source(engine, &script);  // keeps the Input that is there
  EXPECT_EQ(engine.world().resource<Input>(), &first);
  // Each engine has its own.
  Engine other(test::engine_config(jobs::Mode::Single, 1));
  EXPECT_NE(&use_input(other), &first);
}

}  // namespace
}  // namespace spindle::core
