// Bullet rigid bodies in the frame: falling and resting, stacking, events exactly once, queries,
// destruction mid-contact, forces over sub-steps, region migration, determinism in every mode
// and worker count, and bad input rejected with messages.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/physics.h>

#include "../core/test_support.h"

namespace spindle::physics {
namespace {

using core::Engine;
using core::EngineConfig;
using core::Entity;
using core::Transform;

EngineConfig config_for(jobs::Mode mode, std::uint32_t workers) {
  return core::test::engine_config(mode, workers, 4096);
}
using ::spindle::test::available_modes;

// Collects every physics event, by frame, through a stage that reads them.
struct EventLog {
  std::vector<CollisionBegan> began;
  std::vector<CollisionEnded> ended;
  std::vector<TriggerEntered> entered;
  std::vector<TriggerExited> exited;
  std::vector<BodyRejected> rejected;
};

struct Rig {
  explicit Rig(PhysicsConfig config = {}, jobs::Mode mode = jobs::Mode::Single,
               std::uint32_t workers = 1)
      : engine(config_for(mode, workers)),
        physics(engine.add_plugin<PhysicsPlugin>(std::move(config)).physics()) {
    engine.add_plugin<core::TransformPlugin>();
    engine.add_stage({.name = "event_log",
                      .phase = core::Phase::Gameplay,
                      .access = core::Access{}
                                    .read<CollisionBegan, CollisionEnded, TriggerEntered,
                                          TriggerExited, BodyRejected>(),
                      .run = [this](core::StageContext& ctx) {
                        core::World& w = ctx.world();
                        for (const auto& e : w.read_events<CollisionBegan>())
                          log.began.push_back(e);
                        for (const auto& e : w.read_events<CollisionEnded>())
                          log.ended.push_back(e);
                        for (const auto& e : w.read_events<TriggerEntered>())
                          log.entered.push_back(e);
                        for (const auto& e : w.read_events<TriggerExited>())
                          log.exited.push_back(e);
                        for (const auto& e : w.read_events<BodyRejected>())
                          log.rejected.push_back(e);
                      }});
  }

  ShapeId shape(const ShapeDesc& d) {
    auto r = physics.create_shape(d);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.value_or(ShapeId{});
  }
  Entity body(glm::vec3 at, const RigidBody& b, glm::quat rot = glm::quat(1, 0, 0, 0)) {
    core::World& w = engine.world();
    const Entity e = w.create();
    w.add<Transform>(e, Transform::from(at, rot));
    w.add<core::WorldTransform>(e);
    w.add<RigidBody>(e, b);
    return e;
  }
  Entity ground() {
    return body({0, 0, 0}, RigidBody::fixed(shape(ShapeDesc::plane({0, 1, 0}, 0))));
  }
  glm::vec3 position(Entity e) { return engine.world().get<Transform>(e)->translation(); }
  const RigidBody& rb(Entity e) { return *engine.world().get<RigidBody>(e); }
  void run(int steps) {
    for (int i = 0; i < steps; ++i) engine.step();
  }

  Engine engine;
  Physics& physics;
  EventLog log;
};

TEST(Physics, BodiesFallLoseEnergyAndComeToRest) {
  Rig rig;
  RigidBody floor = RigidBody::fixed(rig.shape(ShapeDesc::plane({0, 1, 0}, 0)));
  floor.restitution = 1.0f;  // Bullet multiplies the two restitutions
  rig.body({0, 0, 0}, floor);
  RigidBody ball = RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 2.0f);
  ball.restitution = 0.5f;
  const Entity e = rig.body({0, 5, 0}, ball);
  const float g = 9.81f;
  float previous = 2.0f * g * 5.0f;  // all potential at the start (mass 2, height 5)
  float lowest = 100;
  std::vector<float> apexes;  // heights where the ball turns from rising to falling
  float last_vy = 0;
  for (int i = 0; i < 600; ++i) {
    rig.engine.step();
    const glm::vec3 v = rig.rb(e).linear_velocity();
    const float y = rig.position(e).y;
    const float energy = 0.5f * 2.0f * glm::dot(v, v) + 2.0f * g * y;
    // Energy never grows, except for the contact solver pushing a resting ball out of a slight
    // penetration (a few hundredths of a joule here).
    EXPECT_LE(energy, previous + 0.1f) << "step " << i;
    previous = std::min(previous, energy);
    lowest = std::min(lowest, y);
    if (last_vy > 0.05f && v.y <= 0.0f) apexes.push_back(y);
    last_vy = v.y;
  }
  ASSERT_GE(apexes.size(), 2u);  // it bounced (restitution 0.5)
  for (std::size_t i = 1; i < apexes.size(); ++i) EXPECT_LT(apexes[i], apexes[i - 1]);
  EXPECT_LT(apexes[0], 5.0f);
  EXPECT_LT(previous, 2.0f * g * 0.6f);         // ends with about the resting ball's energy
  EXPECT_NEAR(rig.position(e).y, 0.5f, 0.02f);  // resting on the plane
  EXPECT_GT(lowest, 0.4f);                      // never went through it
  EXPECT_LT(glm::length(rig.rb(e).linear_velocity()), 0.01f);
  EXPECT_TRUE(rig.rb(e).sleeping());
  EXPECT_TRUE(rig.rb(e).simulated());
}

TEST(Physics, AStackOfBoxesStaysUp) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  std::vector<Entity> stack;
  for (int i = 0; i < 6; ++i)
    stack.push_back(rig.body({0, 0.5f + static_cast<float>(i), 0}, RigidBody::dynamic(box, 1.0f)));
  rig.run(300);
  for (int i = 0; i < 6; ++i) {
    const glm::vec3 p = rig.position(stack[i]);
    EXPECT_NEAR(p.y, 0.5f + static_cast<float>(i), 0.05f) << "box " << i;
    EXPECT_LT(std::abs(p.x) + std::abs(p.z), 0.05f) << "box " << i;
  }
}

