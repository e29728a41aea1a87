// physics_occlusion(): an emitter behind a wall (a static Bullet box between it and the listener)
// is muffled through the AudioPlugin; the same emitter in the open is not.
#include <spindle/audio/audio_plugin.h>
#include <spindle/audio/physics_occlusion.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/plugin.h>

#include "audio_test_util.h"
#include "modes.h"

namespace spindle::audio {
namespace {

// RMS of the last half of 30 steps' output of one 6 kHz emitter at `at`, with a wall at z = -5.
double level(glm::vec3 at) {
  core::Engine engine(::spindle::test::engine_config(jobs::Mode::Dynamic, 2));
  engine.add_plugin<core::TransformPlugin>();
  auto& phys = engine.add_plugin<physics::PhysicsPlugin>();
  physics::Physics& p = phys.physics();
  AudioPluginConfig config;
  config.output = Output::None;
  config.occlusion = physics_occlusion(p);
  config.occlusion_access = core::Access{}.read<physics::Physics>();
  auto& audio = engine.add_plugin<AudioPlugin>(std::move(config));
  const SoundId hiss =
      audio.mixer().add_sound(test::make_sound(test::sine(6000, 1.0, 48000))).value();
  core::World& w = engine.world();
  auto place = [&w](glm::vec3 pos) {
    const core::Entity e = w.create();
    w.add<core::Transform>(e, core::Transform::from(pos));
    w.add<core::WorldTransform>(e);
    return e;
  };
  const core::Entity wall = place({0, 0, -5});
  w.add<physics::RigidBody>(
      wall,
      physics::RigidBody::fixed(p.create_shape(physics::ShapeDesc::box({4, 4, 0.2f})).value()));
  w.add<AudioListener>(place({0, 0, 0}), AudioListener{});
  w.add<AudioEmitter>(place(at),
                      AudioEmitter{.sound = hiss, .occlude = true, .model = Attenuation::None});
  double e = 0;
  std::size_t n = 0;
  std::uint64_t last_hash = audio.output_hash();
  for (int i = 0; i < 30; ++i) {
    engine.step();
    if (i < 15) continue;
    for (float x : audio.last_mix()) e += double{x} * x;
    n += audio.last_mix().size();
  }
  EXPECT_NE(audio.output_hash(), last_hash);
  return n ? std::sqrt(e / static_cast<double>(n)) : 0.0;
}

TEST(PhysicsOcclusion, AWallBetweenListenerAndEmitterMufflesIt) {
  const double open = level({0, 0, 5});      // behind the listener: nothing in the way
  const double behind = level({0, 0, -10});  // the wall at z = -5 is in the way
  EXPECT_GT(open, 0.1);
  EXPECT_LT(behind, 0.2 * open) << "6 kHz through the occlusion low-pass";
  EXPECT_GT(behind, 0.0) << "muffled, not cut";
}

}  // namespace
}  // namespace spindle::audio
