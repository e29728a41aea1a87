// Conversion of an assimp scene into runtime data (internal to anim/import/src).
#pragma once

#include <string>

#include <spindle/anim/import.h>
#include <spindle/base/result.h>

struct aiScene;

namespace spindle::anim::detail {

// Builds the whole asset or returns an error starting with `name`.
core::Result<ImportedAsset> scene_to_runtime(const aiScene& scene, const std::string& name,
                                             const ImportOptions& options);

}  // namespace spindle::anim::detail
