// Events across simulation steps and frames: every reader sees each event exactly once, whatever
// the number of steps a frame runs, so a frame of k steps gives the world of k step() calls.
#include <cstdint>
#include <ostream>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/timer.h>

#include "test_support.h"

namespace spindle::core {
namespace {

using ::spindle::test::available_modes;

constexpr std::int64_t kStepNs = 10'000'000;  // 100 Hz: frame deltas below are whole steps
constexpr std::uint32_t kRockTimer = 7;
constexpr std::uint32_t kBonus = 5;

struct Coin {
  std::uint64_t due_tick = 0;  // picked up in this step
};
struct Picked {
  Entity coin;
  std::uint64_t tick;  // the step that emitted it
};
struct Bonus {  // emitted by the game's loop, between frames
  std::uint32_t value;
};
struct Rock {
  std::uint32_t count = 0;
};
// On an entity, not a resource, so the state hash covers what the simulation counted.
struct Tally {
  std::uint32_t picked = 0;
  std::uint32_t bonus = 0;
};

// What one kind of reader has seen so far.
struct Seen {
  std::uint32_t picked = 0;
  std::uint32_t fired = 0;
  std::uint32_t bonus = 0;
  bool operator==(const Seen&) const = default;
  friend std::ostream& operator<<(std::ostream& out, const Seen& s) {
    return out << "{picked " << s.picked << ", fired " << s.fired << ", bonus " << s.bonus << "}";
  }
};

void count_events(World& world, Seen& seen) {
  seen.picked += static_cast<std::uint32_t>(world.read_events<Picked>().size());
  seen.fired += static_cast<std::uint32_t>(world.read_events<TimerFired>().size());
  for (const Bonus& b : world.read_events<Bonus>()) seen.bonus += b.value;
}

// Coins picked up on ticks 1, 3, ..., 19 and counted by a score stage; rocks spawned by the
// timer pattern of timer.h (fires on ticks 4, 9, 14, 19, ...); a presentation stage and the game's
// loop count what they see.
class EventsGame {
 public:
  explicit EventsGame(jobs::Mode mode) : engine_(config(mode)) {
    World& world = engine_.world();
    world.register_component<Coin>("coin");
    world.register_component<Rock>("rock");
    world.register_component<Tally>("tally");
    world.events<Picked>();
    world.events<Bonus>();
    engine_.add_plugin<TimerPlugin>();
    engine_.add_system<const Coin>("pickup", [](StageContext& ctx, Entity e, const Coin& c) {
      if (ctx.tick() < c.due_tick) return;
      ctx.commands().destroy(e);
      ctx.commands().emit(Picked{e, ctx.tick()});
    });
    engine_.add_system<Tally>("score", [this](StageContext& ctx, Entity, Tally& t) {
      for (const Picked& p : ctx.world().read_events<Picked>()) {
        ++t.picked;
        if (ctx.tick() != p.tick + 1) ++late_;
      }
      for (const Bonus& b : ctx.world().read_events<Bonus>()) t.bonus += b.value;
    });
    engine_.add_stage({.name = "spawn_rocks", .run = [](StageContext& ctx) {
                         for (const TimerFired& t : ctx.world().read_events<TimerFired>())
                           if (t.id == kRockTimer) ctx.commands().spawn(Rock{t.count});
                       }});
    engine_.add_stage({.name = "hud",
                       .phase = Phase{"render", 700},
                       .run = [this](StageContext& ctx) { count_events(ctx.world(), presented_); },
                       .simulation = false});
    for (std::uint64_t i = 0; i < 10; ++i) world.add<Coin>(world.create(), Coin{1 + 2 * i});
    tally_ = world.create();
    world.add<Tally>(tally_);
    world.add<Timer>(world.create(), Timer::every(0.05, kRockTimer));
  }

