// Importer tests: the Debian assimp-testmodels files (expected values derived without assimp where
// possible), the runtime pipeline on an imported asset, and bad files built from simple_skin.gltf.
#include <spindle/anim/import.h>

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "special_files.h"

#include <glm/gtc/matrix_transform.hpp>
#include <nlohmann/json.hpp>

#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skinning_job.h>

#include "anim_test_support.h"

namespace spindle::anim::import_test {

// --- helpers shared with import_fuzz_test.cpp ---------------------------------------------------

std::filesystem::path model_path(const std::string& relative) {
  return std::filesystem::path(SPINDLE_ASSIMP_MODELS) / relative;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

namespace {
// The bad files of one test run; removed when the program exits.
struct TempDir {
  std::filesystem::path path;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
}  // namespace

std::filesystem::path temp_dir() {
  static const TempDir dir{[] {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("spindle_import_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }()};
  return dir.path;
}

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

namespace {
constexpr std::string_view kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string base64_decode(std::string_view text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const std::size_t v = kBase64.find(c);
    if (v == std::string_view::npos) continue;  // '=' padding
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : bytes) {
    acc = (acc << 8) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kBase64[(acc << (6 - bits)) & 63]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

nlohmann::json simple_skin() {
  return nlohmann::json::parse(read_file(model_path("glTF2/simple_skin/simple_skin.gltf")));
}

std::string buffer_bytes(const nlohmann::json& gltf, int buffer) {
  const std::string uri = gltf["buffers"][buffer]["uri"];
  return base64_decode(uri.substr(uri.find(',') + 1));
}

void set_buffer_bytes(nlohmann::json& gltf, int buffer, std::string_view bytes) {
  gltf["buffers"][buffer]["uri"] = "data:application/gltf-buffer;base64," + base64_encode(bytes);
}

// One .glb: the JSON chunk, then every buffer packed into the one BIN chunk (4-byte aligned).
std::string make_glb(nlohmann::json gltf) {
  std::string bin;
  std::vector<std::size_t> base;
  for (std::size_t b = 0; b < gltf["buffers"].size(); ++b) {
    base.push_back(bin.size());
    bin += buffer_bytes(gltf, static_cast<int>(b));
    while (bin.size() % 4 != 0) bin.push_back('\0');
  }
  for (auto& view : gltf["bufferViews"]) {
    const std::size_t b = view["buffer"];
    view["buffer"] = 0;
    view["byteOffset"] = view.value("byteOffset", std::size_t{0}) + base[b];
  }
  gltf["buffers"] = nlohmann::json::array({{{"byteLength", bin.size()}}});
  std::string json = gltf.dump();
  while (json.size() % 4 != 0) json.push_back(' ');
  auto u32 = [](std::string& s, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  std::string glb = "glTF";
  u32(glb, 2);
  u32(glb, static_cast<std::uint32_t>(12 + 8 + json.size() + 8 + bin.size()));
  u32(glb, static_cast<std::uint32_t>(json.size()));
  glb += "JSON";
  glb += json;
  u32(glb, static_cast<std::uint32_t>(bin.size()));
  glb += std::string("BIN\0", 4);
  glb += bin;
  return glb;
}

// The asset is whole: the mesh passes check_mesh, the indices address it, every clip fits.
void expect_whole(const ImportedAsset& asset) {
  const int joints = asset.skeleton.joint_count();
  EXPECT_GT(joints, 0);
  if (asset.mesh.vertex_count() > 0) {
    EXPECT_TRUE(check_mesh(asset.mesh, joints).ok());
    for (std::uint16_t i : asset.indices) EXPECT_LT(i, asset.mesh.vertex_count());
    EXPECT_EQ(asset.indices.size() % 3, 0u);
  } else {
    EXPECT_TRUE(asset.indices.empty());
  }
  for (const Clip& clip : asset.clips) {
    EXPECT_EQ(clip.joint_count(), joints);
    EXPECT_TRUE(clip.check_skeleton(asset.skeleton).ok());
  }
}

// --- Debian test models ---------------------------------------------------------------------

namespace {

#define SPINDLE_REQUIRE_MODEL(relative)               \
  if (!std::filesystem::exists(model_path(relative))) \
  GTEST_SKIP() << model_path(relative) << " missing (install assimp-testmodels)"

float write_float_at(std::string& bytes, std::size_t offset, float value) {
  float old;
  std::memcpy(&old, bytes.data() + offset, 4);
  std::memcpy(bytes.data() + offset, &value, 4);
  return old;
}

// Positions, indices and keys below were decoded from simple_skin.gltf's base64 buffers with a
// 15-line Python script (json + base64 + struct.unpack_from over each accessor), not by assimp.
constexpr float kSimpleSkinPositions[10][2] = {{0, 0}, {1, 0},    {0, 0.5f}, {1, 0.5f}, {0, 1},
                                               {1, 1}, {0, 1.5f}, {1, 1.5f}, {0, 2},    {1, 2}};
constexpr float kSimpleSkinWeight1[10] = {0, 0, 0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 1, 1};
constexpr std::uint16_t kSimpleSkinIndices[24] = {0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4,
                                                  4, 5, 7, 4, 7, 6, 6, 7, 9, 6, 9, 8};
// Rotation keys of node 2 (x, y, z, w as stored), one every 0.5 s from 0 to 5.5 s.
constexpr float kSimpleSkinRotZ[12] = {0, 0.383f,  0.707f,  0.707f,  0.383f,  0,
                                       0, -0.383f, -0.707f, -0.707f, -0.383f, 0};
constexpr float kSimpleSkinRotW[12] = {1, 0.924f, 0.707f, 0.707f, 0.924f, 1,
                                       1, 0.924f, 0.707f, 0.707f, 0.924f, 1};

TEST(ImportModels, SimpleSkinGltf) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  auto r = import_asset(model_path("glTF2/simple_skin/simple_skin.gltf"));
  ASSERT_TRUE(r.ok()) << r.message();
  const ImportedAsset& a = r.value();
  expect_whole(a);
  // Skin joints are nodes 1 and 2; node 0 (the mesh node, identity) is above their common root.
  ASSERT_EQ(a.skeleton.joint_count(), 2);
  EXPECT_EQ(a.skeleton.parents()[0], -1);
  EXPECT_EQ(a.skeleton.parents()[1], 0);
  test::expect_near(a.skeleton.rest_pose()[0].translation, {0, 1, 0});
  test::expect_near(a.skeleton.rest_pose()[1].translation, {0, 0, 0});
  // Both inverse binds are translate(-0.5, -1, 0) (accessor 4).
  for (int j = 0; j < 2; ++j)
    test::expect_near(a.skeleton.inverse_binds()[static_cast<std::size_t>(j)],
                      glm::translate(glm::mat4(1.0f), glm::vec3(-0.5f, -1.0f, 0.0f)));

  ASSERT_EQ(a.mesh.vertex_count(), 10u);
  EXPECT_TRUE(a.mesh.nx.empty());  // the file has no normals
  for (std::size_t v = 0; v < 10; ++v) {
    test::expect_near({a.mesh.px[v], a.mesh.py[v], a.mesh.pz[v]},
                      {kSimpleSkinPositions[v][0], kSimpleSkinPositions[v][1], 0});
    // JOINTS_0 is (0, 1, 0, 0) everywhere; sorted heaviest first, unused slots weigh 0.
    float w1 = 0.0f;
    for (int k = 0; k < kMaxInfluences; ++k)
      if (a.mesh.joint_indices[v * 4 + static_cast<std::size_t>(k)] == 1)
        w1 += a.mesh.joint_weights[v * 4 + static_cast<std::size_t>(k)];
    EXPECT_NEAR(w1, kSimpleSkinWeight1[v], 1e-6f) << "vertex " << v;
  }
  ASSERT_EQ(a.indices.size(), 24u);
  for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(a.indices[i], kSimpleSkinIndices[i]);

  ASSERT_EQ(a.clips.size(), 1u);
  const Clip& clip = a.clips[0];
  EXPECT_EQ(clip.name(), "clip 0");  // the animation has no name
  EXPECT_FLOAT_EQ(clip.duration(), 5.5f);
  const JointTrack& animated = clip.tracks()[1];
  ASSERT_EQ(animated.rotations.size(), 12u);
  for (std::size_t k = 0; k < 12; ++k) {
    EXPECT_NEAR(animated.rotations[k].time, 0.5f * static_cast<float>(k), 1e-5f);
    test::expect_same_rotation(
        animated.rotations[k].value,
        glm::normalize(glm::quat(kSimpleSkinRotW[k], 0, 0, kSimpleSkinRotZ[k])), 1e-5f);
  }
  // Not animated: one key holding the rest pose.
  EXPECT_EQ(animated.translations.size(), 1u);
  EXPECT_EQ(animated.scales.size(), 1u);
  const JointTrack& still = clip.tracks()[0];
  ASSERT_EQ(still.translations.size(), 1u);
  test::expect_near(still.translations[0].value, {0, 1, 0});
  EXPECT_EQ(still.rotations.size(), 1u);
}

// Sampling -> local to model -> palette -> skinning, at `time`; returns the skinned positions.
std::vector<glm::vec3> skin_at(const ImportedAsset& a, const Clip* clip, float time) {
  const auto joints = static_cast<std::size_t>(a.skeleton.joint_count());
  std::vector<JointTransform> local(a.skeleton.rest_pose().begin(), a.skeleton.rest_pose().end());
  if (clip != nullptr) {
    SamplingCache cache(clip->joint_count());
    SamplingJob sampling{.clip = clip, .time = time, .cache = &cache, .output = local};
    EXPECT_TRUE(sampling.run().ok());
  }
  std::vector<glm::mat4> model(joints), palette(joints);
  LocalToModelJob ltm{.skeleton = &a.skeleton, .local = local, .model = model};
  PaletteJob pal{.model = model, .inverse_binds = a.skeleton.inverse_binds(), .palette = palette};
  EXPECT_TRUE(ltm.run().ok());
  EXPECT_TRUE(pal.run().ok());
  const std::size_t n = a.mesh.vertex_count();
  std::vector<float> x(n), y(n), z(n), nx(a.mesh.nx.size()), ny(nx.size()), nz(nx.size());
  SkinningJob skin{.palette = palette,
                   .joint_indices = a.mesh.joint_indices,
                   .joint_weights = a.mesh.joint_weights,
                   .in_positions = a.mesh.positions(),
                   .in_normals = a.mesh.normals(),
                   .out_positions = {x, y, z},
                   .out_normals = {nx, ny, nz}};
  EXPECT_TRUE(skin.run().ok());
  std::vector<glm::vec3> out(n);
  for (std::size_t v = 0; v < n; ++v) out[v] = {x[v], y[v], z[v]};
  return out;
}

TEST(ImportModels, SimpleSkinThroughTheRuntimePipeline) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  auto r = import_asset(model_path("glTF2/simple_skin/simple_skin.gltf"));
  ASSERT_TRUE(r.ok()) << r.message();
  const ImportedAsset& a = r.value();
  // The file's node rest pose is not its bind pose: joints sit at (0, 1, 0) while the inverse
  // binds undo (0.5, 1, 0), so at rest the whole strip moves by -0.5 in x (as in the Khronos
  // tutorial this model comes from).
  const std::vector<glm::vec3> rest = skin_at(a, nullptr, 0.0f);
  for (std::size_t v = 0; v < rest.size(); ++v)
    test::expect_near(rest[v], glm::vec3(a.mesh.px[v] - 0.5f, a.mesh.py[v], a.mesh.pz[v]));
  // t = 0 has the identity key: same as rest.
  const std::vector<glm::vec3> t0 = skin_at(a, &a.clips[0], 0.0f);
  for (std::size_t v = 0; v < rest.size(); ++v) test::expect_near(t0[v], rest[v]);
  // t = 1 s: joint 1 turns 90 degrees about z around (0, 1, 0). Vertex 9 (1, 2, 0) is all
  // joint 1: (0.5, 1, 0) from its pivot, rotated to (-1, 0.5, 0) -> (-1, 1.5, 0).
  const std::vector<glm::vec3> t1 = skin_at(a, &a.clips[0], 1.0f);
  test::expect_near(t1[9], {-1.0f, 1.5f, 0.0f}, 1e-3f);
  // Vertex 0 is all joint 0, which does not move.
  test::expect_near(t1[0], {-0.5f, 0.0f, 0.0f});
}

TEST(ImportModels, FbxAnimationWithSkeleton) {
  SPINDLE_REQUIRE_MODEL("FBX/animation_with_skeleton.fbx");
  const auto path = model_path("FBX/animation_with_skeleton.fbx");
  // Blender wrote raw weights: strict import refuses, naming the first bad vertex.
  auto strict = import_asset(path);
  ASSERT_FALSE(strict.ok());
  EXPECT_TRUE(strict.message().starts_with(path.string() + ": weights do not sum to one"))
      << strict.message();
  EXPECT_NE(strict.message().find("vertex 0 sums to 1.207"), std::string::npos) << strict.message();

  auto r = import_asset(path, {.normalize_weights = true});
  ASSERT_TRUE(r.ok()) << r.message();
  const ImportedAsset& a = r.value();
  expect_whole(a);
  // 14 bones (Bone .. Bone.013) plus their animated parent 'Armature'.
  ASSERT_EQ(a.skeleton.joint_count(), 15);
  EXPECT_EQ(a.skeleton.names()[0], "Armature");
  EXPECT_EQ(a.skeleton.find("Bone.013") > 0, true);
  EXPECT_EQ(a.mesh.vertex_count(), 4224u);  // unindexed: 3 per triangle
  EXPECT_EQ(a.indices.size(), 3u * 2112u);
  EXPECT_EQ(a.mesh.nx.size(), 4224u);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name(), "Armature|ArmatureAction");
  EXPECT_NEAR(a.clips[0].duration(), 20.0f / 24.0f, 1e-5f);  // 20 frames at 24 fps
  // Every joint has a channel from frame 0 to 20; Bone.005 has 14 keys, the others 2.
  for (int j = 0; j < a.skeleton.joint_count(); ++j) {
    const JointTrack& t = a.clips[0].tracks()[static_cast<std::size_t>(j)];
    EXPECT_EQ(t.rotations.size(),
              a.skeleton.names()[static_cast<std::size_t>(j)] == "Bone.005" ? 14u : 2u);
    EXPECT_EQ(t.translations.size(), t.rotations.size());
    EXPECT_FLOAT_EQ(t.rotations.front().time, 0.0f);
    EXPECT_NEAR(t.rotations.back().time, 20.0f / 24.0f, 1e-5f);
  }
}

TEST(ImportModels, FbxHuesitos) {
  SPINDLE_REQUIRE_MODEL("FBX/huesitos.fbx");
  auto r = import_asset(model_path("FBX/huesitos.fbx"), {.normalize_weights = true});
  ASSERT_TRUE(r.ok()) << r.message();
  const ImportedAsset& a = r.value();
  expect_whole(a);
  ASSERT_EQ(a.skeleton.joint_count(), 10);  // 9 bones + 'Armature'
  EXPECT_EQ(a.mesh.vertex_count(), 256u);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_NEAR(a.clips[0].duration(), 39.0f / 25.0f, 1e-5f);
  EXPECT_EQ(
      a.clips[0].tracks()[static_cast<std::size_t>(a.skeleton.find("Bone.001"))].rotations.size(),
      40u);
}

TEST(ImportModels, XEpilepticRestPoseSkinsToTheBindMesh) {
  SPINDLE_REQUIRE_MODEL("X/BCN_Epileptic.X");
  auto r = import_asset(model_path("X/BCN_Epileptic.X"));
  ASSERT_TRUE(r.ok()) << r.message();
  const ImportedAsset& a = r.value();
  expect_whole(a);
  ASSERT_EQ(a.skeleton.joint_count(), 54);
  EXPECT_EQ(a.skeleton.names()[0], "B_Root_Pelvis_L");
  // Three meshes (Torso 5898, Head 6108, Legs 3372 vertices), merged.
  EXPECT_EQ(a.mesh.vertex_count(), 5898u + 6108u + 3372u);
  EXPECT_EQ(a.indices.size(), 3u * (1966u + 2036u + 1124u));
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name(), "Epileptisch");
  EXPECT_NEAR(a.clips[0].duration(), 15840.0f / 4800.0f, 1e-5f);
  // From the file's text: "AnimTicksPerSecond 4800", and B_Root_Pelvis_L's "AnimationKey pos"
  // has 100 keys, every 160 ticks, the first "0;3;-0.000000,0.038155,0.129130" and the last
  // "15840;3;-0.000000,0.038155,0.129130". assimp turns DirectX's left-handed space
  // right-handed by negating z. The rotation key "0.529746,0.468369,-0.529746,0.468369"
  // (w, x, y, z) arrives with z negated as well (conjugate, then mirror).
  const JointTrack& pelvis = a.clips[0].tracks()[0];
  ASSERT_EQ(pelvis.translations.size(), 100u);
  EXPECT_FLOAT_EQ(pelvis.translations[1].time, 160.0f / 4800.0f);
  test::expect_near(pelvis.translations.front().value, {0.0f, 0.038155f, -0.129130f});
  EXPECT_NEAR(pelvis.translations.back().time, 3.3f, 1e-5f);
  test::expect_near(pelvis.translations.back().value, {0.0f, 0.038155f, -0.129130f});
  ASSERT_EQ(pelvis.rotations.size(), 1u);
  test::expect_same_rotation(pelvis.rotations[0].value,
                             glm::quat(0.529746f, 0.468369f, -0.529746f, -0.468369f));
  // In this file the node rest pose is the bind pose: skinning it gives the mesh back.
  const std::vector<glm::vec3> rest = skin_at(a, nullptr, 0.0f);
  for (std::size_t v = 0; v < rest.size(); ++v)
    test::expect_near(rest[v], {a.mesh.px[v], a.mesh.py[v], a.mesh.pz[v]}, 1e-4f);
  // And the whole clip samples and skins to finite positions.
  for (float t : {0.0f, 1.0f, 3.3f}) {
    for (const glm::vec3& p : skin_at(a, &a.clips[0], t))
      ASSERT_TRUE(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z));
  }
}

TEST(ImportModels, FilesWithoutASkeletonOrWithDanglingBones) {
  SPINDLE_REQUIRE_MODEL("FBX/spider.fbx");
  auto spider = import_asset(model_path("FBX/spider.fbx"));
  ASSERT_FALSE(spider.ok());
  EXPECT_NE(spider.message().find("no skeleton"), std::string::npos) << spider.message();
  // anim_test.x skins to bones 'joint3' and 'joint4' that have no frame in the file.
  auto dangling = import_asset(model_path("X/anim_test.x"));
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.message().find("'joint3', which is not in the file"), std::string::npos)
      << dangling.message();
}

// --- bad files ---------------------------------------------------------------------------------

// Writes `gltf` (or raw text) to the temp dir and imports it; the error must start with the path
// and contain `problem`.
void expect_rejected(const std::string& file_name, std::string_view contents,
                     std::string_view problem, const ImportOptions& options = {}) {
  const std::filesystem::path path = temp_dir() / file_name;
  write_file(path, contents);
  auto r = import_asset(path, options);
  ASSERT_FALSE(r.ok()) << file_name << " was accepted";
  EXPECT_TRUE(r.message().starts_with(path.string() + ": ")) << r.message();
  EXPECT_NE(r.message().find(problem), std::string::npos)
      << "expected '" << problem << "' in: " << r.message();
}

// Found by fuzzing (tests/fuzz, target `fbx`): one byte of animation_with_skeleton.fbx turned
// bone "Bone.006" into a second "Bone.003", and assimp 5.2's FBX reader then freed the skeleton
// twice (a double free in ~aiScene, which killed the process). Two bones of one name are refused
// before assimp reads the file, binary or text, from a path or from memory.
TEST(ImportBadFiles, TwoFbxBonesWithOneNameAreRefusedBeforeAssimpFreesThemTwice) {
  SPINDLE_REQUIRE_MODEL("FBX/animation_with_skeleton.fbx");
  std::string binary = read_file(model_path("FBX/animation_with_skeleton.fbx"));
  const std::string bone6("Bone.006\0\1Model", 15);
  const std::size_t at = binary.find(bone6);
  ASSERT_NE(at, std::string::npos);
  binary[at + 7] = '3';
  const char* problem = "two bones are named 'Bone.003': assimp 5.2's FBX reader frees";
  expect_rejected("two_bones.fbx", binary, problem, {.normalize_weights = true});
  auto from_memory =
      import_asset_from_memory(as_bytes(binary), "mem.fbx", "fbx", {.normalize_weights = true});
  ASSERT_FALSE(from_memory.ok());
  EXPECT_TRUE(from_memory.message().starts_with(std::string("mem.fbx: ") + problem))
      << from_memory.message();

  const std::string text =
      "; FBX 7.4.0 project file\nObjects:  {\n"
      "\tModel: 1, \"Model::Arm\", \"LimbNode\" {\n\t}\n"
      "\tModel: 2, \"Model::Arm\", \"LimbNode\" {\n\t}\n}\n";
  expect_rejected("two_bones_text.fbx", text, "two bones are named 'Arm'");
  // Meshes may share a name (assimp's own cubes_nonames.fbx does): only bones are refused.
  const std::string meshes =
      "; FBX 7.4.0 project file\nObjects:  {\n"
      "\tModel: 1, \"Model::Cube\", \"Mesh\" {\n\t}\n"
      "\tModel: 2, \"Model::Cube\", \"Mesh\" {\n\t}\n}\n";
  auto shared_mesh_name = import_asset_from_memory(as_bytes(meshes), "m.fbx", "fbx");
  ASSERT_FALSE(shared_mesh_name.ok());  // nothing to import, but not for its names
  EXPECT_EQ(shared_mesh_name.message().find("two bones"), std::string::npos)
      << shared_mesh_name.message();
}

// Found by fuzzing (target `x`): "Material {" turned into "M_terial {" in assimp's test.x makes
// assimp 5.2's text .x reader dereference null. assimp reads every file first in a child process,
// so such a file is refused with what happened, and the test process (a game's) lives on.
TEST(ImportBadFiles, AFileThatCrashesAssimpIsRefusedAndTheProcessLivesOn) {
  SPINDLE_REQUIRE_MODEL("X/test.x");
  std::string text = read_file(model_path("X/test.x"));
  const std::size_t at = text.find("Material {");
  ASSERT_NE(at, std::string::npos);
  text[at + 1] = '_';
  auto r = import_asset_from_memory(as_bytes(text), "crash.x", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.message().starts_with("crash.x: assimp crashed reading it (SIGSEGV"))
      << r.message();
  expect_rejected("crash.x", text, "assimp crashed reading it (SIGSEGV");
}

// A game that ignores SIGCHLD has its children reaped by the kernel, so the probe never sees
// the child's exit status: the crash must still be refused (it was read unprobed here, and
// killed the test, when the probe judged by waitpid()).
TEST(ImportBadFiles, AFileThatCrashesAssimpIsRefusedInAGameThatIgnoresSigchld) {
  SPINDLE_REQUIRE_MODEL("X/test.x");
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  std::string text = read_file(model_path("X/test.x"));
  const std::size_t at = text.find("Material {");
  ASSERT_NE(at, std::string::npos);
  text[at + 1] = '_';
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &before), 0);
  auto r = import_asset_from_memory(as_bytes(text), "crash.x", "x");
  auto good = import_asset(model_path("glTF2/simple_skin/simple_skin.gltf"));  // still reads
  ::sigaction(SIGCHLD, &before, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.message().starts_with("crash.x: assimp crashed reading it (")) << r.message();
  EXPECT_TRUE(good.ok()) << good.message();
}

// A read that outlasts ImportOptions::probe_seconds is stopped and refused (a hang on a damaged
// file); here a whole character against a deadline of a microsecond.
TEST(ImportBadFiles, AReadThatTakesTooLongIsStoppedAndRefused) {
  SPINDLE_REQUIRE_MODEL("X/BCN_Epileptic.X");
  auto r = import_asset(model_path("X/BCN_Epileptic.X"), {.probe_seconds = 1e-6});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("assimp was still reading it after"), std::string::npos)
      << r.message();
  EXPECT_TRUE(import_asset(model_path("X/BCN_Epileptic.X")).ok())
      << "the default deadline reads it";
}

TEST(ImportBadFiles, Truncated) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  const std::string text = read_file(model_path("glTF2/simple_skin/simple_skin.gltf"));
  for (std::size_t cut :
       {std::size_t{1}, std::size_t{40}, text.size() / 3, text.size() / 2, text.size() - 2}) {
    SCOPED_TRACE(cut);
    expect_rejected("truncated.gltf", text.substr(0, cut),
                    "invalid glTF JSON (truncated or damaged)");
  }
  const std::string glb = make_glb(simple_skin());
  for (std::size_t cut : {std::size_t{4}, std::size_t{12}, std::size_t{30}, glb.size() / 2}) {
    SCOPED_TRACE(cut);
    expect_rejected("truncated.glb", glb.substr(0, cut), "truncated .glb");
  }
  expect_rejected("truncated.glb", glb.substr(0, glb.size() - 1), "assimp could not read it");
}

