// Fuzz targets `gltf`, `fbx` and `x` (this file, built with SPINDLE_FUZZ_FORMAT "gltf", "fbx" or
// "x"): anim::import_asset_from_memory with that format's hint. A refusal names the file; an
// accepted asset is whole: a valid skeleton, a mesh that check_mesh() accepts, indices that
// stay inside it, and clips that fit the skeleton.
#include <cstddef>
#include <cstdint>
#include <string>

#include <spindle/anim/import.h>

#include "fuzz_support.h"

// assimp 5.2's FBX and text .x readers leak on some damaged files (anim/import/README.md); this
// keeps LeakSanitizer to Spindle's own leaks, as tests/anim/import_fuzz_test.cpp does.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libassimp.so\nleak:libz.so\n";
}

#ifndef SPINDLE_FUZZ_FORMAT
#define SPINDLE_FUZZ_FORMAT "gltf"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  namespace anim = spindle::anim;
  spindle::fuzz::quiet_logs();
  const std::string name = std::string("fuzz.") + SPINDLE_FUZZ_FORMAT;
  // Limits that keep one input quick; each is checked before the importer allocates for it.
  anim::ImportOptions options;
  options.max_nodes = 4096;
  options.max_vertices = 16384;
  options.max_triangles = 65536;
  options.max_keys_per_track = 65536;
  options.max_clips = 16;
  // Exporters' raw weights (Blender's) are renormalised, so the seeds reach the whole pipeline.
  options.normalize_weights = true;
  // The child that reads each file first: a crash there is a refusal, a hang one past 5 s.
  options.probe_seconds = 5;
  auto r = anim::import_asset_from_memory({reinterpret_cast<const std::byte*>(data), size}, name,
                                          SPINDLE_FUZZ_FORMAT, options);
  spindle::fuzz::outcome(r.ok(), r.ok() ? "" : r.message());
  if (!r) {
    SPINDLE_FUZZ_CHECK(starts_with(r.message(), name + ": "), r.message());
    return 0;
  }
  const anim::ImportedAsset& asset = r.value();
  const int joints = asset.skeleton.joint_count();
  SPINDLE_FUZZ_CHECK(joints > 0 && joints <= options.max_joints, std::to_string(joints));
  if (asset.mesh.vertex_count() > 0) {
    const spindle::core::Status mesh = anim::check_mesh(asset.mesh, joints);
    SPINDLE_FUZZ_CHECK(mesh, mesh.message());
    SPINDLE_FUZZ_CHECK(asset.indices.size() % 3 == 0, "a part triangle");
    for (std::uint16_t i : asset.indices)
      SPINDLE_FUZZ_CHECK(i < asset.mesh.vertex_count(), "an index outside the mesh");
  }
  SPINDLE_FUZZ_CHECK(static_cast<int>(asset.clips.size()) <= options.max_clips, "too many clips");
  for (const anim::Clip& clip : asset.clips) {
    const spindle::core::Status fits = clip.check_skeleton(asset.skeleton);
    SPINDLE_FUZZ_CHECK(fits, fits.message());
  }
  return 0;
}
