#include <spindle/anim/local_to_model_job.h>

#include <string>

namespace spindle::anim {

core::Status LocalToModelJob::validate() const {
  if (skeleton == nullptr) return core::Status::error("LocalToModelJob: no skeleton");
  const auto n = static_cast<std::size_t>(skeleton->joint_count());
  if (local.size() != n)
    return core::Status::error("LocalToModelJob: local pose has " + std::to_string(local.size()) +
                               " joints, skeleton has " + std::to_string(n));
  if (model.size() != n)
    return core::Status::error("LocalToModelJob: model has " + std::to_string(model.size()) +
                               " matrices, skeleton has " + std::to_string(n));
  return {};
}

core::Status LocalToModelJob::run() const {
  if (core::Status s = validate(); !s) return s;
  std::span<const int> parents = skeleton->parents();
  for (std::size_t i = 0; i < parents.size(); ++i) {
    const int p = parents[i];
    model[i] = (p < 0 ? root : model[static_cast<std::size_t>(p)]) * local[i].to_matrix();
  }
  return {};
}

core::Status PaletteJob::validate() const {
  if (inverse_binds.size() != model.size())
    return core::Status::error("PaletteJob: " + std::to_string(model.size()) +
                               " model matrices but " + std::to_string(inverse_binds.size()) +
                               " inverse binds");
  if (palette.size() != model.size())
    return core::Status::error("PaletteJob: palette has " + std::to_string(palette.size()) +
                               " matrices, expected " + std::to_string(model.size()));
  return {};
}

core::Status PaletteJob::run() const {
  if (core::Status s = validate(); !s) return s;
  for (std::size_t i = 0; i < model.size(); ++i) palette[i] = model[i] * inverse_binds[i];
  return {};
}

}  // namespace spindle::anim