  void frame(std::int64_t delta_ns) {
    engine_.frame(delta_ns);
    after_frame();
  }
  void step() {
    engine_.step();
    after_frame();
  }
  // The game emits between frames; the simulation is to count it once.
  void emit_bonus() { engine_.world().emit(Bonus{kBonus}); }

  Engine& engine() { return engine_; }
  std::uint64_t hash() const { return engine_.world().state_hash(); }
  const Tally& tally() const { return *engine_.world().get<Tally>(tally_); }
  std::uint32_t rocks() { return engine_.world().query<const Rock>().count(); }
  // What the simulation has reacted to, in the terms the other readers count.
  Seen simulated() { return Seen{tally().picked, rocks(), tally().bonus}; }
  const Seen& looped() const { return looped_; }
  const Seen& presented() const { return presented_; }
  // Pickups a simulation reader saw in another step than the one after their emission.
  std::uint32_t late() const { return late_; }

 private:
  static EngineConfig config(jobs::Mode mode) {
    EngineConfig c = test::engine_config(mode, 2);
    c.fixed_step_ns = kStepNs;
    return c;
  }
  // The README's loop: read the events after each frame. After any frame, the loop and the
  // presentation have seen exactly the events the simulation has reacted to.
  void after_frame() {
    count_events(engine_.world(), looped_);
    EXPECT_EQ(looped_, simulated()) << "after frame " << engine_.frame_number();
    EXPECT_EQ(presented_, simulated()) << "after frame " << engine_.frame_number();
  }

