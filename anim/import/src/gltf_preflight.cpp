// glTF structure check: every index reference in range, the parts assimp 5.2 needs present.
#include "gltf_preflight.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace spindle::anim::detail {
namespace {

using nlohmann::json;

std::uint64_t component_size(std::uint64_t type) {
  switch (type) {
    case 5120:  // BYTE
    case 5121:  // UNSIGNED_BYTE
      return 1;
    case 5122:  // SHORT
    case 5123:  // UNSIGNED_SHORT
      return 2;
    case 5125:  // UNSIGNED_INT
    case 5126:  // FLOAT
      return 4;
    default:
      return 0;
  }
}

std::uint64_t component_count(const std::string& type) {
  if (type == "SCALAR") return 1;
  if (type == "VEC2") return 2;
  if (type == "VEC3") return 3;
  if (type == "VEC4" || type == "MAT2") return 4;
  if (type == "MAT3") return 9;
  if (type == "MAT4") return 16;
  return 0;
}

class Checker {
 public:
  Checker(const json& root, std::string_view bin) : root_(root), bin_(bin) {}

  std::string run() {
    if (!root_.is_object()) return "glTF JSON is not an object";
    for (const char* list : {"scenes", "nodes", "meshes", "skins", "animations", "accessors",
                             "bufferViews", "buffers"})
      if (!array_of_objects(list)) return std::string("'") + list + "' is not a list of objects";
    const std::size_t nodes = size("nodes"), meshes = size("meshes"), skins = size("skins"),
                      accessors = size("accessors"), views = size("bufferViews"),
                      buffers = size("buffers"), scenes = size("scenes");
    ok(index(root_, "scene", scenes, false, "the file"));
    each("scenes", [&](const json& s, const std::string& at) {
      ok(index_list(s, "nodes", nodes, false, at));
    });
    each("nodes", [&](const json& n, const std::string& at) {
      ok(index_list(n, "children", nodes, false, at));
      ok(index(n, "mesh", meshes, false, at));
      ok(index(n, "skin", skins, false, at));
    });
    each("buffers", [&](const json& b, const std::string& at) {
      ok(count(b, "byteLength", true, at));
      if (auto it = b.find("uri"); it != b.end() && !it->is_string())
        ok(at + ": 'uri' is not a string");
    });
    each("bufferViews", [&](const json& v, const std::string& at) {
      ok(index(v, "buffer", buffers, true, at));
      ok(count(v, "byteLength", true, at));
      ok(count(v, "byteOffset", false, at));
      ok(count(v, "byteStride", false, at));
      if (!problem_.empty()) return;
      const std::uint64_t end =
          v.value("byteOffset", std::uint64_t{0}) + v["byteLength"].get<std::uint64_t>();
      const std::uint64_t buffer_length =
          root_["buffers"][v["buffer"].get<std::size_t>()]["byteLength"].get<std::uint64_t>();
      if (end > buffer_length)
        ok(at + ": ends at byte " + std::to_string(end) + ", past its buffer's " +
           std::to_string(buffer_length));
      const std::uint64_t stride = v.value("byteStride", std::uint64_t{4});
      if (stride < 4 || stride > 252 || stride % 4 != 0)
        ok(at + ": byteStride " + std::to_string(stride) + " is not a multiple of 4 in [4, 252]");
    });
    each("accessors", [&](const json& a, const std::string& at) {
      // Optional in glTF (an all-zero or sparse accessor), but assimp 5.2 needs it.
      ok(index(a, "bufferView", views, true, at));
      ok(count(a, "count", true, at));
      ok(count(a, "byteOffset", false, at));
      ok(count(a, "componentType", true, at));
      if (auto it = a.find("type"); it == a.end() || !it->is_string())
        ok(at + ": 'type' is missing or not a string");
      if (a.contains("sparse")) ok(at + ": sparse accessors are not supported");
      if (!problem_.empty()) return;
      // The last element must end inside the view; assimp 5.2 checks count x element size
      // only, which a byteStride larger than the element gets past.
      const std::uint64_t component = component_size(a["componentType"].get<std::uint64_t>());
      const std::uint64_t components = component_count(a["type"].get<std::string>());
      if (component == 0 || components == 0) return ok(at + ": unknown componentType or type");
      const std::uint64_t element = component * components;
      const json& view = root_["bufferViews"][a["bufferView"].get<std::size_t>()];
      const std::uint64_t stride = view.value("byteStride", element);
      const std::uint64_t n = a["count"].get<std::uint64_t>();
      const std::uint64_t end = a.value("byteOffset", std::uint64_t{0}) +
                                (n == 0 ? 0 : (n - 1) * std::max(stride, element) + element);
      if (end > view["byteLength"].get<std::uint64_t>())
        ok(at + ": " + std::to_string(n) + " elements need " + std::to_string(end) +
           " bytes, its buffer view has " + view["byteLength"].dump());
    });
    each("meshes", [&](const json& m, const std::string& at) {
      auto prims = m.find("primitives");
      if (prims == m.end() || !prims->is_array()) return ok(at + ": no 'primitives' list");
      for (std::size_t p = 0; p < prims->size(); ++p) {
        const json& prim = (*prims)[p];
        const std::string where = at + ", primitive " + std::to_string(p);
        if (!prim.is_object()) return ok(where + " is not an object");
        ok(index(prim, "indices", accessors, false, where));
        auto attrs = prim.find("attributes");
        if (attrs == prim.end() || !attrs->is_object()) return ok(where + ": no 'attributes'");
        for (auto it = attrs->begin(); it != attrs->end(); ++it) {
          ok(index(*attrs, it.key().c_str(), accessors, true, where));
          // Joints and weights come in pairs.
          const std::string& key = it.key();
          for (auto [mine, other] :
               {std::pair<std::string_view, std::string_view>{"JOINTS_", "WEIGHTS_"},
                {"WEIGHTS_", "JOINTS_"}})
            if (key.starts_with(mine) &&
                !attrs->contains(std::string(other) + key.substr(mine.size())))
              ok(where + ": attribute '" + key + "' has no matching " + std::string(other) +
                 key.substr(mine.size()));
        }
        if (auto targets = prim.find("targets"); targets != prim.end())
          ok(where + ": morph targets are not supported");
      }
    });
    each("skins", [&](const json& s, const std::string& at) {
      // Optional in glTF (identity), but assimp 5.2 needs it.
      ok(index(s, "inverseBindMatrices", accessors, true, at));
      ok(index(s, "skeleton", nodes, false, at));
      if (!s.contains("joints")) ok(at + ": no 'joints'");
      ok(index_list(s, "joints", nodes, true, at));
    });
    if (problem_.empty()) check_joint_indices();
    each("animations", [&](const json& a, const std::string& at) {
      auto samplers = a.find("samplers");
      auto channels = a.find("channels");
      if (samplers == a.end() || !samplers->is_array() || channels == a.end() ||
          !channels->is_array())
        return ok(at + ": 'samplers' or 'channels' missing");
      for (std::size_t s = 0; s < samplers->size(); ++s) {
        const json& sampler = (*samplers)[s];
        const std::string where = at + ", sampler " + std::to_string(s);
        if (!sampler.is_object()) return ok(where + " is not an object");
        ok(index(sampler, "input", accessors, true, where));
        ok(index(sampler, "output", accessors, true, where));
      }
      for (std::size_t c = 0; c < channels->size(); ++c) {
        const json& channel = (*channels)[c];
        const std::string where = at + ", channel " + std::to_string(c);
        if (!channel.is_object()) return ok(where + " is not an object");
        ok(index(channel, "sampler", samplers->size(), true, where));
        auto target = channel.find("target");
        if (target == channel.end() || !target->is_object()) return ok(where + ": no 'target'");
        ok(index(*target, "node", nodes, true, where));
        if (auto path = target->find("path"); path == target->end() || !path->is_string())
          ok(where + ": target 'path' is missing or not a string");
      }
    });
    return problem_;
  }

