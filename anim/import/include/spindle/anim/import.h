// Asset import: the offline builder that turns a glTF 2.0 / FBX / DirectX .x file into runtime
// animation data (Skeleton, SkinnedMesh, Clips), validated by the same SkeletonBuilder::build(),
// Clip::create() and check_mesh() the runtime uses.
//
// Usage:
//
//   spindle::core::Result<spindle::anim::ImportedAsset> r =
//       spindle::anim::import_asset("characters/hero.glb");
//   if (!r) report(r.message());   // e.g. "hero.glb: weights do not sum to one: mesh 'body' ..."
//   spindle::anim::ImportedAsset asset = std::move(r.value());
//   // asset.skeleton, asset.mesh (+ asset.indices), asset.clips[i] (check_skeleton() holds)
//
//   // From memory (a pak file, a test): the name only labels messages; the hint picks the reader.
//   auto r2 = spindle::anim::import_asset_from_memory(bytes, "hero.glb", "glb");
//
// Reader: assimp (libassimp-dev), chosen over tinygltf because one importer covers glTF 2.0 and
// also the FBX and DirectX .x test models Debian ships (assimp-testmodels). assimp stays a
// private dependency of this library; spindle::anim does not need it.
//
// What becomes what:
// - Skeleton: the nodes that are bones of skinned meshes, plus their ancestors up to the lowest
//   common ancestor, raised further to the highest animated ancestor if one exists (FBX files
//   animate the 'Armature' node above the bones). With no bones at all, the animated nodes are
//   used the same way. Joints keep the file's depth-first order, so parents precede children.
//   Rest pose = node transforms, decomposed (shear, projective or non-finite transforms are
//   rejected); the root's rest also holds its unanimated ancestors, so model space is the file's
//   scene space, and if the root is animated its keys are moved by that transform too (it must
//   then have uniform scale). Inverse bind = aiBone::mOffsetMatrix from the first mesh that
//   uses the bone, or the inverse model-space rest transform for joints that are not bones. A
//   bone whose offset differs in a later mesh is handled by baking that mesh's vertices into the
//   first mesh's space, provided one transform serves all of its bones; otherwise the file is
//   rejected. Vertices stay in the mesh's own space (what the offsets expect), so whether the
//   rest pose skins to the stored mesh depends on the file (true for BCN_Epileptic.X; FBX
//   offsets include the mesh node's placement; simple_skin.gltf's rest pose is not its bind pose).
// - Mesh: every mesh with bones, merged (meshes without bones are skipped), triangles only
//   (points / lines dropped), 16-bit indices, so at most 65,536 vertices. Normals are kept when
//   every merged mesh has them, else all dropped. The file's weights must sum to one per vertex
//   (within weight_sum_tolerance) before anything else touches them, unless normalize_weights
//   is set; a vertex with no weight is an error (it would collapse to the origin). Vertices with
//   more than kMaxInfluences influences keep the largest ones, renormalised (a joint listed
//   twice for one vertex counts once, its weights summed).
// - Clips: one per animation, named "clip N" when the file gives no name; seconds = ticks /
//   mTicksPerSecond (0 means assimp's default, 25). A joint without a channel, or without keys of
//   one kind, gets a one-key track holding its rest value. A channel naming a node that is not
//   in the file is an error; channels animating nodes outside the skeleton (cameras, lights, the
//   mesh's own node) are ignored. Keys must be finite ("NaN key: ..." names clip, joint and key)
//   and in non-decreasing time; when two keys share a time the later one is kept (a step), keys
//   going back in time are an error. Duration = max(mDuration, last key); a clip whose keys all
//   sit at time 0 lasts one tick.
//
// Errors: every message starts with the file name (or the memory name), then the problem:
// "empty file", "file is N bytes, over the limit of M", "unknown format 'xyz'" (only .gltf,
// .glb, .fbx and text .x are accepted: binary and compressed .x are refused because assimp 5.2's
// reader for them crashes or hangs on damaged files, found by fuzzing), "invalid glTF
// JSON (truncated or damaged)", "truncated .glb", "accessors[3]: 'bufferView' is missing",
// "assimp could not read it (...): <assimp's reason>" (missing .bin, counts beyond the buffers,
// cycles in the hierarchy), "weights do not sum to one: mesh 0 'body', vertex 12 sums to 1.25",
// "NaN key: ...", or a limit from ImportOptions (checked before this library allocates for it).
// Every file is read by assimp first in a child process (ImportOptions::probe_seconds): "assimp
// crashed reading it (SIGSEGV, ...)" or "assimp was still reading it after 60 s" refuses a file
// that would have killed or hung the game's process (assimp 5.2's readers have such bugs, found by
// fuzzing). The child is forked while no other thread of the process is inside assimp, so imports
// on several threads at once stay safe. import_asset() reads the path twice, in the child and then
// here: a file replaced in between (an exporter still writing it) is read here unprobed. A damage
// that corrupts memory without crashing the child is not caught by the probe. glTF files pass a
// structure check first (src/gltf_preflight.h): assimp 5.2 crashes on some malformed glTF (a skin
// without inverseBindMatrices, ...). FBX files with two bones of one name are refused ("two bones
// are named 'X'", src/fbx_preflight.h): assimp 5.2 frees them twice. The Result holds either the
// whole asset or the error, never part of one. assimp never logs (no logger is created).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include <spindle/anim/clip.h>
#include <spindle/anim/skeleton.h>
#include <spindle/anim/skinned_mesh.h>
#include <spindle/base/result.h>