  Engine engine_;
  Entity tally_;
  Seen looped_;
  Seen presented_;
  std::uint32_t late_ = 0;
};

// 24 steps: a multiple of every k below, and a few steps past the last pickup and firing.
constexpr std::uint32_t kSteps = 24;
// Picked on ticks 1..19 (all 10 coins), fired on 4, 9, 14, 19, each seen one step later.
constexpr Seen kSeenAfter24Steps{10, 4, kBonus};

// frame(k steps) kSteps / k times; the bonus after the first frame.
void run_frames(EventsGame& game, std::uint32_t k) {
  for (std::uint32_t f = 0; f < kSteps / k; ++f) {
    game.frame(k * kStepNs);
    EXPECT_EQ(game.engine().last_frame().steps, k);
    if (f == 0) game.emit_bonus();
  }
}
// The same game through step() alone, the bonus after step k.
void run_steps(EventsGame& game, std::uint32_t k) {
  for (std::uint32_t s = 1; s <= kSteps; ++s) {
    game.step();
    if (s == k) game.emit_bonus();
  }
}

TEST(Events, SimulationReadersSeeEachEventOnceInTheNextStep) {
  for (std::uint32_t k : {1u, 2u, 3u, 8u}) {
    EventsGame game(jobs::Mode::Single);
    run_frames(game, k);
    EXPECT_EQ(game.tally().picked, 10u) << k << " steps per frame";
    EXPECT_EQ(game.rocks(), 4u) << k << " steps per frame";  // one per firing
    EXPECT_EQ(game.tally().bonus, kBonus) << k << " steps per frame";
    EXPECT_EQ(game.late(), 0u) << k << " steps per frame";
  }
}

TEST(Events, AFrameOfKStepsGivesTheWorldOfKStepCalls) {
  for (std::uint32_t k : {1u, 2u, 3u, 8u}) {
    EventsGame stepped(jobs::Mode::Single);
    run_steps(stepped, k);
    EXPECT_EQ(stepped.simulated(), kSeenAfter24Steps);
    for (jobs::Mode mode : available_modes()) {
      EventsGame framed(mode);
      run_frames(framed, k);
      EXPECT_EQ(framed.hash(), stepped.hash())
          << k << " steps per frame, " << jobs::to_string(mode);
      EXPECT_EQ(framed.simulated(), stepped.simulated())
          << k << " steps per frame, " << jobs::to_string(mode);
    }
  }
}

TEST(Events, TheGameLoopAndPresentationSeeEachEventOnce) {
  for (std::uint32_t k : {1u, 2u, 3u, 8u}) {
    EventsGame game(jobs::Mode::Single);
    run_frames(game, k);  // checks them against the simulation after every frame
    EXPECT_EQ(game.looped(), kSeenAfter24Steps) << k << " steps per frame";
    EXPECT_EQ(game.presented(), kSeenAfter24Steps) << k << " steps per frame";
  }
}

TEST(Events, UnevenFramesAndFramesWithoutStepsGiveTheWorldOfAsManySteps) {
  // Frame deltas in ms against 10 ms steps: frames of 0 to 8 steps, several with none.
  const std::int64_t deltas_ms[] = {4, 4, 4, 25, 0, 80, 7, 13, 3, 10, 56, 2, 9, 40, 1, 1, 30, 5};
  EventsGame framed(jobs::Mode::Single);
  std::uint64_t bonus_after = 0;
  std::uint32_t empty_frames = 0, long_frames = 0;
  for (std::int64_t ms : deltas_ms) {
    framed.frame(ms * 1'000'000);
    const std::uint32_t steps = framed.engine().last_frame().steps;
    empty_frames += steps == 0;
    long_frames += steps >= 3;
    if (steps == 0) {
      // Nothing was delivered, so nothing is shown again.
      EXPECT_TRUE(framed.engine().world().read_events<Picked>().empty());
      EXPECT_TRUE(framed.engine().world().read_events<TimerFired>().empty());
    }
    if (bonus_after == 0 && framed.engine().tick() >= 5) {
      framed.emit_bonus();
      bonus_after = framed.engine().tick();
    }
  }
  ASSERT_GE(empty_frames, 3u);
  ASSERT_GE(long_frames, 3u);
  ASSERT_GE(framed.engine().tick(), 22u);  // every coin and three firings seen by then

  EventsGame stepped(jobs::Mode::Single);
  for (std::uint64_t s = 1; s <= framed.engine().tick(); ++s) {
    stepped.step();
    if (s == bonus_after) stepped.emit_bonus();
  }
  EXPECT_EQ(framed.hash(), stepped.hash());
  EXPECT_EQ(framed.simulated(), stepped.simulated());
  EXPECT_EQ(framed.tally().picked, 10u);
  EXPECT_EQ(framed.tally().bonus, kBonus);
  EXPECT_EQ(framed.late(), 0u);
  EXPECT_EQ(framed.looped(), framed.simulated());
  EXPECT_EQ(framed.presented(), framed.simulated());
}

TEST(Events, EventsEmittedByPresentationReachTheNextStepOnce) {
  struct Shown {
    std::uint64_t frame;
  };
  EngineConfig c = test::engine_config(jobs::Mode::Single, 1);
  c.fixed_step_ns = kStepNs;
  Engine engine(c);
  engine.world().events<Shown>();
  std::vector<std::uint64_t> simulated;  // the frame of each Shown a simulation stage read
  engine.add_stage({.name = "react", .run = [&](StageContext& ctx) {
                      for (const Shown& s : ctx.world().read_events<Shown>())
                        simulated.push_back(s.frame);
                    }});
  engine.add_stage(
      {.name = "show",
       .phase = Phase{"render", 700},
       .run = [](StageContext& ctx) { ctx.commands().emit(Shown{ctx.engine().frame_number()}); },
       .simulation = false});
  std::vector<std::uint64_t> looped;
  // Frames of 3, 0, 0, 2 and 1 steps: the first step after a frame reads what it showed.
  for (std::int64_t steps : {3, 0, 0, 2, 1}) {
    engine.frame(steps * kStepNs);
    ASSERT_EQ(engine.last_frame().steps, static_cast<std::uint32_t>(steps));
    for (const Shown& s : engine.world().read_events<Shown>()) looped.push_back(s.frame);
  }
  EXPECT_EQ(simulated, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(looped, simulated);
}

}  // namespace
}  // namespace spindle::core