TEST(ImportBadFiles, ExternalBufferPresentAndMissing) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  nlohmann::json gltf = simple_skin();
  write_file(temp_dir() / "external.bin", buffer_bytes(gltf, 0));
  gltf["buffers"][0]["uri"] = "external.bin";
  write_file(temp_dir() / "external.gltf", gltf.dump());
  auto ok = import_asset(temp_dir() / "external.gltf");
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok.value().mesh.vertex_count(), 10u);
  // From memory, nothing is read from disk: the same file misses its buffer.
  auto memory = import_asset_from_memory(as_bytes(gltf.dump()), "mem.gltf", "gltf");
  ASSERT_FALSE(memory.ok());
  EXPECT_TRUE(memory.message().starts_with("mem.gltf: ")) << memory.message();
  EXPECT_NE(memory.message().find("external.bin"), std::string::npos) << memory.message();

  gltf["buffers"][0]["uri"] = "missing.bin";
  expect_rejected("missing_buffer.gltf", gltf.dump(), "missing.bin");
}

TEST(ImportBadFiles, JointIndexOutOfRange) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  nlohmann::json gltf = simple_skin();
  std::string joints = buffer_bytes(gltf, 1);  // JOINTS_0: 10 x 4 uint16, stride 16
  const std::uint16_t bad = 7;                 // the skin has 2 joints
  std::memcpy(joints.data() + 3 * 16 + 2, &bad, 2);
  set_buffer_bytes(gltf, 1, joints);
  expect_rejected("joint_range.gltf", gltf.dump(),
                  "nodes[0]: joint index out of range: JOINTS_0 of vertex 3 is 7, the skin has 2 "
                  "joints");
  // The same in a .glb (the check reads the BIN chunk).
  auto glb = import_asset_from_memory(as_bytes(make_glb(gltf)), "joints.glb", "glb");
  ASSERT_FALSE(glb.ok());
  EXPECT_TRUE(glb.message().starts_with("joints.glb: nodes[0]: joint index out of range"))
      << glb.message();
}

