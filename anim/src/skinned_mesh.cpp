#include <spindle/anim/skinned_mesh.h>

#include <cmath>
#include <string>

namespace spindle::anim {

namespace {

using std::to_string;

bool finite_at(const std::vector<float>& x, const std::vector<float>& y,
               const std::vector<float>& z, std::size_t v) {
  return std::isfinite(x[v]) && std::isfinite(y[v]) && std::isfinite(z[v]);
}

core::Status vertex_error(std::size_t v, const std::string& what) {
  return core::Status::error("mesh: vertex " + to_string(v) + ": " + what);
}

}  // namespace

core::Status check_mesh(const SkinnedMesh& mesh, int joint_count) {
  const std::size_t n = mesh.vertex_count();
  if (n == 0) return core::Status::error("mesh: no vertices");
  if (mesh.py.size() != n || mesh.pz.size() != n)
    return core::Status::error("mesh: position streams have different lengths (" + to_string(n) +
                               ", " + to_string(mesh.py.size()) + ", " + to_string(mesh.pz.size()) +
                               ")");
  const bool normals = !(mesh.nx.empty() && mesh.ny.empty() && mesh.nz.empty());
  if (normals && (mesh.nx.size() != n || mesh.ny.size() != n || mesh.nz.size() != n))
    return core::Status::error("mesh: normal streams do not match the " + to_string(n) +
                               " vertices");
  const std::size_t slots = n * kMaxInfluences;
  if (mesh.joint_indices.size() != slots || mesh.joint_weights.size() != slots)
    return core::Status::error("mesh: " + to_string(mesh.joint_indices.size()) +
                               " joint indices and " + to_string(mesh.joint_weights.size()) +
                               " weights for " + to_string(n) + " vertices (need " +
                               to_string(slots) + " each)");
  for (std::size_t v = 0; v < n; ++v) {
    if (!finite_at(mesh.px, mesh.py, mesh.pz, v)) return vertex_error(v, "position is not finite");
    if (normals && !finite_at(mesh.nx, mesh.ny, mesh.nz, v))
      return vertex_error(v, "normal is not finite");
    float sum = 0.0f;
    for (std::size_t k = 0; k < kMaxInfluences; ++k) {
      const float w = mesh.joint_weights[v * kMaxInfluences + k];
      const int joint = mesh.joint_indices[v * kMaxInfluences + k];
      if (!std::isfinite(w) || w < 0.0f || w > 1.0f)
        return vertex_error(v,
                            "weight " + to_string(k) + " is " + to_string(w) + ", outside [0, 1]");
      if (joint >= joint_count)
        return vertex_error(v, "joint index " + to_string(joint) + " out of range (skeleton has " +
                                   to_string(joint_count) + " joints)");
      sum += w;
    }
    if (std::fabs(sum - 1.0f) > kWeightSumTolerance)
      return vertex_error(v, "weights sum to " + to_string(sum) + ", not 1");
  }
  return {};
}

}  // namespace spindle::anim
