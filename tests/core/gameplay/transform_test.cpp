// Transforms against a straightforward recursive recomputation, dirty-flag economy, broken
// hierarchies.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>

#include "test_support.h"

namespace spindle::core {
namespace {

glm::mat4 reference(World& world, Entity e, int guard = 0) {
  const glm::mat4 local = world.get<Transform>(e)->local_matrix();
  const Parent* p = world.get<Parent>(e);
  if (p == nullptr || guard > 1000 || !world.alive(p->entity)) return local;
  return reference(world, p->entity, guard + 1) * local;
}

void expect_near(const glm::mat4& a, const glm::mat4& b) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) EXPECT_NEAR(a[c][r], b[c][r], 1e-3f) << c << "," << r;
}

struct Scene {
  std::unique_ptr<Engine> engine;
  TransformPlugin* plugin;
  std::vector<Entity> entities;
};

Scene make_scene(jobs::Mode mode, std::uint32_t workers, int n) {
  EngineConfig c;
  c.mode = jobs::mode_available(mode) ? mode : jobs::Mode::Single;
  c.workers = workers;
  c.pin_workers = false;
  Scene s{std::make_unique<Engine>(c), nullptr, {}};
  s.plugin = &s.engine->add_plugin<TransformPlugin>();
  World& world = s.engine->world();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  for (int i = 0; i < n; ++i) {
    const Entity e = world.create();
    world.add<Transform>(e, Transform::from(glm::vec3(u(rng), u(rng), u(rng)),
                                            glm::normalize(glm::quat(1, u(rng), u(rng), u(rng))),
                                            glm::vec3(1 + 0.1f * u(rng))));
    world.add<WorldTransform>(e);
    // Random forest: parents are always earlier entities, but added in shuffled dense order.
    if (i > 0 && rng() % 4 != 0) world.add<Parent>(e, Parent{s.entities[rng() % i]});
    s.entities.push_back(e);
  }
  return s;
}

TEST(Transforms, MatchRecursiveRecomputation) {
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Dynamic, jobs::Mode::Static}) {
    Scene s = make_scene(mode, 2, 800);
    s.engine->step();
    World& world = s.engine->world();
    for (Entity e : s.entities)
      expect_near(world.get<WorldTransform>(e)->matrix, reference(world, e));
    EXPECT_GT(s.plugin->stats().levels, 3u);
    // Move some, rotate others, then compare again.
    for (std::size_t i = 0; i < s.entities.size(); i += 3) {
      Transform* t = world.get<Transform>(s.entities[i]);
      if (i % 2)
        t->set_translation(t->translation() + glm::vec3(1, 0, 0));
      else
        t->set_rotation(glm::normalize(t->rotation() * glm::quat(0.9f, 0.1f, 0, 0)));
    }
    s.engine->step();
    for (Entity e : s.entities)
      expect_near(world.get<WorldTransform>(e)->matrix, reference(world, e));
  }
}

TEST(Transforms, TranslationOnlyChangesTakeTheCheapPath) {
  Scene s = make_scene(jobs::Mode::Single, 1, 0);
  World& world = s.engine->world();
  // A root with two children, and an untouched separate root.
  const Entity root = world.create();
  world.add<Transform>(root, Transform::from(glm::vec3(1, 0, 0)));
  world.add<WorldTransform>(root);
  const Entity kid1 = world.create(), kid2 = world.create(), other = world.create();
  for (Entity k : {kid1, kid2}) {
    world.add<Transform>(
        k, Transform::from(glm::vec3(0, 1, 0), glm::angleAxis(0.5f, glm::vec3(0, 0, 1))));
    world.add<WorldTransform>(k);
    world.add<Parent>(k, Parent{root});
  }
  world.add<Transform>(other, Transform::from(glm::vec3(5, 5, 5)));
  world.add<WorldTransform>(other);
  s.engine->step();
  EXPECT_EQ(s.plugin->stats().full_updates, 4u);  // everything new
  s.engine->step();
  EXPECT_EQ(s.plugin->stats().full_updates, 0u);  // nothing changed: nothing computed
  EXPECT_EQ(s.plugin->stats().translation_updates, 0u);
  world.get<Transform>(root)->set_translation(glm::vec3(3, 0, 0));
  s.engine->step();
  EXPECT_EQ(s.plugin->stats().full_updates, 0u);
  EXPECT_EQ(s.plugin->stats().translation_updates, 3u);  // root and both children, cheaply
  expect_near(world.get<WorldTransform>(kid1)->matrix, reference(world, kid1));
  world.get<Transform>(root)->set_scale(glm::vec3(2));
  s.engine->step();
  EXPECT_EQ(s.plugin->stats().full_updates, 3u);
  expect_near(world.get<WorldTransform>(kid2)->matrix, reference(world, kid2));
}