TEST(ImportBadFiles, WeightsNotSummingToOne) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  nlohmann::json gltf = simple_skin();
  std::string weights = buffer_bytes(gltf, 1);  // WEIGHTS_0 at offset 160, 16 bytes per vertex
  EXPECT_EQ(write_float_at(weights, 160 + 4 * 16 + 4, 0.75f), 0.5f);  // vertex 4: 0.5 + 0.75
  set_buffer_bytes(gltf, 1, weights);
  expect_rejected("weights.gltf", gltf.dump(),
                  "weights do not sum to one: mesh 0 'meshes[0]', vertex 4 sums to 1.25");
  // Policy switch: accepted and renormalised.
  write_file(temp_dir() / "weights.gltf", gltf.dump());
  auto r = import_asset(temp_dir() / "weights.gltf", {.normalize_weights = true});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NEAR(r.value().mesh.joint_weights[4 * 4], 0.6f, 1e-6f);  // 0.75 / 1.25, heaviest first
}

TEST(ImportBadFiles, NaNKeys) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  nlohmann::json gltf = simple_skin();
  std::string keys = buffer_bytes(gltf, 3);  // 12 times, then 12 rotations at offset 48
  write_float_at(keys, 48 + 3 * 16 + 8, std::numeric_limits<float>::quiet_NaN());
  set_buffer_bytes(gltf, 3, keys);
  expect_rejected("nan_key.gltf", gltf.dump(),
                  "NaN key: clip 0 '', joint 'nodes[2]', rotation key 3");

  gltf = simple_skin();
  keys = buffer_bytes(gltf, 3);
  write_float_at(keys, 2 * 4, std::numeric_limits<float>::infinity());  // a key time
  set_buffer_bytes(gltf, 3, keys);
  // assimp's own validation catches this one first and names the key.
  expect_rejected("inf_time.gltf", gltf.dump(), "mRotationKeys[2].mTime (inf)");
}

