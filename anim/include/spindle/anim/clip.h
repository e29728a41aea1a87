// Clip: immutable runtime animation, one translation / rotation / scale track per joint, each
// with keyframes at arbitrary times. Clip::create() validates the editable tracks.
//
// Usage:
//
//   std::vector<spindle::anim::JointTrack> tracks(skeleton.joint_count());
//   tracks[0].translations = {{0.0f, {0, 0, 0}}, {1.0f, {0, 2, 0}}};
//   tracks[0].rotations = {{0.0f, glm::quat(1, 0, 0, 0)}};
//   tracks[0].scales = {{0.0f, glm::vec3(1)}};
//   ...
//   spindle::core::Result<spindle::anim::Clip> clip =
//       spindle::anim::Clip::create("walk", 1.0f, std::move(tracks));
//   if (clip) if (auto s = clip.value().check_skeleton(skeleton); !s) report(s.message());
//
// Every track needs at least one key (a one-key track is constant). Before the first key and
// after the last, a track holds its end value; looping is the player's business (wrap the time).
//
// Quantised storage (for small-memory targets: 6 bytes per key value instead of 12 or 16):
//
//   spindle::core::Result<spindle::anim::Clip> small = clip.value().quantized();
//   // small.value().is_quantized(); memory_bytes() ~52% of the float clip's (50-joint walk);
//   // error_bound() says how far a sampled pose may be from the float clip's.
//
// - Translation / scale: per track and component, origin = min over the keys and
//   step = (max - min) / 65535; a key is stored as an unsigned 16-bit u, decoded origin + u * step.
//   Error per component <= step / 2 + 2^-20 * max|value| (float rounding, encode and sampler
//   lerp), and exactly 0 for a constant component (extent 0: one-key tracks, constant scales).
// - Rotation: "smallest three". q and -q are the same rotation, so the largest |component| is made
//   positive and dropped (rebuilt as sqrt(1 - a^2 - b^2 - c^2)); the other three lie in
//   [-1/sqrt2, 1/sqrt2] and are stored in 15 bits each, the dropped index in 2 more bits: 6 bytes,
//   like the 3 x 16-bit keys of the N64 Indy port. Chosen over 4 x int16 (8 bytes) for the size;
//   the rebuilt component costs a sqrt per decoded key. With e = sqrt2 / 32767 / 2 per stored
//   component, the dropped one (>= 1/2) is off by <= ~3e, so a key is within the chord
//   c = sqrt(3 e^2 + 9 e^2) ~= 3.47 e of the exact unit quaternion. Between keys nlerp divides by
//   |lerp| >= m = sqrt((1 + min |dot(q0, q1)|) / 2) over the clip's segments, so the rotation
//   error is <= 2 asin(c / m) radians (~1.5e-4 rad, 0.009 deg, for nearby keys). If some segment
//   has |dot| so small that quantisation could flip nlerp's shortest-path choice, the bound is pi
//   (says "no bound"); real clips never have 180-degree steps between adjacent keys.
// - Key times stay 32-bit floats: sampling a quantised clip finds exactly the keys and
//   interpolation fractions the float clip does (same cursor and search behaviour), and the bound
//   above is a pure value bound. 16-bit times (a fraction of the duration) would save 2 more bytes
//   a key but add a time error of duration / 131070 whose effect grows with the track's slope:
//   unbounded for near-step keys.
// - A quantised clip drops its float keys: tracks() is empty, decoded_tracks() rebuilds float
//   tracks (allocates; for tools and tests, not per frame). SamplingJob samples either kind and
//   decodes only the two keys around the sampled time.
//
// Compressed storage (smallest, and the fastest to sample in steady playback):
//
//   spindle::core::Result<spindle::anim::Clip> c = clip.value().compressed();
//   // c.value().is_compressed() (and is_quantized()); same error_bound() as quantized().
//
// - Values are the 16-bit encodings above, with the same bound; a compressed clip samples the
//   same keys as quantized() of the same float clip (equal to within float rounding).
// - Key times are 16-bit indices into one table of the clip's distinct key times (31 floats for
//   a 30 keys/s, 1 s clip), so times stay exact.
// - All tracks' keys are one stream of keys (track, time index, value: 8 bytes while the clip has
//   at most 85 joints and 256 distinct times, else up to 10) sorted by when playback needs them:
//   first keys 0 and 1 of every track, then key k of a track at the time of its key k - 1. A
//   SamplingCache keeps each track's two decoded keys and a stream position, so forward playback
//   decodes each key once, when time passes it. A one-key track is stored twice.
// - Seeking (backwards, a jump, another clip): a table gives, per distinct time, how much of the
//   stream is consumed by then; the cache scans back from there reading only track indices and
//   decodes the two live keys of each track. Nothing is replayed from time 0.
// - Limits: at most 21845 joints (track indices are 16-bit) and 65535 distinct key times.
// - Sizes, 50 joints: a walk keyed at 30/s on every track is 40 KB (16-bit: 50 KB, float: 87 KB;
//   27 KB after KeyframeOptimizer at 1 mm). Irregular key times cost 8 bytes per distinct time
//   (table and seek table) and 16-bit time indices: make_character's walk is 14.6 KB against
//   10.8 KB quantized().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/base/result.h>

