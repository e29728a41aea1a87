// ECS iteration and engine overhead, side by side in one binary with the same flags:
//   plain/serial      pos += vel * dt over two plain arrays (the floor)
//   query/serial      the same through World::query<const Vel, Pos>()
//   plain/parallel    the plain arrays split over the job system (dynamic mode)
//   system/parallel   the same update as an Engine system (one engine step: graph, jobs, timing)
//   engine_frame/10   one Engine::step() in single mode with 10 entities, 3 systems and transforms
//
//   ./build/release/bench/spindle_bench_ecs --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true
#include <vector>

#include <benchmark/benchmark.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>

namespace {

using namespace spindle;

struct Pos {
  float x, y, z;
};
struct Vel {
  float x, y, z;
};
constexpr float kDt = 1.0f / 60.0f;
constexpr std::uint32_t kEntities = 1'000'000;

void plain_serial(benchmark::State& state) {
  std::vector<Pos> pos(kEntities, Pos{0, 0, 0});
  std::vector<Vel> vel(kEntities, Vel{1, 2, 3});
  for (auto _ : state) {
    for (std::size_t i = 0; i < kEntities; ++i) {
      pos[i].x += vel[i].x * kDt;
      pos[i].y += vel[i].y * kDt;
      pos[i].z += vel[i].z * kDt;
    }
    benchmark::DoNotOptimize(pos.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kEntities);
}
BENCHMARK(plain_serial)->Name("plain/serial")->Unit(benchmark::kMillisecond)->UseRealTime();

void fill(core::World& world) {
  world.register_component<Pos>("pos");
  world.register_component<Vel>("vel");
  for (std::uint32_t i = 0; i < kEntities; ++i) {
    const core::Entity e = world.create();
    world.add<Pos>(e, Pos{0, 0, 0});
    world.add<Vel>(e, Vel{1, 2, 3});
  }
}

void query_serial(benchmark::State& state) {
  core::World world(kEntities);
  fill(world);
  // What Engine::add_system does for its components: the query then knows they share order.
  world.track_order(core::type_id<Pos>(), core::type_id<Vel>());
  world.refresh_order();
  for (auto _ : state) {
    world.query<const Vel, Pos>().each([](core::Entity, const Vel& v, Pos& p) {
      p.x += v.x * kDt;
      p.y += v.y * kDt;
      p.z += v.z * kDt;
    });
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kEntities);
}
BENCHMARK(query_serial)->Name("query/serial")->Unit(benchmark::kMillisecond)->UseRealTime();

void plain_parallel(benchmark::State& state) {
  jobs::JobSystem js;  // dynamic, one participant per core
  std::vector<Pos> pos(kEntities, Pos{0, 0, 0});
  std::vector<Vel> vel(kEntities, Vel{1, 2, 3});
  const std::size_t grain = kEntities / (js.worker_count() * 4);
  for (auto _ : state) {
    js.parallel_for_range(0, kEntities, grain, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        pos[i].x += vel[i].x * kDt;
        pos[i].y += vel[i].y * kDt;
        pos[i].z += vel[i].z * kDt;
      }
    });
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kEntities);
  state.counters["workers"] = js.worker_count();
}
BENCHMARK(plain_parallel)->Name("plain/parallel")->Unit(benchmark::kMillisecond)->UseRealTime();

void system_parallel(benchmark::State& state) {
  core::EngineConfig config;
  config.mode = static_cast<jobs::Mode>(state.range(0));
  config.entity_capacity = kEntities;
  core::Engine engine(config);
  fill(engine.world());
  engine.add_system<const Vel, Pos>("move",
                                    [](core::StageContext&, core::Entity, const Vel& v, Pos& p) {
                                      p.x += v.x * kDt;
                                      p.y += v.y * kDt;
                                      p.z += v.z * kDt;
                                    });
  engine.step();
  for (auto _ : state) engine.step();
  state.SetItemsProcessed(state.iterations() * kEntities);
  state.counters["workers"] = engine.jobs().worker_count();
  state.SetLabel(jobs::to_string(engine.mode()));
}
BENCHMARK(system_parallel)
    ->Name("system")
    ->Arg(static_cast<int>(jobs::Mode::Single))
    ->Arg(static_cast<int>(jobs::Mode::Static))
    ->Arg(static_cast<int>(jobs::Mode::Dynamic))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void engine_frame_10(benchmark::State& state) {
  core::EngineConfig config;
  config.mode = jobs::Mode::Single;
  config.entity_capacity = 64;
  core::Engine engine(config);
  core::World& world = engine.world();
  world.register_component<Pos>("pos");
  world.register_component<Vel>("vel");
  engine.add_plugin<core::TransformPlugin>();
  engine.add_system<const Vel, Pos>("move", [](core::StageContext& ctx, core::Entity, const Vel& v,
                                               Pos& p) { p.x += v.x * ctx.dt(); });
  engine.add_system<Vel>("steer", [](core::StageContext&, core::Entity, Vel& v) { v.y = -v.y; });
  engine.add_system<const Pos, core::Transform>(
      "sync",
      [](core::StageContext&, core::Entity, const Pos& p, core::Transform& t) {
        t.set_translation(glm::vec3(p.x, p.y, p.z));
      },
      core::Phase::Gameplay, {"move"});
  for (int i = 0; i < 10; ++i) {
    const core::Entity e = world.create();
    world.add<Pos>(e, Pos{0, 0, 0});
    world.add<Vel>(e, Vel{1, 1, 1});
    world.add<core::Transform>(e);
    world.add<core::WorldTransform>(e);
  }
  engine.step();
  for (auto _ : state) engine.step();
}
BENCHMARK(engine_frame_10)->Name("engine_frame/10")->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
