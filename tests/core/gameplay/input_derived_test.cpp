// Derived actions (gameplay/input.h): chords held while all their parts are, sequences pressed
// for one step when their parts are pressed in order within a window, disabled actions reading
// as up, and the bad declarations refused with a reason. Driven the way the engine's step hook
// drives them: begin_frame(), the source's set()s, resolve().
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/gameplay/input.h>

#include "test_support.h"

namespace spindle::core {
namespace {

// One poll: the listed plain actions held, everything else up.
void poll(Input& input, std::span<const ActionId> held) {
  input.begin_frame();
  input.release_all();
  for (const ActionId a : held) input.set(a, true);
  input.resolve();
}
void poll(Input& input, std::initializer_list<ActionId> held) {
  poll(input, std::span<const ActionId>(held.begin(), held.size()));
}

TEST(InputDerived, AChordIsHeldWhileEveryPartIsAndPressedWhenTheLastJoins) {
  Input input(8);
  const ActionId a = input.add_action("a").value();
  const ActionId b = input.add_action("b").value();
  const ActionId ab = input.add_chord("a+b", {a, b}).value();
  EXPECT_TRUE(input.derived(ab));
  EXPECT_FALSE(input.derived(a));

  poll(input, {a});
  EXPECT_FALSE(input.held(ab)) << "one part is not the chord";
  poll(input, {a, b});
  EXPECT_TRUE(input.pressed(ab)) << "pressed the step the last part joins";
  EXPECT_TRUE(input.held(ab));
  poll(input, {a, b});
  EXPECT_FALSE(input.pressed(ab));
  EXPECT_TRUE(input.held(ab));
  poll(input, {b});
  EXPECT_TRUE(input.released(ab)) << "released when any part lets go";
  poll(input, {});
  EXPECT_FALSE(input.held(ab));

  // Sources cannot write a derived action: resolve() owns it.
  input.begin_frame();
  EXPECT_FALSE(input.set(ab, true));
  input.resolve();
  EXPECT_FALSE(input.held(ab));
}

TEST(InputDerived, ASequenceFiresForOneStepWhenItsPartsComeInOrderWithinTheWindow) {
  Input input(8);
  const ActionId a = input.add_action("a").value();
  const ActionId b = input.add_action("b").value();
  const ActionId c = input.add_action("c").value();
  const ActionId abc = input.add_sequence("abc", {a, b, c}, /*window_steps*/ 3).value();

  // Pressed (not merely held) parts advance it; gaps of up to three steps are allowed.
  std::vector<bool> fired;
  const std::vector<std::vector<ActionId>> steps = {{a}, {a}, {}, {b}, {}, {}, {c}, {c}, {}};
  for (const auto& held : steps) {
    poll(input, held);
    fired.push_back(input.held(abc));
    if (input.held(abc)) {
      EXPECT_TRUE(input.pressed(abc));
    }
  }
  EXPECT_EQ(fired,
            (std::vector<bool>{false, false, false, false, false, false, true, false, false}))
      << "held for exactly the step its last part is pressed in";
}

TEST(InputDerived, ASequenceTooSlowOrOutOfOrderStartsAgain) {
  Input input(8);
  const ActionId a = input.add_action("a").value();
  const ActionId b = input.add_action("b").value();
  const ActionId c = input.add_action("c").value();
  const ActionId abc = input.add_sequence("abc", {a, b, c}, 2).value();

  // Too slow: three steps between b and c with a window of two.
  poll(input, {a});
  poll(input, {b});
  poll(input, {});
  poll(input, {});
  poll(input, {c});
  EXPECT_FALSE(input.held(abc)) << "c came three steps after b";

  // Out of order: a, c starts again, so the following b, c does not complete it.
  poll(input, {a});
  poll(input, {c});
  poll(input, {b});
  poll(input, {c});
  EXPECT_FALSE(input.held(abc)) << "a, c, b, c is not a, b, c";

  // An out-of-order press of the first part restarts from it: a, b, a, b, c fires.
  poll(input, {a});
  poll(input, {b});
  poll(input, {a});
  poll(input, {b});
  poll(input, {c});
  EXPECT_TRUE(input.held(abc));

  // clear() forgets a sequence half done.
  poll(input, {a});
  poll(input, {b});
  input.clear();
  poll(input, {c});
  EXPECT_FALSE(input.held(abc));
}

// The fighting-game motion: down, down-forward, forward + punch, where the last two parts are
// chords declared before the sequence.
TEST(InputDerived, ASequenceOfChordsReadsAFightingGameMotion) {
  Input input(16);
  const ActionId down = input.add_action("down").value();
  const ActionId forward = input.add_action("forward").value();
  const ActionId punch = input.add_action("punch").value();
  const ActionId down_forward = input.add_chord("down+forward", {down, forward}).value();
  const ActionId forward_punch = input.add_chord("forward+punch", {forward, punch}).value();
  const ActionId fireball =
      input.add_sequence("fireball", {down, down_forward, forward_punch}, 10).value();

  int fired = 0;
  const std::vector<std::vector<ActionId>> motion = {
      {down}, {down}, {down, forward}, {forward}, {forward, punch}, {forward, punch}, {}};
  for (const auto& held : motion) {
    poll(input, held);
    fired += input.pressed(fireball) ? 1 : 0;
  }
  EXPECT_EQ(fired, 1);

  // Punch alone after forward is not the motion.
  fired = 0;
  for (const auto& held : std::vector<std::vector<ActionId>>{{forward}, {forward, punch}, {}}) {
    poll(input, held);
    fired += input.pressed(fireball) ? 1 : 0;
  }
  EXPECT_EQ(fired, 0);
}

TEST(InputDerived, ADisabledActionReadsAsUpUntilEnabledAgain) {
  Input input(4);
  const ActionId fire = input.add_action("fire").value();
  poll(input, {fire});
  ASSERT_TRUE(input.pressed(fire));
  input.set_enabled(fire, false);
  EXPECT_FALSE(input.enabled(fire));
  EXPECT_FALSE(input.held(fire));
  EXPECT_FALSE(input.pressed(fire));
  poll(input, {});
  EXPECT_FALSE(input.released(fire)) << "a disabled action is never released either";
  poll(input, {fire});
  EXPECT_FALSE(input.held(fire));
  EXPECT_TRUE(input.source_state(fire)) << "what the source wrote is still there for recorders";
  input.set_enabled(fire, true);
  EXPECT_TRUE(input.held(fire));
}

TEST(InputDerived, BadDeclarationsAreRefusedWithAReason) {
  test::ScopedLogCapture log;
  Input input(16);
  const ActionId a = input.add_action("a").value();

  const Result<ActionId> empty = input.add_chord("none", {});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find("has 0 parts"), std::string::npos) << empty.message();

  const Result<ActionId> too_many = input.add_chord("many", {a, a, a, a, a, a, a, a, a});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.message().find("has 9 parts"), std::string::npos) << too_many.message();

  const Result<ActionId> unknown = input.add_chord("later", {a, ActionId(7)});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("part 2 is not an action declared before it"), std::string::npos)
      << unknown.message();

  const Result<ActionId> no_window = input.add_sequence("seq", {a}, 0);
  ASSERT_FALSE(no_window.ok());
  EXPECT_NE(no_window.message().find("window of at least one step"), std::string::npos)
      << no_window.message();

  const Result<ActionId> clash = input.add_chord("a", {a});
  ASSERT_FALSE(clash.ok()) << "names are shared with plain actions";

  EXPECT_EQ(input.action_count(), 1u) << "nothing refused is kept";
  EXPECT_EQ(log.count(LogLevel::Error), 5u);

  input.set_enabled(ActionId(9), false);
  EXPECT_EQ(input.unknown_ids(), 1u);
}

}  // namespace
}  // namespace spindle::core