TEST(Physics, CollisionEventsBeginAndEndExactlyOnce) {
  Rig rig;
  const Entity floor = rig.ground();
  const Entity ball =
      rig.body({0, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 1.0f));
  rig.run(120);  // falls and lands
  ASSERT_EQ(rig.log.began.size(), 1u);
  EXPECT_TRUE(rig.log.ended.empty());
  const CollisionBegan& b = rig.log.began[0];
  EXPECT_EQ(b.a, floor);  // a has the smaller index
  EXPECT_EQ(b.b, ball);
  EXPECT_NEAR(b.point.y, 0.0f, 0.05f);
  EXPECT_NEAR(std::abs(b.normal.y), 1.0f, 1e-3f);
  EXPECT_GT(b.impulse, 0.0f);
  // Thrown up: the contact ends once, then begins again when it lands.
  rig.engine.world().get<RigidBody>(ball)->set_linear_velocity({0, 6, 0});
  rig.run(10);
  ASSERT_EQ(rig.log.ended.size(), 1u);
  EXPECT_EQ(rig.log.ended[0].a, floor);
  EXPECT_EQ(rig.log.ended[0].b, ball);
  rig.run(150);
  EXPECT_EQ(rig.log.began.size(), 2u);
  EXPECT_EQ(rig.log.ended.size(), 1u);
}

TEST(Physics, TriggersReportEnterAndExitOnceAndDoNotPush) {
  Rig rig;
  RigidBody zone = RigidBody::fixed(rig.shape(ShapeDesc::box({2, 0.5f, 2})));
  zone.flags = RigidBody::kTrigger;
  const Entity trigger = rig.body({0, 5, 0}, zone);
  const Entity ball =
      rig.body({0, 8, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.25f)), 1.0f));
  rig.run(120);  // falls through the zone and on into the void
  ASSERT_EQ(rig.log.entered.size(), 1u);
  ASSERT_EQ(rig.log.exited.size(), 1u);
  EXPECT_EQ(rig.log.entered[0].trigger, trigger);
  EXPECT_EQ(rig.log.entered[0].other, ball);
  EXPECT_EQ(rig.log.exited[0].trigger, trigger);
  EXPECT_TRUE(rig.log.began.empty());
  EXPECT_LT(rig.position(ball).y, 0.0f);  // the trigger did not stop it
}