 private:
  // Keeps the first problem.
  void ok(const std::string& problem) {
    if (problem_.empty()) problem_ = problem;
  }

  bool array_of_objects(const char* list) const {
    auto it = root_.find(list);
    if (it == root_.end()) return true;
    if (!it->is_array()) return false;
    for (const json& e : *it)
      if (!e.is_object()) return false;
    return true;
  }
  std::size_t size(const char* list) const {
    auto it = root_.find(list);
    return it == root_.end() ? 0 : it->size();
  }
  template <class F>
  void each(const char* list, F&& check) {
    auto it = root_.find(list);
    if (it == root_.end()) return;
    for (std::size_t i = 0; i < it->size() && problem_.empty(); ++i)
      check((*it)[i], std::string(list) + "[" + std::to_string(i) + "]");
  }

  static std::string index(const json& obj, const char* key, std::size_t limit, bool required,
                           const std::string& at) {
    auto it = obj.find(key);
    if (it == obj.end()) return required ? at + ": '" + key + "' is missing" : std::string();
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= limit)
      return at + ": '" + key + "' = " + it->dump() + " is not an index below " +
             std::to_string(limit);
    return {};
  }
  static std::string index_list(const json& obj, const char* key, std::size_t limit, bool required,
                                const std::string& at) {
    auto it = obj.find(key);
    if (it == obj.end()) return required ? at + ": '" + key + "' is missing" : std::string();
    if (!it->is_array()) return at + ": '" + key + "' is not a list";
    for (const json& e : *it)
      if (!e.is_number_unsigned() || e.get<std::uint64_t>() >= limit)
        return at + ": '" + key + "' holds " + e.dump() + ", not an index below " +
               std::to_string(limit);
    return {};
  }
  static std::string count(const json& obj, const char* key, bool required, const std::string& at) {
    auto it = obj.find(key);
    if (it == obj.end()) return required ? at + ": '" + key + "' is missing" : std::string();
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() > (std::uint64_t{1} << 32))
      return at + ": '" + key + "' = " + it->dump() + " is not a count below 2^32";
    return {};
  }

  // The bytes of a buffer: a .glb's BIN chunk, or a data: URI decoded; empty when the buffer is
  // an external file (assimp reads those; it then drops out-of-range joints silently, so such
  // files end up with "weights do not sum to one").
  std::string buffer_data(std::size_t b) const {
    const json& buffer = root_["buffers"][b];
    auto uri = buffer.find("uri");
    if (uri == buffer.end()) return b == 0 ? std::string(bin_) : std::string();
    const std::string& text = uri->get_ref<const std::string&>();
    const std::size_t comma = text.find(',');
    if (!text.starts_with("data:") || comma == std::string::npos || comma < 12 ||
        text.compare(comma - 7, 7, ";base64") != 0)
      return {};
    static constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (std::size_t i = comma + 1; i < text.size(); ++i) {
      const std::size_t v = kAlphabet.find(text[i]);
      if (v == std::string_view::npos) break;  // '=' or damage: assimp judges the rest
      acc = (acc << 6) | static_cast<std::uint32_t>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.push_back(static_cast<char>((acc >> bits) & 0xff));
      }
    }
    return out;
  }

  // JOINTS_n values must index the skin's joint list; assimp 5.2 drops those that do not.
  void check_joint_indices() {
    each("nodes", [&](const json& node, const std::string& at) {
      if (!node.contains("mesh") || !node.contains("skin")) return;
      const std::size_t joints = root_["skins"][node["skin"].get<std::size_t>()]["joints"].size();
      const json& mesh = root_["meshes"][node["mesh"].get<std::size_t>()];
      for (const json& prim : mesh["primitives"]) {
        for (auto it = prim["attributes"].begin(); it != prim["attributes"].end(); ++it) {
          if (!it.key().starts_with("JOINTS_")) continue;
          const json& acc = root_["accessors"][it->get<std::size_t>()];
          const std::uint64_t component = component_size(acc["componentType"].get<std::uint64_t>());
          if (acc["type"] != "VEC4" || (component != 1 && component != 2))
            return ok(at + ": " + it.key() + " is not VEC4 of unsigned byte or short");
          const json& view = root_["bufferViews"][acc["bufferView"].get<std::size_t>()];
          const std::string data = buffer_data(view["buffer"].get<std::size_t>());
          if (data.empty()) continue;
          const std::uint64_t stride = view.value("byteStride", 4 * component);
          const std::uint64_t base = view.value("byteOffset", std::uint64_t{0}) +
                                     acc.value("byteOffset", std::uint64_t{0});
          const std::uint64_t count = acc["count"].get<std::uint64_t>();
          for (std::uint64_t v = 0; v < count; ++v)
            for (std::uint64_t c = 0; c < 4; ++c) {
              const std::uint64_t at_byte = base + v * stride + c * component;
              if (at_byte + component > data.size()) return;  // short data: assimp's call
              std::uint32_t value = static_cast<unsigned char>(data[at_byte]);
              if (component == 2)
                value |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[at_byte + 1]))
                         << 8;
              if (value >= joints)
                return ok(at + ": joint index out of range: " + it.key() + " of vertex " +
                          std::to_string(v) + " is " + std::to_string(value) + ", the skin has " +
                          std::to_string(joints) + " joints");
            }
        }
      }
    });
  }

  const json& root_;
  std::string_view bin_;
  std::string problem_;
};