TEST(ImportBadFiles, KeysOutOfOrderAndRepeated) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  nlohmann::json gltf = simple_skin();
  std::string keys = buffer_bytes(gltf, 3);
  write_float_at(keys, 5 * 4, 1.0f);  // key 5 at 1.0 s, after key 4 at 2.0 s
  set_buffer_bytes(gltf, 3, keys);
  gltf["accessors"][5]["min"] = {0.0};
  expect_rejected("unsorted.gltf", gltf.dump(), "keys not sorted");

  // A repeated time is a step: the later key wins, the earlier one is dropped.
  gltf = simple_skin();
  keys = buffer_bytes(gltf, 3);
  write_float_at(keys, 2 * 4, 0.5f);  // key 2 at 0.5 s like key 1
  set_buffer_bytes(gltf, 3, keys);
  write_file(temp_dir() / "repeated.gltf", gltf.dump());
  auto r = import_asset(temp_dir() / "repeated.gltf");
  ASSERT_TRUE(r.ok()) << r.message();
  const auto& rotations = r.value().clips[0].tracks()[1].rotations;
  ASSERT_EQ(rotations.size(), 11u);
  EXPECT_FLOAT_EQ(rotations[1].time, 0.5f);
  test::expect_same_rotation(rotations[1].value, glm::normalize(glm::quat(0.707f, 0, 0, 0.707f)));
}

