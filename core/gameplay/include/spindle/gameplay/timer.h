// Timers as components: an entity with a Timer gets a TimerFired event when it runs out (in
// game time, on simulation steps), once or repeatedly.
//
// Usage:
//
//   engine.add_plugin<spindle::core::TimerPlugin>();
//   world.add<spindle::core::Timer>(spawner, spindle::core::Timer::every(2.0, /*id*/ 1));
//   world.add<spindle::core::Timer>(bomb, spindle::core::Timer::once(3.5, /*id*/ 2));
//   // in any simulation stage, the step after the firing (each firing is read once, however
//   // many steps a frame runs, so each spawns one rock):
//   for (const spindle::core::TimerFired& t : ctx.world().read_events<spindle::core::TimerFired>())
//     if (t.id == 1) spawn_rock();
//
// A one-shot timer removes its Timer component when it fires. Time is counted in integer
// nanoseconds of fixed steps, so timers fire on the same step in every job mode.
#pragma once

#include <cstdint>

#include <spindle/engine/engine.h>

namespace spindle::core {

struct Timer {
  std::int64_t remaining_ns = 0;
  std::int64_t period_ns = 0;  // 0: fires once
  std::uint32_t id = 0;
  std::uint32_t fired = 0;  // times it has fired

  static Timer once(double seconds, std::uint32_t id) {
    return Timer{seconds_to_ns(seconds), 0, id, 0};
  }
  static Timer every(double seconds, std::uint32_t id) {
    return Timer{seconds_to_ns(seconds), seconds_to_ns(seconds), id, 0};
  }
};

struct TimerFired {
  Entity entity;
  std::uint32_t id;
  std::uint32_t count;  // 1 for the first firing
};

class TimerPlugin final : public Plugin {
 public:
  const char* name() const override { return "timers"; }
  void build(Engine& engine) override {
    engine.world().register_component<Timer>("timer");
    engine.world().events<TimerFired>();
    engine.add_system<Timer>(
        "timers",
        [](StageContext& ctx, Entity e, Timer& t) {
          t.remaining_ns -= ctx.dt_ns();
          while (t.remaining_ns <= 0) {
            ++t.fired;
            ctx.commands().emit(TimerFired{e, t.id, t.fired});
            if (t.period_ns <= 0) {
              ctx.commands().remove<Timer>(e);
              break;
            }
            t.remaining_ns += t.period_ns;
          }
        },
        Phase::Input);
  }
};

}  // namespace spindle::core
