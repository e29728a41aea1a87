// A steady-state physics frame allocates nothing: neither our code (operator new, counted by the
// alloc counter) nor Bullet (its btAlignedAlloc hooks, counted here), in every mode and with
// regions. "Steady" means a settled pile of awake bodies with ongoing contacts and a system
// pushing them; creating and destroying bodies allocates (Bullet's bodies and proxies).
#include <atomic>
#include <cstdlib>

#include <gtest/gtest.h>

#include <LinearMath/btAlignedAllocator.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/physics.h>

#include "alloc_counter.h"

namespace spindle::physics {
namespace {

std::atomic<long> bullet_allocations{0};
void* counting_alloc(std::size_t size) {
  bullet_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size);
}
void counting_free(void* p) {
  std::free(p);
}

TEST(PhysicsAlloc, SteadyStateFramesAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  btAlignedAllocSetCustom(counting_alloc, counting_free);
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic}) {
    if (!jobs::mode_available(mode)) continue;
    core::EngineConfig c;
    c.mode = mode;
    c.workers = 2;
    c.pin_workers = false;
    c.entity_capacity = 2048;
    core::Engine engine(c);
    PhysicsConfig config;
    config.region_boundaries = {0.0f};
    Physics& physics = engine.add_plugin<PhysicsPlugin>(config).physics();
    engine.add_plugin<core::TransformPlugin>();
    core::World& world = engine.world();
    const ShapeId box = physics.create_shape(ShapeDesc::box({0.4f, 0.4f, 0.4f})).value();
    const core::Entity ground = world.create();
    world.add<core::Transform>(ground);
    world.add<RigidBody>(
        ground, RigidBody::fixed(physics.create_shape(ShapeDesc::plane({0, 1, 0}, 0)).value()));
    for (int i = 0; i < 300; ++i) {
      const core::Entity e = world.create();
      world.add<core::Transform>(e,
                                 core::Transform::from({static_cast<float>(i % 10) - 4.5f,
                                                        0.4f + 0.8f * static_cast<float>(i / 100),
                                                        static_cast<float>((i / 10) % 10) - 4.5f}));
      world.add<core::WorldTransform>(e);
      RigidBody b = RigidBody::dynamic(box, 1.0f);
      b.flags = RigidBody::kNeverSleep;
      world.add<RigidBody>(e, b);
    }
    engine.add_system<RigidBody>("push", [](core::StageContext&, core::Entity e, RigidBody& b) {
      b.add_force(glm::vec3(e.index % 3 == 0 ? 0.5f : -0.5f, 0, 0));
    });
    engine.add_stage(
        {.name = "contacts",
         .phase = core::Phase::Gameplay,
         .access = core::Access{}.read<CollisionBegan, CollisionEnded>(),
         .run = [](core::StageContext& ctx) { (void)ctx.world().read_events<CollisionBegan>(); }});
    // Settle: contacts, pair caches, estimates, and the broadphase's ray stack (the first
    // raycast of each region grows it).
    for (int i = 0; i < 240; ++i) engine.step();
    (void)physics.raycast({0, 10, 0}, {0, -1, 0});
    const long ours = ::spindle::test::heap_allocations();
    const long bullets = bullet_allocations.load();
    for (int i = 0; i < 60; ++i) {
      engine.step();
      (void)physics.raycast({0, 10, 0}, {0, -1, 0});
    }
    EXPECT_EQ(::spindle::test::heap_allocations() - ours, 0) << jobs::to_string(mode);
    EXPECT_EQ(bullet_allocations.load() - bullets, 0) << jobs::to_string(mode);
    EXPECT_GT(physics.stats().contact_pairs, 200u);
    EXPECT_EQ(physics.stats().active, 300u);
  }
}

}  // namespace
}  // namespace spindle::physics