TEST(ImportBadFiles, HierarchyCycles) {
  SPINDLE_REQUIRE_MODEL("glTF2/RecursiveNodes/RecursiveNodes.gltf");
  const auto recursive = model_path("glTF2/RecursiveNodes/RecursiveNodes.gltf");
  auto r = import_asset(recursive);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.message().starts_with(recursive.string() + ": ")) << r.message();
  EXPECT_NE(r.message().find("recursive reference"), std::string::npos) << r.message();

  nlohmann::json gltf = simple_skin();
  gltf["nodes"][2]["children"] = {1};  // 1 -> 2 -> 1
  expect_rejected("cycle.gltf", gltf.dump(), "recursive reference");
}

TEST(ImportBadFiles, AbsurdCounts) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  // Every accessor must fit its buffer view (checked before assimp reads anything).
  for (auto [accessor, count] : {std::pair<int, std::uint64_t>{1, 2147483648u},
                                 {1, 4294967295u},
                                 {0, 1u << 30},
                                 {5, 2147483647u},
                                 {4, 100000000u}}) {
    SCOPED_TRACE(accessor);
    nlohmann::json gltf = simple_skin();
    gltf["accessors"][accessor]["count"] = count;
    expect_rejected(
        "count.gltf", gltf.dump(),
        "accessors[" + std::to_string(accessor) + "]: " + std::to_string(count) + " elements need");
  }
  nlohmann::json weights = simple_skin();
  weights["accessors"][3]["count"] = 11;
  expect_rejected("weight_count.gltf", weights.dump(),
                  "accessors[3]: 11 elements need 336 bytes, its buffer view has 320");
  // A wider stride walks past the view; assimp 5.2 reads past its buffer here (found by the
  // fuzzer under ASan).
  weights = simple_skin();
  weights["bufferViews"][2]["byteStride"] = 20;
  expect_rejected("stride.gltf", weights.dump(),
                  "accessors[3]: 10 elements need 356 bytes, its buffer view has 320");
  // Counts that are no counts at all stop at the structure check.
  nlohmann::json gltf = simple_skin();
  gltf["bufferViews"][1]["byteLength"] = -5;
  expect_rejected("byte_length.gltf", gltf.dump(), "bufferViews[1]: 'byteLength' = -5");
  gltf = simple_skin();
  gltf["bufferViews"][1]["byteLength"] = 1000;  // the buffer has 168 bytes
  expect_rejected("view_length.gltf", gltf.dump(), "past its buffer's 168");
  gltf = simple_skin();
  gltf["accessors"][1]["count"] = 1e19;
  expect_rejected("huge_count.gltf", gltf.dump(), "accessors[1]: 'count'");
}