TEST(Physics, RaycastsHitTheRightBodyAtTheRightDistance) {
  Rig rig;
  const Entity floor = rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity near_box = rig.body({3, 0.5f, 0}, RigidBody::fixed(box));
  const Entity far_box = rig.body({6, 0.5f, 0}, RigidBody::fixed(box));
  RigidBody zone = RigidBody::fixed(box);
  zone.flags = RigidBody::kTrigger;
  rig.body({1.5f, 0.5f, 0}, zone);  // rays pass through triggers
  rig.run(1);
  auto hit = rig.physics.raycast({0, 0.5f, 0}, {10, 0.5f, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, near_box);
  EXPECT_NEAR(hit->distance, 2.5f, 1e-3f);
  EXPECT_NEAR(hit->point.x, 2.5f, 1e-3f);
  EXPECT_NEAR(hit->normal.x, -1.0f, 1e-3f);
  hit = rig.physics.raycast({10, 0.5f, 0}, {4.5f, 0.5f, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, far_box);
  EXPECT_NEAR(hit->distance, 3.5f, 1e-3f);
  hit = rig.physics.raycast({0, 5, 0}, {0, -5, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, floor);
  EXPECT_NEAR(hit->distance, 5.0f, 1e-3f);
  EXPECT_FALSE(rig.physics.raycast({0, 5, 0}, {0, 20, 0}).has_value());
  auto sweep = rig.physics.sweep_sphere({0, 3, 0}, {0, -3, 0}, 0.5f);
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(sweep->entity, floor);
  EXPECT_NEAR(sweep->fraction * 6.0f, 2.5f, 0.05f);  // stops when the sphere's bottom touches
  EXPECT_FALSE(rig.physics.raycast({0, 0, 0}, {NAN, 0, 0}).has_value());
  // A box (half height 0.25) swept down stops 0.25 above the floor; a mesh cannot be swept.
  const ShapeId flat = rig.shape(ShapeDesc::box({0.25f, 0.25f, 0.25f}));
  auto box_sweep = rig.physics.sweep(flat, {-2, 3, 0}, {-2, -3, 0});
  ASSERT_TRUE(box_sweep.has_value());
  EXPECT_EQ(box_sweep->entity, floor);
  EXPECT_NEAR(box_sweep->fraction * 6.0f, 2.75f, 0.05f);
  const ShapeId mesh =
      rig.shape(ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 2}));
  EXPECT_FALSE(rig.physics.sweep(mesh, {0, 3, 0}, {0, -3, 0}).has_value());
  EXPECT_FALSE(rig.physics.sweep(ShapeId{12345}, {0, 3, 0}, {0, -3, 0}).has_value());
}

// Systems cast rays in parallel (every mode): each probe finds the floor below it.
TEST(Physics, RaycastsFromParallelSystemsInEveryMode) {
  struct Probe {
    float height = 0;
  };
  for (jobs::Mode mode : available_modes()) {
    Rig rig({}, mode, 2);
    const Entity floor = rig.ground();
    const ShapeId step = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
    rig.body({100, 0.5f, 0}, RigidBody::fixed(step));
    core::World& w = rig.engine.world();
    w.register_component<Probe>("probe");
    for (int i = 0; i < 400; ++i) {
      const Entity e = w.create();
      w.add<Transform>(e, Transform::from({i % 2 ? 100.0f : -1.0f - static_cast<float>(i), 5, 0}));
    }
    for (std::uint32_t i = 0; i < w.storage<Transform>()->size(); ++i) {
      const Entity e = w.entity_at(w.storage<Transform>()->entities()[i]);
      if (!w.has<RigidBody>(e)) w.add<Probe>(e);
    }
    rig.engine.add_system<const Transform, Probe>(
        "probe",
        [floor](core::StageContext& ctx, Entity, const Transform& t, Probe& p) {
          const Physics& physics = *ctx.world().resource<Physics>();
          const auto hit = physics.raycast(t.translation(), t.translation() - glm::vec3(0, 10, 0));
          p.height = hit ? hit->point.y + (hit->entity == floor ? 0.0f : 1000.0f) : -1.0f;
        },
        core::Phase::Gameplay, {}, core::Access{}.read<Physics>());
    rig.run(2);
    std::uint32_t on_step = 0, on_floor = 0;
    for (const Probe& p : w.storage<Probe>()->data()) {
      if (std::abs(p.height - 1001.0f) < 1e-3f) ++on_step;
      if (std::abs(p.height) < 1e-3f) ++on_floor;
    }
    EXPECT_EQ(on_step, 200u) << jobs::to_string(mode);
    EXPECT_EQ(on_floor, 200u) << jobs::to_string(mode);
  }
}

TEST(Physics, RaycastMaskSkipsGroups) {
  Rig rig;
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  RigidBody a = RigidBody::fixed(box);
  a.group = 2;
  rig.body({2, 0, 0}, a);
  const Entity b = rig.body({4, 0, 0}, RigidBody::fixed(box));
  rig.run(1);
  auto hit = rig.physics.raycast({0, 0, 0}, {10, 0, 0}, /*mask=*/1);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, b);
}