// Finds keys repeated within one object: assimp's JSON reader uses the first, nlohmann the last,
// so the check above would look at different data than the reader.
class DuplicateKeys final : public nlohmann::json_sax<json> {
 public:
  std::string duplicate;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) {
      duplicate = k;
      return false;  // stop parsing
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  std::vector<std::set<std::string>> keys_;
};

std::uint32_t le32(const std::byte* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(p[i]);
  return v;
}

}  // namespace

std::string gltf_preflight(std::span<const std::byte> bytes, bool binary) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string_view bin;
  if (binary) {
    // 12-byte header, then the JSON chunk's length and type.
    if (bytes.size() < 20) return "truncated .glb (" + std::to_string(bytes.size()) + " bytes)";
    if (std::memcmp(bytes.data(), "glTF", 4) != 0) return "not a .glb (no 'glTF' magic)";
    if (le32(bytes.data() + 4) != 2) return "not a glTF 2.0 .glb";
    const std::uint32_t json_length = le32(bytes.data() + 12);
    if (std::memcmp(bytes.data() + 16, "JSON", 4) != 0) return ".glb has no JSON chunk first";
    if (json_length > bytes.size() - 20)
      return "truncated .glb (JSON chunk of " + std::to_string(json_length) + " bytes, " +
             std::to_string(bytes.size() - 20) + " left)";
    text = text.substr(20, json_length);
    // The BIN chunk, if whole: length, "BIN\0", bytes.
    const std::size_t next = 20 + ((static_cast<std::size_t>(json_length) + 3) & ~std::size_t{3});
    if (bytes.size() >= next + 8 && std::memcmp(bytes.data() + next + 4, "BIN", 4) == 0) {
      const std::uint32_t bin_length = le32(bytes.data() + next);
      if (bin_length <= bytes.size() - next - 8)
        bin = std::string_view(reinterpret_cast<const char*>(bytes.data()) + next + 8, bin_length);
    }
  }
  DuplicateKeys duplicates;
  json::sax_parse(text, &duplicates);
  if (!duplicates.duplicate.empty())
    return "glTF JSON repeats the key '" + duplicates.duplicate + "' in one object";
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    return std::string("invalid glTF JSON (truncated or damaged): ") + e.what();
  }
  try {
    return Checker(root, bin).run();
  } catch (const json::exception& e) {
    return std::string("invalid glTF structure: ") + e.what();
  }
}

}  // namespace spindle::anim::detail
