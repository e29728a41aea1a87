// systems_and_events: game logic as components, systems and events.
//
// Crates fall. A per-entity system moves them (split into jobs); a custom stage, declaring what
// it reads, finds the ones that reached the ground and, through its command buffer, destroys them
// and emits a Landed event; a second stage reads each Landed event in the next step, keeps the
// score and spawns a splash, which a third system fades out and destroys. The game's loop reads
// the same events after every step. Every crate must land, and each Landed event must be read
// exactly once by the stage and once by the loop.
//
//   spindle_sample_systems_and_events [--mode single|static|dynamic|tbb] [--workers N]
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>

#include <spindle/spindle.h>

#include "sample_args.h"

using namespace spindle;
using core::Entity;
using core::StageContext;

constexpr int kCrates = 200;

// Components: plain structs without padding (the world's state hash reads their bytes).
struct Position {
  glm::vec2 p{0.0f};
};
struct Velocity {
  glm::vec2 v{0.0f};
};
struct Crate {
  std::int32_t id = 0;
};
struct Splash {
  float life = 0.5f;  // seconds
};
// An event, and a resource only the "score" stage writes.
struct Landed {
  Entity crate;
  std::int32_t id;
};
struct Tally {
  std::int32_t landed = 0, splashes = 0;
  std::array<std::int32_t, kCrates> reads{};  // per crate: Landed events read by the stage
};

// Systems: fn(ctx, entity, components...) for every entity that has the components, in parallel
// chunks. A non-const component is written: no other stage touching it runs at the same time.
void move(StageContext& ctx, Entity, Velocity& v, Position& p) {
  v.v.y -= 9.81f * ctx.dt();
  p.p += v.v * ctx.dt();
}
void fade(StageContext& ctx, Entity splash, Splash& s) {
  s.life -= ctx.dt();
  if (s.life <= 0.0f) ctx.commands().destroy(splash);
}

// A custom stage: its own code and split. Jobs may not change the world's structure, so
// destroying and emitting are recorded in the command buffer, applied at the end of the step.
void land(StageContext& ctx) {
  auto crates = ctx.world().query<const Crate, const Position>();
  ctx.parallel_for(crates.size(), [&](std::uint32_t begin, std::uint32_t end) {
    crates.each_range(begin, end, [&](Entity crate, const Crate& c, const Position& p) {
      if (p.p.y > 0.0f) return;
      ctx.commands().destroy(crate);
      ctx.commands().emit(Landed{crate, c.id});
    });
  });
}

// Reads the events the previous step emitted, each exactly once, and reacts.
void score(StageContext& ctx) {
  Tally& tally = *ctx.world().resource<Tally>();
  for (const Landed& l : ctx.world().read_events<Landed>()) {
    ++tally.landed;
    ++tally.reads[l.id];
    ctx.commands().spawn(Position{{static_cast<float>(l.id), 0.0f}}, Splash{});
    ++tally.splashes;
  }
}

void build_game(core::Engine& engine) {
  core::World& world = engine.world();
  world.events<Landed>();
  world.set_resource<Tally>();
  engine.add_system<Velocity, Position>("move", move);  // registers the components it names
  // A stage declares what it touches (Access): stages that conflict run in order, the others
  // may run at the same time.
  engine.add_stage({.name = "land",
                    .access = core::Access{}.read<Position, Crate>(),
                    .after = {"move"},
                    .run = land});
  engine.add_stage({.name = "score", .access = core::Access{}.write<Tally>(), .run = score});
  engine.add_system<Splash>("fade", fade);

  for (int i = 0; i < kCrates; ++i) {  // dropped from 1 m to 11 m: they land over 90 steps
    const Entity crate = world.create();
    world.add<Position>(crate, Position{{static_cast<float>(i), 1.0f + 0.05f * i}});
    world.add<Velocity>(crate);
    world.add<Crate>(crate, Crate{i});
  }
}

int main(int argc, char** argv) {
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;
  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  build_game(engine);

  std::array<std::int32_t, kCrates> seen_by_loop{};
  std::uint32_t peak_splashes = 0;
  for (int step = 0; step < 150; ++step) {  // 2.5 s of 60 Hz steps
    engine.step();
    for (const Landed& l : engine.world().read_events<Landed>()) ++seen_by_loop[l.id];
    peak_splashes = std::max(peak_splashes, engine.world().storage<Splash>()->size());
    if (step % 30 == 29)
      std::printf("systems_and_events: step %3d: %3u entities, %3d crates landed\n", step + 1,
                  engine.world().entity_count(), engine.world().resource<Tally>()->landed);
  }

  const Tally& tally = *engine.world().resource<Tally>();
  bool once = true;
  for (int i = 0; i < kCrates; ++i) once = once && tally.reads[i] == 1 && seen_by_loop[i] == 1;
  std::printf(
      "systems_and_events: %s mode, %d landed, %d splashes (up to %u at once), each event read "
      "once: %s, %u entities left, hash %016llx\n",
      jobs::to_string(engine.mode()), tally.landed, tally.splashes, peak_splashes,
      once ? "yes" : "NO", engine.world().entity_count(),
      static_cast<unsigned long long>(engine.world().state_hash()));
  // Every crate landed and was read exactly once; every splash faded and was destroyed.
  const bool ok = once && tally.landed == kCrates && tally.splashes == kCrates &&
                  peak_splashes > 0 && engine.world().entity_count() == 0;
  if (!ok) std::fprintf(stderr, "systems_and_events: not every crate landed exactly once\n");
  return ok ? 0 : 1;
}
