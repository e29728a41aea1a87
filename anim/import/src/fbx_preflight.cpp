#include "fbx_preflight.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace spindle::anim::detail {

namespace {

// Binary FBX: an object's name is a string property ('S', a 32-bit little-endian length, the
// bytes) holding "name\0\1Class"; a bone's next property is the string "LimbNode".
void binary_bone_names(std::string_view b, std::vector<std::string_view>& out) {
  constexpr std::string_view kModel("\0\1Model", 7);
  constexpr std::string_view kLimb("LimbNode");
  const auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    std::memcpy(&v, b.data() + at, 4);
    return v;  // FBX is little-endian, as every machine Spindle builds for
  };
  // A file made of nothing but "\0\1Model" would cost 1 KiB of look-back per 7 bytes: past a
  // budget of look-back steps the check stops (the child process that reads the file first still
  // catches what it misses).
  std::size_t budget = 64 * 1024 * 1024;
  for (std::size_t end = b.find(kModel); end != std::string_view::npos && budget > 0;
       end = b.find(kModel, end + 1)) {
    const std::size_t stop = end + kModel.size();
    // The property holding it: 'S' and its length, at most 1 KiB back.
    for (std::size_t len = kModel.size(); len <= 1024 && len + 5 <= stop && budget > 0;
         ++len, --budget) {
      const std::size_t at = stop - len - 5;
      if (b[at] != 'S' || u32(at + 1) != len) continue;
      const bool limb = stop + 5 + kLimb.size() <= b.size() && b[stop] == 'S' &&
                        u32(stop + 1) == kLimb.size() && b.substr(stop + 5, kLimb.size()) == kLimb;
      if (limb) out.push_back(b.substr(at + 5, len - kModel.size()));
      break;
    }
  }
}

// Text FBX: Model: 123, "Model::Bone.003", "LimbNode" {
void text_bone_names(std::string_view t, std::vector<std::string_view>& out) {
  constexpr std::string_view kModel("\"Model::");
  for (std::size_t at = t.find(kModel); at != std::string_view::npos; at = t.find(kModel, at + 1)) {
    const std::size_t begin = at + kModel.size();
    const std::size_t end = t.find('"', begin);
    if (end == std::string_view::npos) return;
    std::size_t next = end + 1;
    while (next < t.size() && (t[next] == ',' || t[next] == ' ' || t[next] == '\t')) ++next;
    if (t.substr(next, 10) == "\"LimbNode\"") out.push_back(t.substr(begin, end - begin));
  }
}

}  // namespace

std::string fbx_preflight(std::span<const std::byte> bytes) {
  const std::string_view b(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::vector<std::string_view> bones;
  if (b.substr(0, 18) == "Kaydara FBX Binary")
    binary_bone_names(b, bones);
  else
    text_bone_names(b, bones);
  std::sort(bones.begin(), bones.end());
  const auto twice = std::adjacent_find(bones.begin(), bones.end());
  if (twice == bones.end()) return {};
  return "two bones are named '" + std::string(*twice) +
         "': assimp 5.2's FBX reader frees such a skeleton twice (found by fuzzing), so the file "
         "is refused; rename one of them";
}

}  // namespace spindle::anim::detail