TEST(Physics, DestroyingABodyMidContactIsSafeAndEndsItsPairsOnce) {
  Rig rig;
  const Entity floor = rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity a = rig.body({0, 0.5f, 0}, RigidBody::dynamic(box, 1.0f));
  const Entity b = rig.body({0, 1.5f, 0}, RigidBody::dynamic(box, 1.0f));
  rig.run(30);
  ASSERT_EQ(rig.log.began.size(), 2u);  // floor-a, a-b
  // Destroyed through a command buffer from a system while touching both.
  rig.engine.add_stage(
      {.name = "destroyer", .phase = core::Phase::Gameplay, .run = [a](core::StageContext& ctx) {
         if (ctx.tick() == 31) ctx.commands().destroy(a);
       }});
  rig.run(60);
  EXPECT_FALSE(rig.engine.world().alive(a));
  ASSERT_EQ(rig.log.ended.size(), 2u);
  for (const CollisionEnded& e : rig.log.ended) EXPECT_TRUE(e.a == a || e.b == a);
  // b falls onto the floor: a new pair, begun once.
  ASSERT_EQ(rig.log.began.size(), 3u);
  EXPECT_EQ(rig.log.began[2].a, floor);
  EXPECT_EQ(rig.log.began[2].b, b);
  EXPECT_NEAR(rig.position(b).y, 0.5f, 0.05f);
  EXPECT_EQ(rig.physics.stats().removed, 1u);
  // Removing the component alone removes the body too.
  rig.engine.world().remove<RigidBody>(b);
  rig.run(2);
  EXPECT_EQ(rig.physics.stats().removed, 2u);
  EXPECT_EQ(rig.physics.region_objects(0), 1u);  // the floor
}

TEST(Physics, ForcesApplyOnEverySubstepAndImpulsesOnce) {
  PhysicsConfig config;
  config.substeps = 4;
  Rig rig(config);
  const ShapeId ball = rig.shape(ShapeDesc::sphere(0.5f));
  RigidBody hover_desc = RigidBody::dynamic(ball, 2.0f);
  hover_desc.flags = RigidBody::kNeverSleep;
  const Entity hover = rig.body({0, 10, 0}, hover_desc);
  const Entity kicked = rig.body({10, 10, 0}, RigidBody::dynamic(ball, 2.0f));
  rig.engine.add_stage({.name = "thrust",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<RigidBody>(),
                        .run = [hover, kicked](core::StageContext& ctx) {
                          ctx.world().get<RigidBody>(hover)->add_force({0, 2.0f * 9.81f, 0});
                          if (ctx.tick() == 0)
                            ctx.world().get<RigidBody>(kicked)->add_impulse({4.0f, 0, 0});
                        }});
  rig.run(60);
  EXPECT_NEAR(rig.position(hover).y, 10.0f, 1e-3f);  // thrust cancels gravity on every sub-step
  EXPECT_NEAR(rig.rb(kicked).linear_velocity().x, 2.0f, 1e-4f);  // 4 N s on 2 kg, once
  EXPECT_NEAR(rig.position(kicked).x, 12.0f, 0.05f);             // 1 s at 2 m/s
}

TEST(Physics, KinematicBodiesFollowTheirTransformAndTeleportsMoveDynamicOnes) {
  Rig rig;
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity platform = rig.body({0, 0, 0}, RigidBody::kinematic(box));
  RigidBody floating = RigidBody::dynamic(box, 1.0f);
  const Entity crate = rig.body({0, 20, 0}, floating);
  rig.run(1);
  rig.engine.world().get<Transform>(platform)->set_translation({5, 0, 0});
  rig.engine.world().get<Transform>(crate)->set_translation({-5, 50, 0});
  rig.run(1);
  auto hit = rig.physics.raycast({5, 5, 0}, {5, -5, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, platform);
  EXPECT_NEAR(rig.position(crate).x, -5.0f, 1e-4f);
  EXPECT_GT(rig.position(crate).y, 49.0f);
}

TEST(Physics, KinematicBodiesMoveSmoothlyOverSubstepsAndAcrossRegions) {
  PhysicsConfig config;
  config.substeps = 4;
  config.region_boundaries = {0.0f};
  Rig rig(config);
  const Entity platform =
      rig.body({-5, 0, 0}, RigidBody::kinematic(rig.shape(ShapeDesc::box({2, 0.25f, 2}))));
  rig.run(1);
  EXPECT_EQ(rig.rb(platform).region(), 0u);
  // Carried at 3 m/s: Bullet sees that speed on every sub-step, not 4x on the first.
  rig.engine.add_stage({.name = "carry",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<Transform>(),
                        .run = [platform](core::StageContext& ctx) {
                          Transform& t = *ctx.world().get<Transform>(platform);
                          if (t.translation().x < 5.0f)
                            t.set_translation(t.translation() + glm::vec3(3.0f * ctx.dt(), 0, 0));
                        }});
  rig.run(30);
  EXPECT_NEAR(rig.rb(platform).linear_velocity().x, 3.0f, 1e-3f);
  rig.run(200);  // arrives at x = 5, in region 1
  EXPECT_EQ(rig.rb(platform).region(), 1u);
  const Entity ball =
      rig.body({5, 3, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.3f)), 1));
  rig.run(120);
  EXPECT_NEAR(rig.position(ball).y, 0.55f, 0.03f);  // landed on the platform, not through it
}

