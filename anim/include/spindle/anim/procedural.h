// Procedural characters: a humanoid skeleton, a skinned mesh and two looping clips made from a
// seed, so load tests and benchmarks can build thousands of characters without asset files.
//
// Usage:
//
//   spindle::core::Result<spindle::anim::Character> r =
//       spindle::anim::make_character({.seed = 7, .joint_count = 50, .vertex_count = 2000});
//   if (!r) report(r.message());  // e.g. "make_character: joint_count 3 outside [16, 1024]"
//   const spindle::anim::Character& c = r.value();
//   // c.skeleton feeds LocalToModelJob / PaletteJob, c.walk and c.idle feed SamplingJob,
//   // c.mesh.positions() / normals() / joint_indices / joint_weights feed SkinningJob.
//
// Layout: Y up, facing +Z, bind pose is a T-pose with the feet at y = 0. Every rest rotation is
// identity, so inverse binds are pure translations and skinning at the rest pose returns the
// input mesh. The 16 core joints are pelvis, spine, neck, head and per side upper arm, forearm,
// hand, thigh, shin, foot; extra joints go, in this order, to clavicles, toes, up to 4 spine and
// 2 neck segments, 5 fingers x 3 segments per hand, then twist joints along the limbs and more
// spine segments, round robin. The default 50 joints is the core + clavicles + toes + 4 spine +
// 2 neck + 13 finger segments per hand.
//
// Mesh: a tube around every bone, rings of 8 vertices (fewer, down to 3, for small vertex counts)
// from the bone's start to its end, more rings on bones with more surface; normals point outward.
// `indices` joins the rings into triangles, counter-clockwise seen from outside (the tubes' ends
// are open). Vertices that do not fill a whole ring sit on the first bone, in no triangle. Each
// vertex has kMaxInfluences slots with weights over the bone's joint and its neighbours (parent,
// child, grandparent or sibling), summing to 1; unused slots have weight 0.
//
// Clips: `walk` (one stride per walk_duration) and `idle` (breathing and weight shift over
// idle_duration). Rotation keys sit at seeded, irregular times with the first key at 0 and the
// last at the duration holding the same value, so both loop. The root also bobs (translation
// keys); other translations and all scales are one constant key.
//
// The same desc always gives bit-identical data (own RNG, no std distributions).
#pragma once

#include <cstdint>
#include <vector>

#include <spindle/anim/clip.h>
#include <spindle/anim/skeleton.h>
#include <spindle/anim/skinned_mesh.h>
#include <spindle/base/result.h>

namespace spindle::anim {

// Bounds make_character() accepts.
inline constexpr int kMinCharacterJoints = 16;
inline constexpr int kMaxCharacterJoints = 1024;
inline constexpr int kMinCharacterVertices = 1;
inline constexpr int kMaxCharacterVertices = 1'000'000;

struct CharacterDesc {
  // Drives key times, clip phases and vertex placement; same seed, same character.
  std::uint64_t seed = 1;
  // Total joints, [kMinCharacterJoints, kMaxCharacterJoints].
  int joint_count = 50;
  // Skinned vertices, [kMinCharacterVertices, kMaxCharacterVertices].
  int vertex_count = 2000;
  // Standing height in metres, (0, 100].
  float height = 1.8f;
  // Seconds per walk cycle (two steps) and per idle cycle, (0, 1000].
  float walk_duration = 1.0f;
  float idle_duration = 3.0f;
  // Rotation keys per track are drawn from [min_keys, 2 * min_keys]; [2, 1000].
  int min_keys = 8;
};

struct Character {
  Skeleton skeleton;
  SkinnedMesh mesh;
  // Triangles over mesh's vertices, three indices each (as ImportedAsset::indices).
  std::vector<std::uint32_t> indices;
  // Both clips animate every joint of `skeleton` and loop.
  Clip walk;
  Clip idle;
};

// Checks the desc; the message names the field and the accepted range.
core::Status validate(const CharacterDesc& desc);

// Validates, then builds. Errors only for a bad desc.
core::Result<Character> make_character(const CharacterDesc& desc);

}  // namespace spindle::anim
