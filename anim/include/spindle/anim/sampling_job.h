// SamplingJob: evaluates a clip at a time into a local pose (one JointTransform per joint).
//
// Usage:
//
//   spindle::anim::SamplingCache cache(clip.joint_count());   // one per character and clip
//   std::vector<spindle::anim::JointTransform> local(clip.joint_count());
//   spindle::anim::SamplingJob job{.clip = &clip, .time = t, .cache = &cache, .output = local};
//   if (spindle::core::Status s = job.run(); !s) report(s.message());
//
// Interpolation: translation and scale lerp; rotation is a normalised lerp (nlerp) taken along the
// shortest path (the second key is negated when dot(a, b) < 0). nlerp is not constant-speed
// like slerp, but between keys a few frames apart the difference is far below what shows, and it
// is cheaper and commutative when blending.
//
// The cache keeps one cursor per track (the key at or before the last sampled time). When time
// moves forward the cursors step ahead a key or two, so steady playback never searches; when time
// goes backwards, the clip changes, or the time jumps over many keys, the cursor is found again by
// binary search. Either way the result is bit-identical to sampling with a fresh cache.
//
// Quantised clips (Clip::quantized()) sample the same way: their key times are exact, so cursors
// and searches match the float clip's, and only the two keys around the time are decoded (about
// twice the float cost, for half the memory).
//
// Compressed clips (Clip::compressed()) keep each track's two decoded keys in the cache and a
// position in the clip's key stream: forward playback decodes each key once, when time passes it,
// and does no search; backwards time, a jump or another clip reseeks from the clip's seek table
// (decoding two keys per track). The result is the same bits either way, and within float rounding
// of sampling quantized() of the same float clip (same keys; the interpolation fraction is a
// multiply by a stored reciprocal, not a division). The cache holds ~150 bytes per joint for this.
//
// Packed clips (PackedClip::open() over bytes, or ClipBank::lock() for a clip in a cache slot)
// are compressed clips in one block of memory; they sample to the same bits as the Clip they were
// packed from:
//
//   const spindle::anim::PackedClip* walk = bank.lock(walk_id);   // nullptr: hold the last pose
//   if (walk != nullptr) {
//     spindle::anim::SamplingJob job{.packed = walk, .time = t, .cache = &cache, .output = local};
//     job.run();
//     bank.unlock(walk_id);
//   }
//
// The cache tells clips apart by address and, for packed clips, by content (PackedClip::id()), so
// a slot reloaded with another clip is never sampled with the cursors of the one before.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <spindle/anim/clip.h>
#include <spindle/anim/packed_clip.h>
#include <spindle/anim/skeleton.h>
#include <spindle/anim/soa_pose.h>
#include <spindle/base/result.h>

namespace spindle::anim {

namespace detail {
struct CompressedView;
}

// Which clips a SamplingCache must be able to sample. Compressed clips need ~130 bytes more per
// joint (the decoded key pairs); a cache that only ever sees float or quantized() clips can skip
// them.
enum class CacheFor { AnyClip, UncompressedClips };

class SamplingCache {
 public:
  SamplingCache() = default;
  explicit SamplingCache(int joint_count, CacheFor clips = CacheFor::AnyClip) {
    resize(joint_count, clips);
  }

  // Allocates room for a clip of up to joint_count joints; do this at set-up, not per frame.
  void resize(int joint_count, CacheFor clips = CacheFor::AnyClip);
  // Forget the cursors (the next sample searches); needed if a Clip is destroyed and another is
  // created at the same address (packed clips are told apart by content as well).
  void invalidate() {
    source_ = nullptr;
    source_id_ = 0;
  }
  int joint_capacity() const { return static_cast<int>(cursors_.size() / 3); }
  bool holds_compressed() const { return decoded_.size() == cursors_.size(); }

  // Binary searches done so far (one per track that could not step forward; one per reseek of a
  // compressed clip); for tests and stats.
  std::uint64_t searches() const { return searches_; }
  // Compressed-clip keys decoded so far; for tests and stats.
  std::uint64_t decoded_keys() const { return decoded_keys_; }

 private:
  friend struct SamplingJob;
  // [3 * joint + 0 / 1 / 2]: translation / rotation / scale cursor.
  std::vector<std::uint32_t> cursors_;
  // Compressed clips, [3 * joint + 0 / 1 / 2]: the two keys around the last sampled time (a
  // rotation as x, y, z, w) and, while reseeking, how many of them are found.
  struct DecodedKeys {
    float t0 = 0.0f;
    float t1 = 0.0f;
    float inv_span = 0.0f;  // 1 / (t1 - t0), or 0 when t1 == t0
    glm::vec4 v0{0.0f};
    glm::vec4 v1{0.0f};
  };
  std::vector<DecodedKeys> decoded_;
  std::vector<std::uint8_t> found_;
  // Compressed clips: stream keys decoded so far.
  std::uint32_t next_ = 0;
  // Compressed clips: distinct key times at or before the last sampled time (its seek-table
  // index), so forward playback steps on from it instead of searching.
  std::uint32_t time_index_ = 0;
  // The clip sampled last: its address (the Clip, or a packed clip's bytes) and, for a packed
  // clip, its id().
  const void* source_ = nullptr;
  std::uint64_t source_id_ = 0;
  float time_ = 0.0f;
  std::uint64_t searches_ = 0;
  std::uint64_t decoded_keys_ = 0;
};

struct SamplingJob {
  // The clip to sample; must outlive the job.
  const Clip* clip = nullptr;
  // Or a packed clip instead (exactly one of the two is set); its bytes must outlive the job.
  const PackedClip* packed = nullptr;
  // Seconds from the clip start; clamped to the keys of each track.
  float time = 0.0f;
  // Per-character cursor cache with joint_capacity() >= the clip's joint count; updated by run().
  SamplingCache* cache = nullptr;
  // Local pose, exactly the clip's joint count; written by run().
  std::span<JointTransform> output{};
  // Or the pose as SoaTransform entries, soa_count(joints) of them (soa_pose.h; exactly one of
  // the two is set): the same bits, laid out for BlendingJob and LocalToModelJob's SoA forms.
  std::span<SoaTransform> soa_output{};

  core::Status validate() const;
  // Validates, then samples. The job is const; the cache is the only state it changes.
  core::Status run() const;

 private:
  void sample_compressed(const detail::CompressedView& c, bool forward) const;
  std::size_t joints() const;
  void put(std::size_t j, const JointTransform& t) const;
};

}  // namespace spindle::anim