TEST(Physics, RemovingASupportWakesWhatRestsOnIt) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity support = rig.body({0, 0.5f, 0}, RigidBody::fixed(box));
  const Entity top = rig.body({0, 1.5f, 0}, RigidBody::dynamic(box, 1));
  rig.run(200);
  ASSERT_TRUE(rig.rb(top).sleeping());
  rig.engine.world().destroy(support);
  rig.run(120);
  EXPECT_NEAR(rig.position(top).y, 0.5f, 0.02f);  // fell to the ground
}

TEST(Physics, RemovingTheTransformRemovesTheBody) {
  Rig rig;
  const Entity e = rig.body({0, 5, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 1));
  rig.run(3);
  rig.engine.world().remove<Transform>(e);
  rig.run(3);
  EXPECT_EQ(rig.physics.stats().removed, 1u);
  EXPECT_EQ(rig.physics.region_objects(0), 0u);
}

TEST(Physics, ARejectedBodyIsSimulatedOnceItIsFixedAndReportedOnce) {
  Rig rig;
  core::test::ScopedLogCapture capture;
  core::World& w = rig.engine.world();
  const Entity e = w.create();
  w.add<RigidBody>(e, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 1));  // no Transform
  rig.run(5);
  EXPECT_FALSE(rig.rb(e).simulated());
  EXPECT_EQ(rig.log.rejected.size(), 1u);
  w.add<Transform>(e, Transform::from({0, 5, 0}));
  rig.run(5);
  EXPECT_TRUE(rig.rb(e).simulated());
  EXPECT_LT(rig.position(e).y, 5.0f);
  EXPECT_EQ(rig.log.rejected.size(), 1u);
  EXPECT_EQ(rig.physics.stats().rejected, 1u);
}

TEST(Physics, NonFiniteForcesAndVelocitiesAreDroppedAndCounted) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity a = rig.body({0, 0.5f, 0}, RigidBody::dynamic(box, 1));
  const Entity b = rig.body({1.0f, 0.5f, 0}, RigidBody::dynamic(box, 1));
  core::test::ScopedLogCapture capture;
  rig.engine.add_stage({.name = "vandal",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<RigidBody>(),
                        .run = [a](core::StageContext& ctx) {
                          RigidBody& body = *ctx.world().get<RigidBody>(a);
                          body.add_impulse({NAN, 0, 0});
                          body.add_force({0, INFINITY, 0});
                          body.set_linear_velocity({1e30f, 0, 0});
                        }});
  rig.run(30);
  EXPECT_EQ(rig.physics.stats().bad_inputs, 90u);
  EXPECT_EQ(capture.count(core::LogLevel::Warning), 1u);  // logged once, counted always
  for (Entity e : {a, b}) {
    EXPECT_TRUE(std::isfinite(rig.position(e).x));
    EXPECT_NEAR(rig.position(e).y, 0.5f, 0.02f);
  }
}

TEST(Physics, BodiesWithAParentOrTooLittleInertiaAreRejected) {
  Rig rig;
  core::test::ScopedLogCapture capture;
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity root = rig.body({0, 0, 0}, RigidBody::fixed(box));
  const Entity child = rig.body({0, 2, 0}, RigidBody::dynamic(box, 1));
  rig.engine.world().add<core::Parent>(child, core::Parent{root});
  const Entity feather = rig.body({3, 2, 0}, RigidBody::dynamic(box, 1e-39f));
  rig.run(2);
  EXPECT_FALSE(rig.rb(child).simulated());
  EXPECT_FALSE(rig.rb(feather).simulated());
  EXPECT_EQ(rig.physics.stats().rejected, 2u);
  EXPECT_FALSE(rig.physics.create_shape(ShapeDesc::box({1e-6f, 1, 1})).ok());  // below 0.1 mm
}

