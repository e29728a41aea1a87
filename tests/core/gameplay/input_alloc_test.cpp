// Polling and reading input allocates nothing: the step hook, a ScriptedInput and the reads of
// pressed/held/released/axis/find_action in a stage, in every mode (this binary counts every
// operator new).
#include <cstdint>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>

#include "alloc_counter.h"

#include "test_support.h"

namespace spindle::core {
namespace {

TEST(InputAlloc, PollingAndReadingAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic}) {
    if (!jobs::mode_available(mode)) continue;
    ScriptedInput script;  // outlives the engine that polls it
    Engine engine(test::engine_config(mode, 2));
    Input& input = use_input(engine, 32);
    // Names longer than the small-string buffer: declaring allocates, reading must not.
    const char* const names[] = {"move_forward_on_the_ground", "move_backward_on_the_ground",
                                 "turn_left_while_standing",   "turn_right_while_standing",
                                 "fire_the_primary_weapon",    "jump_over_the_obstacle"};
    ActionId ids[std::size(names)];
    for (std::size_t i = 0; i < std::size(names); ++i) ids[i] = input.add_action(names[i]).value();
    for (std::uint64_t f = 0; f < 200; f += 7) {
      script.hold(ids[f % std::size(ids)], f, f + 3);
      script.hold(ActionId{31}, f, f);  // within capacity, never declared: refused each time
    }
    set_input_source(engine, &script);
    std::uint64_t presses = 0;
    engine.add_stage({.name = "read", .phase = Phase::Input, .run = [&](StageContext& ctx) {
                        const Input& in = *ctx.world().resource<Input>();
                        const ActionId fire = in.find_action("fire_the_primary_weapon");
                        presses += in.pressed(fire) ? 1 : 0;
                        presses += in.held(ids[0]) + in.released(ids[1]);
                        presses += in.axis(ids[3], ids[2]) != 0.0f ? 1 : 0;
                      }});
    for (int i = 0; i < 20; ++i) engine.step();  // warm-up: graph, buffers, first log line
    const long before = ::spindle::test::heap_allocations();
    for (int i = 0; i < 60; ++i) engine.step();
    for (int i = 0; i < 20; ++i) engine.frame(3 * engine.config().fixed_step_ns);
    EXPECT_EQ(::spindle::test::heap_allocations() - before, 0) << jobs::to_string(mode);
    EXPECT_GT(presses, 0u);
    EXPECT_GT(input.unknown_ids(), 0u);
  }
}

}  // namespace
}  // namespace spindle::core
