// The plugin: bad configs are rejected with messages, and the stages it adds let other stages
// overlap the step.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "physics_test_util.h"

namespace spindle::physics {
namespace {

using test::Rig;

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