TEST(Transforms, CyclesAndDeadParentsBecomeRoots) {
  Scene s = make_scene(jobs::Mode::Single, 1, 0);
  World& world = s.engine->world();
  Entity e[4];
  for (Entity& x : e) {
    x = world.create();
    world.add<Transform>(x, Transform::from(glm::vec3(1, 2, 3)));
    world.add<WorldTransform>(x);
  }
  world.add<Parent>(e[0], Parent{e[1]});
  world.add<Parent>(e[1], Parent{e[0]});  // a loop
  world.add<Parent>(e[2], Parent{e[0]});  // hangs below the loop
  const Entity gone = world.create();
  world.add<Parent>(e[3], Parent{gone});
  world.destroy(gone);
  s.engine->step();  // must terminate
  EXPECT_EQ(s.plugin->stats().broken_parents, 3u);
  expect_near(world.get<WorldTransform>(e[3])->matrix, world.get<Transform>(e[3])->local_matrix());
  // e[2]'s parent e[0] is a root now: e[2] = e[0] * local.
  expect_near(
      world.get<WorldTransform>(e[2])->matrix,
      world.get<Transform>(e[0])->local_matrix() * world.get<Transform>(e[2])->local_matrix());
}

TEST(Transforms, PreviousTranslationAllowsInterpolation) {
  Scene s = make_scene(jobs::Mode::Single, 1, 0);
  World& world = s.engine->world();
  const Entity e = world.create();
  world.add<Transform>(e, Transform::from(glm::vec3(0, 0, 0)));
  world.add<WorldTransform>(e);
  s.engine->step();
  world.get<Transform>(e)->set_translation(glm::vec3(10, 0, 0));
  s.engine->step();
  const WorldTransform& w = *world.get<WorldTransform>(e);
  EXPECT_NEAR(interpolated_translation(w, 0.0f).x, 0.0f, 1e-6f);
  EXPECT_NEAR(interpolated_translation(w, 0.25f).x, 2.5f, 1e-6f);
  EXPECT_NEAR(interpolated_translation(w, 1.0f).x, 10.0f, 1e-6f);
  s.engine->step();  // no change: no motion left to blend
  EXPECT_NEAR(interpolated_translation(*world.get<WorldTransform>(e), 0.0f).x, 10.0f, 1e-6f);
}

TEST(Transforms, ReparentingRecomputesWithoutAnyMove) {
  Scene s = make_scene(jobs::Mode::Single, 1, 0);
  World& world = s.engine->world();
  const Entity arm = world.create(), hand = world.create();
  world.add<Transform>(arm, Transform::from(glm::vec3(5, 0, 0)));
  world.add<WorldTransform>(arm);
  world.add<Transform>(hand, Transform::from(glm::vec3(0, 1, 0)));
  world.add<WorldTransform>(hand);
  s.engine->step();
  expect_near(world.get<WorldTransform>(hand)->matrix, world.get<Transform>(hand)->local_matrix());
  world.add<Parent>(hand, Parent{arm});  // attach: nothing is dirty, the matrix must still change
  s.engine->step();
  expect_near(world.get<WorldTransform>(hand)->matrix, reference(world, hand));
  EXPECT_NEAR(world.get<WorldTransform>(hand)->matrix[3].x, 5.0f, 1e-6f);
  world.destroy(arm);  // parent gone: back to its own local matrix
  s.engine->step();
  expect_near(world.get<WorldTransform>(hand)->matrix, world.get<Transform>(hand)->local_matrix());
}

TEST(Transforms, StaticTransformsAreLeftAlone) {
  Scene s = make_scene(jobs::Mode::Single, 1, 10);
  World& world = s.engine->world();
  const Entity rock = world.create();
  glm::mat4 m(2.0f);
  world.add<StaticTransform>(rock, StaticTransform{m});
  s.engine->step();
  expect_near(world.get<StaticTransform>(rock)->matrix, m);
  EXPECT_EQ(world.get<WorldTransform>(rock), nullptr);
}

}  // namespace
}  // namespace spindle::core
