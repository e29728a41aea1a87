// A structural check of glTF JSON before assimp sees it (internal to anim/import/src).
//
// assimp 5.2.5 dereferences missing optional parts and out-of-range references in some glTF
// files (found by tests/anim/import_fuzz_test.cpp: a skin without inverseBindMatrices, an
// accessor without bufferView, JOINTS_0 without WEIGHTS_0, a buffer without byteLength, ...).
// This check rejects those with a clear message instead of letting the reader crash.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace spindle::anim::detail {

// `bytes` is a .gltf (binary == false) or .glb file. Returns "" when assimp may read it, else
// the problem (without the file name).
std::string gltf_preflight(std::span<const std::byte> bytes, bool binary);

}  // namespace spindle::anim::detail