TEST(ImportBadFiles, OverTheImportLimits) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  const std::string text = simple_skin().dump();
  expect_rejected("limits.gltf", text, "10 vertices, over the limit of 9", {.max_vertices = 9});
  expect_rejected("limits.gltf", text, "has 2 bones, over the limit of 1", {.max_joints = 1});
  expect_rejected("limits.gltf", text, "12 keys, over the limit of 11", {.max_keys_per_track = 11});
  expect_rejected("limits.gltf", text, "1 animations, over the limit of 0", {.max_clips = 0});
  expect_rejected("limits.gltf", text, "more than 2 nodes", {.max_nodes = 2});
  expect_rejected("limits.gltf", text, "over the limit of 100", {.max_file_bytes = 100});
  auto memory =
      import_asset_from_memory(as_bytes(text), "mem.gltf", "gltf", {.max_file_bytes = 100});
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.message(),
            "mem.gltf: file is " + std::to_string(text.size()) + " bytes, over the limit of 100");
  // The limit also holds for referenced files.
  nlohmann::json gltf = simple_skin();
  write_file(temp_dir() / "limit_buffer.bin", std::string(4096, '\0'));
  gltf["buffers"][0]["uri"] = "limit_buffer.bin";
  expect_rejected("limit_buffer.gltf", gltf.dump(), "over the limit of 4000",
                  {.max_file_bytes = 4000});
}

