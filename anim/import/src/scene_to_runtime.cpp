// assimp scene -> JointDesc / JointTrack / SkinnedMesh, then the runtime's own builders.
#include "scene_to_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <glm/gtc/matrix_inverse.hpp>

#include <assimp/scene.h>

namespace spindle::anim::detail {
namespace {

using core::Status;

std::string str(const aiString& s) {
  return std::string(s.C_Str(), s.length);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// assimp matrices are row-major (a1..a4 is the first row); glm is column-major.
glm::mat4 to_glm(const aiMatrix4x4& m) {
  glm::mat4 g;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) g[c][r] = m[static_cast<unsigned>(r)][static_cast<unsigned>(c)];
  return g;
}

bool finite(const glm::mat4& m) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (!std::isfinite(m[c][r])) return false;
  return true;
}

bool near(const glm::mat4& a, const glm::mat4& b, float tolerance) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (std::abs(a[c][r] - b[c][r]) > tolerance * (1.0f + std::abs(b[c][r]))) return false;
  return true;
}

// Splits an affine matrix into translate * rotate * scale; an empty string means success,
// otherwise the reason it is not such a product.
std::string decompose(const glm::mat4& m, JointTransform& out) {
  if (!finite(m)) return "is not finite";
  if (std::abs(m[0][3]) > 1e-5f || std::abs(m[1][3]) > 1e-5f || std::abs(m[2][3]) > 1e-5f ||
      std::abs(m[3][3] - 1.0f) > 1e-5f)
    return "is projective (bottom row is not 0 0 0 1)";
  glm::vec3 axis[3] = {glm::vec3(m[0]), glm::vec3(m[1]), glm::vec3(m[2])};
  glm::vec3 scale{glm::length(axis[0]), glm::length(axis[1]), glm::length(axis[2])};
  if (!(scale.x > 1e-8f && scale.y > 1e-8f && scale.z > 1e-8f)) return "has a zero scale";
  for (int i = 0; i < 3; ++i) axis[i] /= scale[i];
  // A mirror shows as a negative determinant; carry it in the x scale.
  if (glm::dot(glm::cross(axis[0], axis[1]), axis[2]) < 0.0f) {
    scale.x = -scale.x;
    axis[0] = -axis[0];
  }
  const float shear =
      std::max({std::abs(glm::dot(axis[0], axis[1])), std::abs(glm::dot(axis[0], axis[2])),
                std::abs(glm::dot(axis[1], axis[2]))});
  if (shear > 1e-3f) return "has shear (its axes are not perpendicular)";
  out.translation = glm::vec3(m[3]);
  out.rotation = glm::normalize(glm::quat_cast(glm::mat3(axis[0], axis[1], axis[2])));
  out.scale = scale;
  return {};
}

struct NodeInfo {
  const aiNode* node = nullptr;
  int parent = -1;  // index into the node list
  int joint = -1;   // joint index, or -1
};

class Converter {
 public:
  Converter(const aiScene& scene, const std::string& name, const ImportOptions& options)
      : scene_(scene), name_(name), options_(options) {}