namespace spindle::anim {

class Skeleton;
namespace detail {
struct CompressedView;
}

struct Vec3Key {
  float time = 0.0f;  // seconds from the clip start
  glm::vec3 value{0.0f};
};

struct QuatKey {
  float time = 0.0f;  // seconds from the clip start
  glm::quat value{1.0f, 0.0f, 0.0f, 0.0f};
};

// The keys of one joint; times strictly increasing within each track, in [0, duration].
struct JointTrack {
  std::vector<Vec3Key> translations;
  std::vector<QuatKey> rotations;
  std::vector<Vec3Key> scales;
};

// Worst-case difference between sampling a quantised clip and its float source, any time, any
// joint. All zero for a float clip.
struct QuantizationError {
  // Absolute, per component, in the clip's units (metres for translation).
  float translation = 0.0f;
  // Radians of rotation angle between the two sampled rotations.
  float rotation = 0.0f;
  // Absolute, per component.
  float scale = 0.0f;
};

class Clip {
 public:
  Clip() = default;

  // Rejects: non-finite or non-positive duration, no tracks, empty tracks, times that are not
  // finite, outside [0, duration] or not strictly increasing, non-finite values, zero-length
  // rotations. Rotation keys are normalised.
  static core::Result<Clip> create(std::string name, float duration,
                                   std::vector<JointTrack> tracks);

  // A copy with 16-bit keys and no float keys (see the top of this file). Quantising a quantised
  // clip returns a copy of it (same keys, same bound). Error when a track's value range
  // overflows a float (e.g. keys at -3e38 and 3e38), or for a compressed() clip.
  core::Result<Clip> quantized() const;
  // A copy in the compressed stream (see the top of this file). Compressing a compressed clip
  // returns a copy. Errors: a quantized() clip (compress the float clip it came from), too many
  // joints or distinct key times for 16-bit indices, value ranges that overflow a float.
  core::Result<Clip> compressed() const;

  const std::string& name() const { return name_; }
  float duration() const { return duration_; }
  int joint_count() const { return joint_count_; }
  // The float tracks; empty for a quantised clip (use decoded_tracks()).
  std::span<const JointTrack> tracks() const { return tracks_; }
  // True for quantized() and compressed() clips: their keys are 16-bit.
  bool is_quantized() const { return !quantized_.first.empty() || is_compressed(); }
  bool is_compressed() const { return !compressed_.values.empty(); }
  // Float tracks for either kind: a copy of tracks(), or the decoded 16-bit keys. Allocates.
  std::vector<JointTrack> decoded_tracks() const;
  // Heap and object bytes held by the clip's keys and track tables (the name excluded).
  std::size_t memory_bytes() const;
  // Analytic worst case of quantisation; all zero for a float clip.
  QuantizationError error_bound() const {
    return is_compressed() ? compressed_.bound : quantized_.bound;
  }

  // Error when the clip animates a different number of joints than the skeleton has.
  core::Status check_skeleton(const Skeleton& skeleton) const;

 private:
  friend struct SamplingJob;
  friend class PackedClip;

  // Filled by quantized(); empty in a float clip. Track i = 3 * joint + 0 / 1 / 2 (translation /
  // rotation / scale) owns keys [first[i], first[i + 1]) of `times` and `values`.
  struct QuantizedKeys {
    std::vector<std::uint32_t> first;
    std::vector<float> times;
    // Translation / scale: 3 x u16; rotation: smallest three (anim/src/quantize.h).
    std::vector<std::array<std::uint16_t, 3>> values;
    // Per vec3 track, [2 * joint + 0 / 1] for translation / scale: decode origin + u * step.
    std::vector<glm::vec3> origin;
    std::vector<glm::vec3> step;
    QuantizationError bound;
  };

  // Filled by compressed(); empty otherwise. Key i of the stream is (track, time, values[i]);
  // keys 0 and 1 of every track come first (track order), then the rest by the time they are
  // needed.
  struct CompressedKeys {
    // Translation / scale: 3 x u16; rotation: smallest three (anim/src/quantize.h).
    std::vector<std::array<std::uint16_t, 3>> values;
    // Track (3 * joint + 0 / 1 / 2: translation / rotation / scale) and index into `times` of each
    // key: one byte when the clip has at most 256 tracks / distinct times, else two; the vector
    // of the other width stays empty.
    std::vector<std::uint8_t> tracks8;
    std::vector<std::uint16_t> tracks16;
    std::vector<std::uint8_t> times8;
    std::vector<std::uint16_t> times16;
    // The clip's distinct key times, increasing.
    std::vector<float> times;
    // consumed[f]: stream keys needed once time reaches times[f] (seek table).
    std::vector<std::uint32_t> consumed;
    // Per vec3 track, [2 * joint + 0 / 1] for translation / scale: decode origin + u * step.
    std::vector<glm::vec3> origin;
    std::vector<glm::vec3> step;
    QuantizationError bound;
  };

  // The compressed tables as views (empty unless is_compressed()).
  detail::CompressedView compressed_view() const;

  std::string name_;
  float duration_ = 0.0f;
  int joint_count_ = 0;
  std::vector<JointTrack> tracks_;
  QuantizedKeys quantized_;
  CompressedKeys compressed_;
};

}  // namespace spindle::anim