TEST(ImportBadFiles, EmptyUnknownAndMissing) {
  expect_rejected("empty.gltf", "", "empty file");
  expect_rejected("unknown.xyz", "hello", "unknown format 'xyz'");
  expect_rejected("model.obj", "v 0 0 0\n", "unknown format 'obj' (Spindle imports .gltf, .glb");
  expect_rejected("no_extension", "hello", "unknown format ''");
  auto missing = import_asset(temp_dir() / "does_not_exist.gltf");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("cannot open: No such file"), std::string::npos)
      << missing.message();
  auto empty = import_asset_from_memory({}, "mem", "gltf");
  EXPECT_EQ(empty.message(), "mem: empty file");
  auto unknown = import_asset_from_memory(as_bytes("hello"), "mem", "docx");
  EXPECT_EQ(unknown.message(),
            "mem: unknown format 'docx' (Spindle imports .gltf, .glb, .fbx and text .x)");
  // Binary and compressed .x are refused before assimp sees them (its readers are unsafe).
  for (const char* header : {"xof 0303bin 0032", "xof 0303bzip0032", "xof 0303tzip0032", "xof"}) {
    auto x = import_asset_from_memory(as_bytes(std::string(header) + " garbage"), "m.x", "x");
    EXPECT_NE(x.message().find("only text .x files are supported"), std::string::npos)
        << header << ": " << x.message();
  }
  if (std::filesystem::exists(model_path("X/test_cube_binary.x")))
    expect_rejected("binary.x", read_file(model_path("X/test_cube_binary.x")),
                    "only text .x files are supported");
  // Garbage in a known format.
  auto garbage = import_asset_from_memory(as_bytes("hello world"), "mem.fbx", "fbx");
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(garbage.message().starts_with("mem.fbx: ")) << garbage.message();
}