TEST(Physics, ShapesOfEveryKindSimulate) {
  Rig rig;
  rig.ground();
  std::vector<Entity> bodies;
  bodies.push_back(
      rig.body({0, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::capsule(0.3f, 1)), 1)));
  bodies.push_back(
      rig.body({3, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::cylinder(0.4f, 1)), 1)));
  bodies.push_back(rig.body(
      {6, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::convex_hull(
                                        {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}})),
                                    1)));
  const ShapeId part = rig.shape(ShapeDesc::box({0.5f, 0.1f, 0.1f}));
  bodies.push_back(rig.body(
      {9, 2, 0}, RigidBody::dynamic(
                     rig.shape(ShapeDesc::compound({{part, {0, 0, 0}, glm::quat(1, 0, 0, 0)},
                                                    {part, {0, 0.3f, 0}, glm::quat(1, 0, 0, 0)}})),
                     1)));
  // A static triangle-mesh ramp.
  rig.body({-5, 0, 0}, RigidBody::fixed(rig.shape(ShapeDesc::triangle_mesh(
                           {{-1, 0, -1}, {1, 0, -1}, {1, 1, 1}, {-1, 1, 1}}, {0, 1, 2, 0, 2, 3}))));
  const Entity on_ramp =
      rig.body({-5, 3, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.2f)), 1));
  rig.run(240);
  for (Entity e : bodies) {
    EXPECT_GT(rig.position(e).y, 0.0f);
    EXPECT_LT(rig.position(e).y, 1.5f);
  }
  // The sphere landed on the ramp and rolled down its slope (towards -z).
  EXPECT_LT(rig.position(on_ramp).z, 0.0f);
}

TEST(Physics, BadShapesAreRejectedWithMessages) {
  Rig rig;
  const ShapeId box = rig.shape(ShapeDesc::box({1, 1, 1}));
  const ShapeId mesh =
      rig.shape(ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 2}));
  struct Case {
    ShapeDesc desc;
    std::string expected;
  };
  ShapeDesc named = ShapeDesc::sphere(-1);
  named.name = "wheel";
  std::vector<Case> cases = {
      {ShapeDesc::box({1, 0, 1}), "half extent is 0"},
      {ShapeDesc::box({1, -2, 1}), "half extent is -2"},
      {ShapeDesc::box({1, NAN, 1}), "half extent is nan"},
      {ShapeDesc::box({1, INFINITY, 1}), "half extent is inf"},
      {ShapeDesc::box({1, 1e30f, 1}), "half extent"},
      {named, "sphere shape 'wheel': radius is -1"},
      {ShapeDesc::capsule(0.5f, 0), "height is 0"},
      {ShapeDesc::cylinder(NAN, 1), "radius is nan"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}), "3 points"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}), "degenerate"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}),
       "degenerate"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, NAN, 0}, {0, 0, 1}}), "point 2"},
      {ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 3}), "index 2 is 3"},
      {ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1}), "2 indices"},
      {ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {0, 1, 2}), "zero area"},
      {ShapeDesc::plane({0, 0, 0}, 0), "normal is zero"},
      {ShapeDesc::compound({}), "0 children"},
      {ShapeDesc::compound({{ShapeId{999}, {}, glm::quat(1, 0, 0, 0)}}), "names no shape"},
      {ShapeDesc::compound({{mesh, {}, glm::quat(1, 0, 0, 0)}}), "must be convex"},
      {ShapeDesc::compound({{box, {NAN, 0, 0}, glm::quat(1, 0, 0, 0)}}), "non-finite"},
  };
  const std::uint32_t before = rig.physics.shape_count();
  for (const Case& c : cases) {
    auto r = rig.physics.create_shape(c.desc);
    ASSERT_FALSE(r.ok()) << c.expected;
    EXPECT_NE(r.message().find(c.expected), std::string::npos) << r.message();
  }
  EXPECT_EQ(rig.physics.shape_count(), before);  // nothing half-made was kept
}