namespace spindle::anim {

// Limits and policies; the defaults accept any sane character file.
struct ImportOptions {
  // Largest skeleton (at most kMaxJoints).
  int max_joints = 1024;
  // Largest node count in the file's hierarchy (the walk that finds the skeleton visits them).
  int max_nodes = 65536;
  // Largest merged skinned mesh; 16-bit indices cap it at 65,536.
  int max_vertices = 65536;
  // Largest triangle count of the merged mesh.
  int max_triangles = 1 << 20;
  // Largest key count of one translation / rotation / scale channel.
  int max_keys_per_track = 1 << 20;
  // Largest number of animations.
  int max_clips = 256;
  // Largest file (the main file and each file it references, e.g. a glTF .bin buffer).
  std::uint64_t max_file_bytes = std::uint64_t{256} << 20;
  // How far a vertex's weights in the file may sum from 1.
  float weight_sum_tolerance = kWeightSumTolerance;
  // Accept any positive weight sum and renormalise (many FBX exporters write raw weights).
  bool normalize_weights = false;
  // assimp first reads each file in a child process (fork()); a file whose read crashes it, or
  // is not done after this many seconds, is refused without being read here. 0: no child, read
  // in this process (only for files you trust: assimp 5.2 crashes on some damaged ones).
  double probe_seconds = 60;
};

struct ImportedAsset {
  Skeleton skeleton;
  // Empty (vertex_count() == 0) when the file has no skinned mesh; otherwise check_mesh() holds.
  SkinnedMesh mesh;
  // Triangle list into mesh, three per triangle.
  std::vector<std::uint16_t> indices;
  // One per animation in the file, each with skeleton.joint_count() tracks.
  std::vector<Clip> clips;
};

// Reads a file; referenced files (a .gltf's .bin buffers) are looked up beside it. The path is
// checked as every loader of outside files checks it (core::open_file_capped()): "cannot open:
// No such file or directory", "not a regular file (a FIFO)", "N bytes, over the limit of M for a
// model file" (ImportOptions::max_file_bytes).
core::Result<ImportedAsset> import_asset(const std::filesystem::path& file,
                                         const ImportOptions& options = {});

// Reads bytes; format_hint is the extension without the dot ("gltf", "glb", "fbx", "x").
// Nothing is read from disk: a glTF that references an external buffer fails (missing buffer).
core::Result<ImportedAsset> import_asset_from_memory(std::span<const std::byte> bytes,
                                                     std::string_view name,
                                                     std::string_view format_hint,
                                                     const ImportOptions& options = {});

}  // namespace spindle::anim