TEST(ImportMemory, GlbMatchesGltf) {
  SPINDLE_REQUIRE_MODEL("glTF2/simple_skin/simple_skin.gltf");
  const std::string glb = make_glb(simple_skin());
  auto r = import_asset_from_memory(as_bytes(glb), "skin.glb", "glb");
  ASSERT_TRUE(r.ok()) << r.message();
  expect_whole(r.value());
  EXPECT_EQ(r.value().skeleton.joint_count(), 2);
  EXPECT_EQ(r.value().mesh.vertex_count(), 10u);
  ASSERT_EQ(r.value().clips.size(), 1u);
  EXPECT_EQ(r.value().clips[0].tracks()[1].rotations.size(), 12u);
}

// An existing path that is not a regular file says what it is (it used to say "no such file"),
// in the words of every loader of outside files (core::open_file_capped()).
TEST(ImportBadFiles, WhatIsNotARegularFileIsRefusedByWhatItIs) {
  for (const spindle::test::SpecialFile& f : spindle::test::special_files("import")) {
    auto asset = spindle::test::returns_promptly(f, [&] { return import_asset(f.path); });
    EXPECT_EQ(asset.message(), f.path + ": not a regular file (" + f.kind + ")");
  }
  auto missing = import_asset(temp_dir() / "does_not_exist.gltf");
  EXPECT_EQ(missing.message(), (temp_dir() / "does_not_exist.gltf").string() +
                                   ": cannot open: No such file or directory");
}

}  // namespace
}  // namespace spindle::anim::import_test