TEST(Physics, BadBodiesAreRejectedAndTheRestSimulates) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const ShapeId mesh =
      rig.shape(ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 2}));
  RigidBody heavy_static = RigidBody::fixed(box);
  heavy_static.mass = 5;
  RigidBody heavy_mesh = RigidBody::dynamic(mesh, 3);
  RigidBody no_mass = RigidBody::dynamic(box, 0);
  RigidBody nan_mass = RigidBody::dynamic(box, NAN);
  RigidBody bad_friction = RigidBody::dynamic(box, 1);
  bad_friction.friction = -1;
  RigidBody no_shape = RigidBody::dynamic(ShapeId{77}, 1);
  EXPECT_NE(rig.physics.validate(heavy_static).message().find("has mass 5"), std::string::npos);
  EXPECT_NE(rig.physics.validate(heavy_mesh).message().find("mass on a static mesh"),
            std::string::npos);
  EXPECT_NE(rig.physics.validate(no_mass).message().find("mass"), std::string::npos);
  EXPECT_NE(rig.physics.validate(nan_mass).message().find("mass"), std::string::npos);
  EXPECT_NE(rig.physics.validate(bad_friction).message().find("friction"), std::string::npos);
  EXPECT_NE(rig.physics.validate(no_shape).message().find("names no shape"), std::string::npos);

  core::test::ScopedLogCapture capture;
  std::vector<Entity> bad;
  for (const RigidBody& b : {heavy_static, heavy_mesh, no_mass, nan_mass, bad_friction, no_shape})
    bad.push_back(rig.body({0, 3, 0}, b));
  bad.push_back(rig.body({0, 3, 0}, RigidBody::dynamic(box, 1),
                         glm::quat(NAN, 0, 0, 0)));  // non-finite transform
  const Entity good = rig.body({2, 3, 0}, RigidBody::dynamic(box, 1));
  rig.run(120);
  EXPECT_EQ(rig.physics.stats().rejected, bad.size());
  ASSERT_EQ(rig.log.rejected.size(), bad.size());
  for (std::size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(rig.log.rejected[i].entity, bad[i]);
    EXPECT_FALSE(rig.rb(bad[i]).simulated());
  }
  EXPECT_EQ(capture.count(core::LogLevel::Error), bad.size());  // logged once each, not per step
  EXPECT_NEAR(rig.position(good).y, 0.5f, 0.02f);
}

TEST(Physics, BadConfigsAreRejectedWithMessages) {
  PhysicsConfig c;
  c.substeps = 0;
  EXPECT_NE(Physics::validate(c).message().find("substeps"), std::string::npos);
  c = {};
  c.region_boundaries = {1, 0};
  EXPECT_NE(Physics::validate(c).message().find("ascend"), std::string::npos);
  c = {};
  c.region_axis = 3;
  EXPECT_NE(Physics::validate(c).message().find("region_axis"), std::string::npos);
  c = {};
  c.gravity.y = INFINITY;
  EXPECT_NE(Physics::validate(c).message().find("gravity"), std::string::npos);
  EXPECT_TRUE(Physics::validate(PhysicsConfig{}).ok());
}

// Bodies thrown across two boundaries in both directions; after every step each body is in
// exactly one region, the one holding its centre.
TEST(Physics, RegionMigrationKeepsEveryBodyExactlyOnce) {
  PhysicsConfig config;
  config.gravity = glm::vec3(0.0f);
  config.region_boundaries = {-4.0f, 4.0f};
  Rig rig(config);
  const ShapeId ball = rig.shape(ShapeDesc::sphere(0.3f));
  const ShapeId wall = rig.shape(ShapeDesc::box({0.5f, 20, 20}));
  rig.body({-20, 0, 0}, RigidBody::fixed(wall));  // a static body in every region
  rig.body({20, 0, 0}, RigidBody::fixed(wall));
  std::vector<Entity> balls;
  for (int i = 0; i < 40; ++i) {
    RigidBody b = RigidBody::dynamic(ball, 1);
    b.restitution = 1;
    b.flags = RigidBody::kNeverSleep;
    const float x = -15.0f + 0.75f * static_cast<float>(i);
    const Entity e = rig.body({x, static_cast<float>(i % 5) - 2.0f, static_cast<float>(i % 3)}, b);
    rig.engine.world().get<RigidBody>(e)->set_linear_velocity(
        {(i % 2 ? 1.0f : -1.0f) * 12.0f, 0, 0});
    balls.push_back(e);
  }
  for (int step = 0; step < 200; ++step) {
    rig.engine.step();
    std::uint32_t total = 0;
    for (std::uint32_t r = 0; r < rig.physics.region_count(); ++r)
      total += rig.physics.region_objects(r) - 2;  // minus the two walls' copies
    ASSERT_EQ(total, balls.size()) << "step " << step;
    for (Entity e : balls)
      ASSERT_EQ(rig.rb(e).region(), rig.physics.region_of(rig.position(e))) << "step " << step;
  }
  EXPECT_GT(rig.physics.stats().migrated, 30u);
  for (Entity e : balls) EXPECT_LT(std::abs(rig.position(e).x), 20.0f);  // the walls held
}