  core::Result<ImportedAsset> run() {
    if (Status s = check_counts(); !s) return s;
    if (Status s = walk_nodes(); !s) return s;
    if (Status s = choose_joints(); !s) return s;
    if (Status s = build_skeleton(); !s) return s;
    if (Status s = build_mesh(); !s) return s;
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a)
      if (Status s = build_clip(*scene_.mAnimations[a], a); !s) return s;
    return std::move(asset_);
  }

 private:
  Status fail(const std::string& what) const { return Status::error(name_ + ": " + what); }

  static std::string mesh_label(const aiMesh& mesh, unsigned index) {
    return "mesh " + std::to_string(index) + " '" + str(mesh.mName) + "'";
  }
  std::string clip_label(const aiAnimation& anim, unsigned index) const {
    return "clip " + std::to_string(index) + " '" + str(anim.mName) + "'";
  }

  // Every count this library allocates for, against the limits, before allocating.
  Status check_counts() {
    if (scene_.mRootNode == nullptr) return fail("the file has no node hierarchy");
    std::uint64_t vertices = 0, triangles = 0;
    for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
      const aiMesh& mesh = *scene_.mMeshes[m];
      if (mesh.mNumBones == 0) continue;
      vertices += mesh.mNumVertices;
      triangles += mesh.mNumFaces;
      if (mesh.mNumBones > static_cast<unsigned>(options_.max_joints))
        return fail(mesh_label(mesh, m) + " has " + std::to_string(mesh.mNumBones) +
                    " bones, over the limit of " + std::to_string(options_.max_joints));
    }
    if (vertices > static_cast<std::uint64_t>(options_.max_vertices))
      return fail("skinned meshes have " + std::to_string(vertices) +
                  " vertices, over the limit of " + std::to_string(options_.max_vertices));
    if (vertices > 65536)
      return fail("skinned meshes have " + std::to_string(vertices) +
                  " vertices, more than 16-bit indices can address");
    if (triangles > static_cast<std::uint64_t>(options_.max_triangles))
      return fail("skinned meshes have " + std::to_string(triangles) +
                  " faces, over the limit of " + std::to_string(options_.max_triangles));
    if (scene_.mNumAnimations > static_cast<unsigned>(options_.max_clips))
      return fail("the file has " + std::to_string(scene_.mNumAnimations) +
                  " animations, over the limit of " + std::to_string(options_.max_clips));
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
      const aiAnimation& anim = *scene_.mAnimations[a];
      if (anim.mNumChannels > static_cast<unsigned>(options_.max_nodes))
        return fail(clip_label(anim, a) + " has " + std::to_string(anim.mNumChannels) +
                    " channels, over the node limit of " + std::to_string(options_.max_nodes));
      for (unsigned c = 0; c < anim.mNumChannels; ++c) {
        const aiNodeAnim& ch = *anim.mChannels[c];
        const unsigned most =
            std::max({ch.mNumPositionKeys, ch.mNumRotationKeys, ch.mNumScalingKeys});
        if (most > static_cast<unsigned>(options_.max_keys_per_track))
          return fail(clip_label(anim, a) + ", channel '" + str(ch.mNodeName) + "' has " +
                      std::to_string(most) + " keys, over the limit of " +
                      std::to_string(options_.max_keys_per_track));
      }
    }
    return {};
  }

  // Flattens the hierarchy depth-first (parents first) with an explicit stack, stopping at
  // cycles and at the node limit.
  Status walk_nodes() {
    std::unordered_set<const aiNode*> seen;
    std::vector<std::pair<const aiNode*, int>> stack{{scene_.mRootNode, -1}};
    while (!stack.empty()) {
      auto [node, parent] = stack.back();
      stack.pop_back();
      if (node == nullptr) return fail("node hierarchy has a missing child node");
      if (!seen.insert(node).second)
        return fail("node hierarchy has a cycle (node '" + str(node->mName) +
                    "' is reached twice)");
      if (nodes_.size() >= static_cast<std::size_t>(options_.max_nodes))
        return fail("node hierarchy has more than " + std::to_string(options_.max_nodes) +
                    " nodes");
      const int index = static_cast<int>(nodes_.size());
      nodes_.push_back({node, parent, -1});
      // Duplicate names are only a problem if a bone or channel uses them (checked there).
      auto [it, fresh] = by_name_.emplace(str(node->mName), index);
      if (!fresh) ambiguous_.insert(it->first);
      for (unsigned c = node->mNumChildren; c-- > 0;) stack.push_back({node->mChildren[c], index});
    }
    return {};
  }

  core::Result<int> find_node(const std::string& name, const std::string& user) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end())
      return fail(user + " names node '" + name + "', which is not in the file");
    if (ambiguous_.count(name) != 0)
      return fail(user + " names node '" + name + "', but several nodes have that name");
    return it->second;
  }

  // Bones (or, without bones, animated nodes) and their ancestors up to the lowest common one,
  // raised to the highest animated ancestor.
  Status choose_joints() {
    std::vector<int> targets;
    for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
      const aiMesh& mesh = *scene_.mMeshes[m];
      for (unsigned b = 0; b < mesh.mNumBones; ++b) {
        auto node = find_node(str(mesh.mBones[b]->mName),
                              mesh_label(mesh, m) + ", bone " + std::to_string(b));
        if (!node) return node.status();
        targets.push_back(node.value());
      }
    }
    std::vector<char> animated(nodes_.size(), 0);
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
      const aiAnimation& anim = *scene_.mAnimations[a];
      for (unsigned c = 0; c < anim.mNumChannels; ++c) {
        auto node = find_node(str(anim.mChannels[c]->mNodeName),
                              clip_label(anim, a) + ", channel " + std::to_string(c));
        if (!node) return node.status();
        animated[static_cast<std::size_t>(node.value())] = 1;
      }
    }
    if (targets.empty())
      for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (animated[i]) targets.push_back(static_cast<int>(i));
    if (targets.empty()) return fail("no skeleton: the file has no bones and no animated nodes");

    // Lowest common ancestor: walk up from each target, marking; depth is bounded by the walk.
    auto path_to_root = [&](int n) {
      std::vector<int> path;
      for (; n >= 0; n = nodes_[static_cast<std::size_t>(n)].parent) path.push_back(n);
      std::reverse(path.begin(), path.end());
      return path;
    };
    std::vector<int> common = path_to_root(targets[0]);
    for (int t : targets) {
      const std::vector<int> path = path_to_root(t);
      std::size_t k = 0;
      while (k < common.size() && k < path.size() && common[k] == path[k]) ++k;
      common.resize(k);
    }
    // Node 0 is the root of everything, so `common` holds at least it.
    int root = common.back();
    for (int n : common)
      if (animated[static_cast<std::size_t>(n)]) {
        root = n;
        break;
      }
    std::vector<char> in_skeleton(nodes_.size(), 0);
    in_skeleton[static_cast<std::size_t>(root)] = 1;
    for (int t : targets)
      for (int n = t; n >= 0 && !in_skeleton[static_cast<std::size_t>(n)];
           n = nodes_[static_cast<std::size_t>(n)].parent)
        in_skeleton[static_cast<std::size_t>(n)] = 1;
    // The node list is depth-first, so its order is parent-before-child.
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (in_skeleton[i]) {
        if (joints_.size() >= static_cast<std::size_t>(options_.max_joints))
          return fail("skeleton needs more than " + std::to_string(options_.max_joints) +
                      " joints");
        nodes_[i].joint = static_cast<int>(joints_.size());
        joints_.push_back(static_cast<int>(i));
      }
    // Transform above the root: model space is the scene's space.
    glm::mat4 above(1.0f);
    for (int n = nodes_[static_cast<std::size_t>(root)].parent; n >= 0;
         n = nodes_[static_cast<std::size_t>(n)].parent)
      above = to_glm(nodes_[static_cast<std::size_t>(n)].node->mTransformation) * above;
    above_root_ = above;
    return {};
  }

  Status build_skeleton() {
    std::vector<glm::mat4> model(joints_.size());
    rest_.resize(joints_.size());
    for (std::size_t j = 0; j < joints_.size(); ++j) {
      const NodeInfo& info = nodes_[static_cast<std::size_t>(joints_[j])];
      const int parent_joint =
          info.parent >= 0 ? nodes_[static_cast<std::size_t>(info.parent)].joint : -1;
      glm::mat4 local = to_glm(info.node->mTransformation);
      if (parent_joint < 0) local = above_root_ * local;
      JointTransform rest;
      if (std::string why = decompose(local, rest); !why.empty())
        return fail("node '" + str(info.node->mName) + "': rest transform " + why);
      rest_[j] = rest;
      model[j] = parent_joint < 0
                     ? rest.to_matrix()
                     : model[static_cast<std::size_t>(parent_joint)] * rest.to_matrix();
    }
    // Bones take their offset matrix from the first mesh that lists them.
    bind_set_.assign(joints_.size(), 0);
    inverse_binds_.resize(joints_.size());
    for (std::size_t j = 0; j < joints_.size(); ++j) inverse_binds_[j] = glm::inverse(model[j]);
    for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
      const aiMesh& mesh = *scene_.mMeshes[m];
      for (unsigned b = 0; b < mesh.mNumBones; ++b) {
        const int j =
            nodes_[static_cast<std::size_t>(by_name_.at(str(mesh.mBones[b]->mName)))].joint;
        if (bind_set_[static_cast<std::size_t>(j)]) continue;
        const glm::mat4 offset = to_glm(mesh.mBones[b]->mOffsetMatrix);
        if (!finite(offset))
          return fail(mesh_label(mesh, m) + ", bone '" + str(mesh.mBones[b]->mName) +
                      "': offset matrix is not finite");
        bind_set_[static_cast<std::size_t>(j)] = 1;
        inverse_binds_[static_cast<std::size_t>(j)] = offset;
      }
    }
    // Rebuild with the final inverse binds (the builder keeps its joints by value).
    SkeletonBuilder final_builder;
    for (std::size_t j = 0; j < joints_.size(); ++j) {
      const NodeInfo& info = nodes_[static_cast<std::size_t>(joints_[j])];
      final_builder.add_joint(
          {.name = str(info.node->mName),
           .parent = info.parent >= 0 ? nodes_[static_cast<std::size_t>(info.parent)].joint : -1,
           .rest = rest_[j],
           .inverse_bind = inverse_binds_[j]});
    }
    core::Result<Skeleton> skeleton = final_builder.build();
    if (!skeleton) return fail(skeleton.message());
    asset_.skeleton = std::move(skeleton.value());
    return {};
  }

  int joint_of_bone(const aiBone& bone) const {
    return nodes_[static_cast<std::size_t>(by_name_.at(str(bone.mName)))].joint;
  }

  // The transform that takes this mesh's vertices into the space the inverse binds expect;
  // identity unless the mesh's offsets differ from the first mesh's.
  core::Result<glm::mat4> mesh_to_bind_space(const aiMesh& mesh, unsigned index) const {
    glm::mat4 to_bind(1.0f);
    for (unsigned b = 0; b < mesh.mNumBones; ++b) {
      const aiBone& bone = *mesh.mBones[b];
      const glm::mat4 offset = to_glm(bone.mOffsetMatrix);
      if (!finite(offset))
        return fail(mesh_label(mesh, index) + ", bone '" + str(bone.mName) +
                    "': offset matrix is not finite");
      const glm::mat4 m =
          glm::inverse(inverse_binds_[static_cast<std::size_t>(joint_of_bone(bone))]) * offset;
      if (b == 0) {
        to_bind = m;
      } else if (!near(m, to_bind, 1e-3f)) {
        return fail(mesh_label(mesh, index) + ", bone '" + str(bone.mName) +
                    "': offset matrix differs from the one another mesh gives this bone, and "
                    "not by one transform for the whole mesh");
      }
    }
    if (!finite(to_bind)) return fail(mesh_label(mesh, index) + ": offset matrices are singular");
    return to_bind;
  }

  Status build_mesh() {
    std::vector<unsigned> skinned;
    bool normals = true;
    for (unsigned m = 0; m < scene_.mNumMeshes; ++m)
      if (scene_.mMeshes[m]->mNumBones > 0) {
        skinned.push_back(m);
        normals = normals && scene_.mMeshes[m]->mNormals != nullptr;
      }
    if (skinned.empty()) return {};  // animation-only file
    SkinnedMesh& out = asset_.mesh;
    for (unsigned m : skinned) {
      const aiMesh& mesh = *scene_.mMeshes[m];
      if (mesh.mVertices == nullptr || mesh.mNumVertices == 0)
        return fail(mesh_label(mesh, m) + " has bones but no vertices");
      core::Result<glm::mat4> to_bind = mesh_to_bind_space(mesh, m);
      if (!to_bind) return to_bind.status();
      const glm::mat3 normal_matrix = glm::inverseTranspose(glm::mat3(to_bind.value()));
      const std::size_t base = out.px.size();
      for (unsigned v = 0; v < mesh.mNumVertices; ++v) {
        const aiVector3D& p = mesh.mVertices[v];
        const glm::vec3 q = glm::vec3(to_bind.value() * glm::vec4(p.x, p.y, p.z, 1.0f));
        out.px.push_back(q.x);
        out.py.push_back(q.y);
        out.pz.push_back(q.z);
        if (normals) {
          const aiVector3D& n = mesh.mNormals[v];
          glm::vec3 k = normal_matrix * glm::vec3(n.x, n.y, n.z);
          const float len = glm::length(k);
          if (len > 0.0f && std::isfinite(len)) k /= len;
          out.nx.push_back(k.x);
          out.ny.push_back(k.y);
          out.nz.push_back(k.z);
        }
      }
      for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
        const aiFace& face = mesh.mFaces[f];
        if (face.mNumIndices != 3) continue;  // points and lines do not render as skin
        for (unsigned k = 0; k < 3; ++k) {
          if (face.mIndices[k] >= mesh.mNumVertices)
            return fail(mesh_label(mesh, m) + ", face " + std::to_string(f) + ": index " +
                        std::to_string(face.mIndices[k]) + " out of range");
          asset_.indices.push_back(static_cast<std::uint16_t>(base + face.mIndices[k]));
        }
      }
      if (Status s = add_weights(mesh, m); !s) return s;
    }
    if (Status s = check_mesh(out, asset_.skeleton.joint_count()); !s) return fail(s.message());
    return {};
  }

  // Checks the file's weights, then keeps the largest kMaxInfluences per vertex, renormalised.
  Status add_weights(const aiMesh& mesh, unsigned index) {
    struct Influence {
      int joint;
      float weight;
    };
    const std::size_t n = mesh.mNumVertices;
    std::vector<std::uint32_t> start(n + 1, 0);
    for (unsigned b = 0; b < mesh.mNumBones; ++b) {
      const aiBone& bone = *mesh.mBones[b];
      for (unsigned w = 0; w < bone.mNumWeights; ++w) {
        const aiVertexWeight& vw = bone.mWeights[w];
        if (vw.mVertexId >= n)
          return fail(mesh_label(mesh, index) + ", bone '" + str(bone.mName) + "': vertex index " +
                      std::to_string(vw.mVertexId) + " out of range");
        ++start[vw.mVertexId + 1];
      }
    }
    for (std::size_t v = 0; v < n; ++v) start[v + 1] += start[v];
    std::vector<Influence> all(start[n]);
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (unsigned b = 0; b < mesh.mNumBones; ++b) {
      const aiBone& bone = *mesh.mBones[b];
      const int joint = joint_of_bone(bone);
      for (unsigned w = 0; w < bone.mNumWeights; ++w) {
        const aiVertexWeight& vw = bone.mWeights[w];
        if (!std::isfinite(vw.mWeight) || vw.mWeight < 0.0f)
          return fail(mesh_label(mesh, index) + ", vertex " + std::to_string(vw.mVertexId) +
                      ": weight " + num(vw.mWeight) + " for bone '" + str(bone.mName) +
                      "' is not a finite non-negative number");
        all[fill[vw.mVertexId]++] = {joint, vw.mWeight};
      }
    }
    SkinnedMesh& out = asset_.mesh;
    for (std::size_t v = 0; v < n; ++v) {
      auto first = all.begin() + start[v], last = all.begin() + start[v + 1];
      float sum = 0.0f;
      for (auto it = first; it != last; ++it) sum += it->weight;
      if (!(sum > 0.0f))
        return fail(mesh_label(mesh, index) + ", vertex " + std::to_string(v) + ": has no weights");
      if (!options_.normalize_weights && std::abs(sum - 1.0f) > options_.weight_sum_tolerance)
        return fail("weights do not sum to one: " + mesh_label(mesh, index) + ", vertex " +
                    std::to_string(v) + " sums to " + num(sum));
      // Merge repeats of one joint, then keep the heaviest.
      std::sort(first, last,
                [](const Influence& a, const Influence& b) { return a.joint < b.joint; });
      auto end = first;
      for (auto it = first; it != last; ++it) {
        if (end != first && (end - 1)->joint == it->joint)
          (end - 1)->weight += it->weight;
        else
          *end++ = *it;
      }
      std::stable_sort(first, end,
                       [](const Influence& a, const Influence& b) { return a.weight > b.weight; });
      const auto kept = std::min<std::ptrdiff_t>(end - first, kMaxInfluences);
      float kept_sum = 0.0f;
      for (std::ptrdiff_t k = 0; k < kept; ++k) kept_sum += first[k].weight;
      for (int k = 0; k < kMaxInfluences; ++k) {
        const bool used = k < kept;
        out.joint_indices.push_back(used ? static_cast<std::uint16_t>(first[k].joint) : 0);
        out.joint_weights.push_back(used ? first[k].weight / kept_sum : 0.0f);
      }
    }
    return {};
  }

  // Keys of one kind into seconds, checked; `rest` fills a channel with no keys.
  template <class Key, class Value, class Convert>
  Status convert_keys(const Key* keys, unsigned count, double ticks_per_second,
                      const std::string& where, const char* kind, Value rest, Convert convert,
                      std::vector<std::pair<float, Value>>& out, float& last_time) {
    out.clear();
    if (count == 0 || keys == nullptr) {
      out.push_back({0.0f, rest});
      return {};
    }
    out.reserve(count);
    for (unsigned k = 0; k < count; ++k) {
      const double ticks = keys[k].mTime;
      const Value value = convert(keys[k].mValue);
      const double seconds = ticks / ticks_per_second;
      // Checked before narrowing: a double beyond float's range does not convert.
      const bool in_range = std::isfinite(seconds) && std::abs(seconds) < 1e30;
      const float t = in_range ? static_cast<float>(seconds) : 0.0f;
      if (!in_range || !finite_value(value))
        return fail("NaN key: " + where + ", " + kind + " key " + std::to_string(k) +
                    " is not finite");
      if (t < 0.0f)
        return fail(where + ", " + kind + " key " + std::to_string(k) + ": negative time " +
                    num(t));
      if (!out.empty() && t < out.back().first)
        return fail(where + ", " + kind + " key " + std::to_string(k) + ": time " + num(t) +
                    " goes back from " + num(out.back().first) + " (keys not sorted)");
      if (!out.empty() && t == out.back().first)
        out.back().second = value;  // a repeated time: the later key wins
      else
        out.push_back({t, value});
    }
    last_time = std::max(last_time, out.back().first);
    return {};
  }
  static bool finite_value(const glm::vec3& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
  }
  static bool finite_value(const glm::quat& q) {
    return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
  }

  Status build_clip(const aiAnimation& anim, unsigned index) {
    std::string clip_name = str(anim.mName);
    if (clip_name.empty()) clip_name = "clip " + std::to_string(index);
    const std::string label = clip_label(anim, index);
    if (!std::isfinite(anim.mTicksPerSecond) || anim.mTicksPerSecond < 0.0 ||
        (anim.mTicksPerSecond > 0.0 && anim.mTicksPerSecond < 1e-6))
      return fail(label + ": ticks per second " + num(anim.mTicksPerSecond) + " is not valid");
    const double tps = anim.mTicksPerSecond > 0.0 ? anim.mTicksPerSecond : 25.0;
    if (!std::isfinite(anim.mDuration) || anim.mDuration < 0.0)
      return fail(label + ": duration " + num(anim.mDuration) + " ticks is not valid");

    const std::size_t joint_count = joints_.size();
    std::vector<const aiNodeAnim*> channel_of(joint_count, nullptr);
    for (unsigned c = 0; c < anim.mNumChannels; ++c) {
      const aiNodeAnim& ch = *anim.mChannels[c];
      const int joint = nodes_[static_cast<std::size_t>(by_name_.at(str(ch.mNodeName)))].joint;
      if (joint < 0) continue;  // animates something outside the skeleton
      if (channel_of[static_cast<std::size_t>(joint)] != nullptr)
        return fail(label + ": two channels animate joint '" + str(ch.mNodeName) + "'");
      channel_of[static_cast<std::size_t>(joint)] = &ch;
    }

    // Root keys are relative to the root's parent; the root's rest also holds the unanimated
    // ancestors (above_root_), so root keys are moved by that transform. Separable per track
    // only when it has uniform scale.
    JointTransform above;
    if (std::string why = decompose(above_root_, above); !why.empty())
      return fail("the transform above the skeleton root " + why);
    const bool uniform =
        std::abs(above.scale.x - above.scale.y) <= 1e-4f * std::abs(above.scale.x) &&
        std::abs(above.scale.x - above.scale.z) <= 1e-4f * std::abs(above.scale.x);

    std::vector<JointTrack> tracks(joint_count);
    float last_time = 0.0f;
    std::vector<std::pair<float, glm::vec3>> vkeys;
    std::vector<std::pair<float, glm::quat>> qkeys;
    auto vec = [](const aiVector3D& v) { return glm::vec3(v.x, v.y, v.z); };
    auto quat = [](const aiQuaternion& q) { return glm::quat(q.w, q.x, q.y, q.z); };
    for (std::size_t j = 0; j < joint_count; ++j) {
      const aiNodeAnim* ch = channel_of[j];
      const JointTransform& rest = rest_[j];
      const bool is_root = asset_.skeleton.parents()[j] < 0;
      const std::string where = label + ", joint '" + asset_.skeleton.names()[j] + "'";
      if (ch != nullptr && is_root && !near(above_root_, glm::mat4(1.0f), 1e-6f) && !uniform)
        return fail(where + ": animated root under a non-uniformly scaled parent is not supported");
      const bool move = ch != nullptr && is_root;
      JointTrack& track = tracks[j];
      if (Status s =
              convert_keys(ch ? ch->mPositionKeys : nullptr, ch ? ch->mNumPositionKeys : 0, tps,
                           where, "translation", rest.translation, vec, vkeys, last_time);
          !s)
        return s;
      for (auto& [t, v] : vkeys)
        track.translations.push_back({t, move && ch->mNumPositionKeys > 0
                                             ? glm::vec3(above_root_ * glm::vec4(v, 1.0f))
                                             : v});
      if (Status s = convert_keys(ch ? ch->mRotationKeys : nullptr, ch ? ch->mNumRotationKeys : 0,
                                  tps, where, "rotation", rest.rotation, quat, qkeys, last_time);
          !s)
        return s;
      for (auto& [t, q] : qkeys)
        track.rotations.push_back({t, move && ch->mNumRotationKeys > 0 ? above.rotation * q : q});
      if (Status s = convert_keys(ch ? ch->mScalingKeys : nullptr, ch ? ch->mNumScalingKeys : 0,
                                  tps, where, "scale", rest.scale, vec, vkeys, last_time);
          !s)
        return s;
      for (auto& [t, v] : vkeys)
        track.scales.push_back({t, move && ch->mNumScalingKeys > 0 ? above.scale.x * v : v});
    }
    const double file_duration = anim.mDuration / tps;
    if (!(file_duration < 1e30)) return fail(label + ": duration " + num(file_duration) + " s");
    float duration = std::max(static_cast<float>(file_duration), last_time);
    if (!(duration > 0.0f)) duration = static_cast<float>(1.0 / tps);  // a one-pose clip
    if (!std::isfinite(duration)) return fail(label + ": duration is not finite");
    core::Result<Clip> clip = Clip::create(std::move(clip_name), duration, std::move(tracks));
    if (!clip) return fail(label + ": " + clip.message());
    if (Status s = clip.value().check_skeleton(asset_.skeleton); !s) return fail(s.message());
    asset_.clips.push_back(std::move(clip.value()));
    return {};
  }

  const aiScene& scene_;
  const std::string& name_;
  const ImportOptions& options_;
  std::vector<NodeInfo> nodes_;
  std::unordered_map<std::string, int> by_name_;
  std::unordered_set<std::string> ambiguous_;
  std::vector<int> joints_;  // node index per joint
  glm::mat4 above_root_{1.0f};
  std::vector<JointTransform> rest_;
  std::vector<glm::mat4> inverse_binds_;
  std::vector<char> bind_set_;
  ImportedAsset asset_;
};

}  // namespace

core::Result<ImportedAsset> scene_to_runtime(const aiScene& scene, const std::string& name,
                                             const ImportOptions& options) {
  if (options.max_joints < 1 || options.max_joints > kMaxJoints)
    return Status::error(name + ": ImportOptions::max_joints must be in [1, " +
                         std::to_string(kMaxJoints) + "]");
  return Converter(scene, name, options).run();
}

}  // namespace spindle::anim::detail
