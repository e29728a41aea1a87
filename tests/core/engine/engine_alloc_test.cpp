// A steady-state engine frame allocates nothing from the heap, in every mode (this binary
// counts every operator new).
#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>

#include "alloc_counter.h"

#include "test_components.h"
#include "test_support.h"

namespace spindle::core {
namespace {

using test::Pos;
using test::Vel;
struct Ttl {
  std::int32_t frames = 0;
};
struct Expired {
  Entity who;
};

TEST(EngineAlloc, SteadyStateFramesAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic}) {
    if (!jobs::mode_available(mode)) continue;
    EngineConfig c = test::engine_config(mode, 2);
    Engine engine(c);
    World& world = engine.world();
    world.register_component<Pos>("pos");
    world.register_component<Vel>("vel");
    world.register_component<Ttl>("ttl");
    engine.add_plugin<TransformPlugin>();
    engine.add_system<const Vel, Pos>(
        "move", [](StageContext& ctx, Entity, const Vel& v, Pos& p) { p.x += v.x * ctx.dt(); });
    // Entities expire and are replaced through command buffers: structural churn every frame.
    engine.add_system<Ttl>("expire", [](StageContext& ctx, Entity e, Ttl& t) {
      if (--t.frames <= 0) {
        ctx.commands().destroy(e);
        ctx.commands().spawn(Pos{}, Vel{1, 1}, Ttl{17});
      }
    });
    engine.add_system<const Pos, Transform>("sync",
                                            [](StageContext&, Entity, const Pos& p, Transform& t) {
                                              t.set_translation(glm::vec3(p.x, p.y, 0));
                                            },
                                            Phase::Gameplay, {"move"});
    for (int i = 0; i < 2000; ++i) {
      const Entity e = world.create();
      world.add<Pos>(e);
      world.add<Vel>(e, Vel{1, 0});
      world.add<Ttl>(e, Ttl{1 + i % 17});
      world.add<Transform>(e);
      world.add<WorldTransform>(e);
    }
    for (int i = 0; i < 30; ++i) engine.step();  // warm-up: graph, buffers, estimates
    const long before = ::spindle::test::heap_allocations();
    for (int i = 0; i < 50; ++i) engine.step();
    EXPECT_EQ(::spindle::test::heap_allocations() - before, 0) << jobs::to_string(mode);
  }
}

// Frames of several steps with events emitted every step (through command buffers and directly)
// and read by simulation and presentation stages: handing events from step to step and keeping
// them for the frame's readers allocates nothing either.
TEST(EngineAlloc, MultiStepFramesWithEventsAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic}) {
    if (!jobs::mode_available(mode)) continue;
    EngineConfig c = test::engine_config(mode, 2);
    c.fixed_step_ns = 10'000'000;
    Engine engine(c);
    World& world = engine.world();
    world.register_component<Ttl>("ttl");
    world.events<Expired>();
    world.events<EntityDestroyed>();  // emitted directly by the world at the sync point
    engine.add_system<Ttl>("expire", [](StageContext& ctx, Entity e, Ttl& t) {
      if (--t.frames <= 0) {
        ctx.commands().destroy(e);
        ctx.commands().emit(Expired{e});
        ctx.commands().spawn(Ttl{17});
      }
    });
    std::uint64_t simulated = 0, presented = 0;
    engine.add_stage({.name = "count", .run = [&simulated](StageContext& ctx) {
                        simulated += ctx.world().read_events<Expired>().size() +
                                     ctx.world().read_events<EntityDestroyed>().size();
                      }});
    engine.add_stage({.name = "show",
                      .phase = Phase{"render", 700},
                      .run =
                          [&presented](StageContext& ctx) {
                            presented += ctx.world().read_events<Expired>().size() +
                                         ctx.world().read_events<EntityDestroyed>().size();
                          },
                      .simulation = false});
    for (int i = 0; i < 2000; ++i) world.add<Ttl>(world.create(), Ttl{1 + i % 17});
    for (int i = 0; i < 30; ++i) engine.frame(3 * c.fixed_step_ns);  // warm-up
    const long before = ::spindle::test::heap_allocations();
    const std::uint64_t simulated_before = simulated, presented_before = presented;
    for (int i = 0; i < 50; ++i) engine.frame(3 * c.fixed_step_ns);
    EXPECT_EQ(::spindle::test::heap_allocations() - before, 0) << jobs::to_string(mode);
    EXPECT_EQ(engine.last_frame().steps, 3u);
    EXPECT_GT(simulated - simulated_before, 0u) << jobs::to_string(mode);
    EXPECT_GT(presented - presented_before, 0u) << jobs::to_string(mode);
  }
}

}  // namespace
}  // namespace spindle::core