// A pile in two regions plus spawning and destruction through commands.
std::uint64_t run_pile(jobs::Mode mode, std::uint32_t workers, int steps) {
  PhysicsConfig config;
  config.region_boundaries = {0.0f};
  config.substeps = 2;
  Rig rig(config, mode, workers);
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.4f, 0.4f, 0.4f}));
  // A kinematic paddle sweeping across the boundary, and a trigger zone.
  const Entity paddle = rig.body(
      {-4, 0.5f, 1.5f}, RigidBody::kinematic(rig.shape(ShapeDesc::box({0.3f, 0.5f, 2.0f}))));
  RigidBody zone = RigidBody::fixed(rig.shape(ShapeDesc::box({1, 1, 1})));
  zone.flags = RigidBody::kTrigger;
  rig.body({2, 1, 1}, zone);
  rig.engine.add_stage({.name = "paddle",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<Transform>(),
                        .run = [paddle](core::StageContext& ctx) {
                          const float x = -4.0f + 8.0f * std::abs(std::sin(0.02f * ctx.tick()));
                          ctx.world().get<Transform>(paddle)->set_translation({x, 0.5f, 1.5f});
                        }});
  rig.engine.add_system<RigidBody>("wind", [](core::StageContext& ctx, Entity e, RigidBody& b) {
    if ((e.index + ctx.tick()) % 7 == 0) b.add_force({0.0f, 0.0f, 3.0f});
  });
  const ShapeId ball = rig.shape(ShapeDesc::sphere(0.4f));
  for (int i = 0; i < 120; ++i) {
    const float x = static_cast<float>(i % 10) - 4.5f, z = static_cast<float>((i / 10) % 4);
    rig.body({x * 0.7f, 1.0f + static_cast<float>(i / 40), z * 0.9f},
             RigidBody::dynamic(i % 3 ? box : ball, 1.0f + static_cast<float>(i % 4)),
             glm::angleAxis(0.1f * static_cast<float>(i), glm::vec3(0, 1, 0)));
  }
  rig.engine.add_stage({.name = "churn",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.read<RigidBody>(),
                        .run = [box](core::StageContext& ctx) {
                          if (ctx.tick() % 10 != 5) return;
                          const auto t = static_cast<float>(ctx.tick() % 7);
                          ctx.commands().spawn(Transform::from({t - 3.0f, 6.0f, 1.0f}),
                                               core::WorldTransform{},
                                               RigidBody::dynamic(box, 1.0f));
                          const auto* s = ctx.world().storage<RigidBody>();
                          ctx.commands().destroy(ctx.world().entity_at(s->entities()[3]));
                        }});
  rig.run(steps);
  EXPECT_GT(rig.log.began.size(), 50u);
  EXPECT_GT(rig.log.entered.size(), 0u);
  EXPECT_GT(rig.physics.stats().migrated, 0u);
  return rig.engine.world().state_hash();
}

TEST(Physics, SameHashInEveryModeAndWorkerCount) {
  const std::uint64_t reference = run_pile(jobs::Mode::Single, 1, 90);
  for (jobs::Mode mode : available_modes()) {
    for (std::uint32_t workers : {1u, 2u, 4u}) {
      if (mode == jobs::Mode::Single && workers > 1) continue;
      EXPECT_EQ(run_pile(mode, workers, 90), reference)
          << jobs::to_string(mode) << " with " << workers << " workers";
    }
  }
}

TEST(Physics, TheStepTouchesNoComponentSoOtherStagesMayOverlapIt) {
  Rig rig;
  struct Particle {
    float v = 0;
  };
  rig.engine.world().register_component<Particle>("particle");
  const core::StageId other = rig.engine.add_stage({.name = "particles",
                                                    .phase = core::Phase{"animation", 500},
                                                    .access = core::Access{}.write<Particle>(),
                                                    .run = [](core::StageContext&) {}});
  const auto step = static_cast<core::StageId>(rig.engine.find_stage("physics_step"));
  const auto writeback = static_cast<core::StageId>(rig.engine.find_stage("physics_writeback"));
  EXPECT_FALSE(rig.engine.depends_on(other, step));
  EXPECT_FALSE(rig.engine.depends_on(step, other));
  EXPECT_TRUE(rig.engine.depends_on(writeback, step));
}

}  // namespace
}  // namespace spindle::physics
