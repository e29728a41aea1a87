// A check of FBX files before assimp sees them (internal to anim/import/src).
//
// assimp 5.2.5's FBX reader frees a skeleton twice when two bones (Model objects of type
// LimbNode) share a name: found by fuzzing (tests/fuzz, target `fbx`: one byte of
// animation_with_skeleton.fbx turned "Bone.006" into a second "Bone.003"), a double free in
// ~aiScene(). This check refuses such files with a clear message instead. Meshes and other
// models may share names (assimp's own test files do, and read fine).
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace spindle::anim::detail {

// `bytes` is a binary or text FBX file. Returns "" when assimp may read it, else the problem
// (without the file name).
std::string fbx_preflight(std::span<const std::byte> bytes);

}  // namespace spindle::anim::detail
