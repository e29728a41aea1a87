// animation: skeletal animation playback through the animation plugin. A procedural humanoid
// (skeleton + looping one-second walk clip, no asset files) plays on an entity; after every step
// the plugin has sampled the clip and computed the model-space pose, and the left hand's
// position is printed. Passes when the hand moved and came back to the same place one loop later.
//
//   spindle_sample_animation [--mode single|static|dynamic|tbb] [--workers N]
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include <spindle/spindle.h>  // with <spindle/anim/animation_plugin.h>, procedural.h

#include "sample_args.h"

using namespace spindle;

int main(int argc, char** argv) {
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;
  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  core::World& world = engine.world();

  // The plugin owns the assets (the Animation resource) and adds the stages that advance
  // players, sample and blend clips into poses, and skin meshes.
  anim::Animation& animation = engine.add_plugin<anim::AnimationPlugin>().animation();

  // Assets are checked when added; errors name the joint or key at fault.
  core::Result<anim::Character> made = anim::make_character({.seed = 1, .walk_duration = 1.0f});
  if (!made) {
    std::fprintf(stderr, "animation: %s\n", made.message().c_str());
    return 1;
  }
  anim::Character& character = made.value();
  const int hand = character.skeleton.find("hand_l");
  if (hand < 0) {
    std::fprintf(stderr, "animation: the skeleton has no joint 'hand_l'\n");
    return 1;
  }
  const anim::SkeletonId skeleton = animation.add_skeleton(std::move(character.skeleton)).value();
  const anim::ClipId walk = animation.add_clip(std::move(character.walk), skeleton).value();

  // An entity plays the clip through an AnimationPlayer: up to 4 layers, blended by weight.
  const core::Entity hero = world.create();
  anim::AnimationPlayer player{.skeleton = skeleton};
  player.layers[0] = {.clip = walk, .speed = 1.0f, .weight = 1.0f};
  world.add<anim::AnimationPlayer>(hero, player);

  constexpr int kSteps = 90, kStepsPerLoop = 60;  // 60 Hz steps, a 1 s clip
  std::vector<glm::vec3> hand_at(kSteps + 1);
  core::Hasher poses;
  float travel = 0.0f;
  for (int step = 1; step <= kSteps; ++step) {
    engine.step();
    // The pose the stages produced this frame: local, model-space and skinning matrices.
    const anim::CharacterView view = animation.view(hero);
    if (!view.valid) {
      std::fprintf(stderr, "animation: the character was rejected (see the log)\n");
      return 1;
    }
    hand_at[step] = glm::vec3(view.model[hand][3]);  // the joint's origin in model space
    poses.add_bytes(&hand_at[step], sizeof(glm::vec3));
    if (step > 1) travel += glm::distance(hand_at[step], hand_at[step - 1]);
    if (step % 10 == 0) {
      const float t = world.get<anim::AnimationPlayer>(hero)->layers[0].time;
      std::printf("animation: step %2d, clip time %.3f s: left hand at (%+.3f, %.3f, %+.3f)\n",
                  step, t, hand_at[step].x, hand_at[step].y, hand_at[step].z);
    }
  }

  // One loop later the clip time is the same again (up to float rounding), and so is the pose.
  const float loop_error = glm::distance(hand_at[kSteps], hand_at[kSteps - kStepsPerLoop]);
  poses.add(world.state_hash());  // the players' clip times, with the hand's path
  std::printf(
      "animation: %s mode, hand travelled %.3f m, %.5f m from where it was one loop earlier, "
      "hash %016llx\n",
      jobs::to_string(engine.mode()), travel, loop_error,
      static_cast<unsigned long long>(poses.value()));
  const bool ok = travel > 0.1f && loop_error < 1e-3f;
  if (!ok) std::fprintf(stderr, "animation: the hand did not follow the looping walk\n");
  return ok ? 0 : 1;
}
