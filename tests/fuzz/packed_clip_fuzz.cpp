// Fuzz target `packed_clip`: packed animation clips (anim::PackedClip::open, ClipBank::add), bytes
// that a game reads from a ROM image or a file. Each input is opened twice: as it is (the checksum
// refuses nearly every change), then with its checksum made right, so that the checks behind it
// are reached. A refusal names the packed clip and leaves a bank's clips as they were; an accepted
// clip samples, forward, backward and outside its duration, to finite poses.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <spindle/anim/clip_bank.h>
#include <spindle/anim/packed_clip.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>

#include "fuzz_support.h"

namespace {

namespace anim = spindle::anim;

constexpr std::size_t kSlotBytes = 64u << 10;

// A good packed clip, and its pose at 0.3 s.
struct Good {
  std::vector<std::uint32_t> rom;
  std::vector<anim::JointTransform> pose;
  Good() {
    const anim::Clip clip = anim::make_character({.seed = 2, .joint_count = 16, .min_keys = 2})
                                .value()
                                .walk.compressed()
                                .value();
    rom.resize(anim::PackedClip::size_of(clip) / 4);
    SPINDLE_FUZZ_CHECK(anim::PackedClip::pack(clip, std::as_writable_bytes(std::span(rom))),
                       "packing the good clip");
  }
  std::span<const std::byte> bytes() const { return std::as_bytes(std::span(rom)); }
};

// The pose of the bank's clip `id` at 0.3 s, as bytes.
std::vector<std::byte> pose_of(anim::ClipBank& bank, anim::BankedClipId id) {
  const anim::PackedClip* p = bank.touch(id);
  SPINDLE_FUZZ_CHECK(p != nullptr, "the good clip is not in the bank");
  std::vector<anim::JointTransform> out(static_cast<std::size_t>(p->joint_count()));
  anim::SamplingCache cache(p->joint_count());
  const spindle::core::Status s =
      anim::SamplingJob{.packed = p, .time = 0.3f, .cache = &cache, .output = out}.run();
  SPINDLE_FUZZ_CHECK(s, s.message());
  const auto b = std::as_bytes(std::span(out));
  return {b.begin(), b.end()};
}

bool finite(const anim::JointTransform& x) {
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(x.translation[i]) || !std::isfinite(x.scale[i])) return false;
  for (int i = 0; i < 4; ++i)
    if (!std::isfinite(x.rotation[i])) return false;
  return true;
}

void try_bytes(const Good& good, std::span<const std::byte> bytes) {
  using spindle::fuzz::starts_with;
  spindle::core::Result<anim::PackedClip> p = anim::PackedClip::open(bytes);
  spindle::fuzz::outcome(p.ok(), p.message());
  // A bank that holds the good clip takes these bytes or refuses them as open() does.
  anim::ClipBank bank({.slots = 1, .slot_bytes = kSlotBytes, .max_clips = 2});
  const anim::BankedClipId good_id = bank.add(good.bytes()).value();
  const std::vector<std::byte> before = pose_of(bank, good_id);
  const spindle::core::Result<anim::BankedClipId> added = bank.add(bytes);
  SPINDLE_FUZZ_CHECK(added.ok() == p.ok() || (p.ok() && p.value().bytes().size() > kSlotBytes),
                     "the bank and open() disagree: " + added.message());
  if (!p) {
    SPINDLE_FUZZ_CHECK(starts_with(p.message(), "packed clip"), p.message());
    SPINDLE_FUZZ_CHECK(starts_with(added.message(), "clip bank: packed clip"), added.message());
    SPINDLE_FUZZ_CHECK(bank.clip_count() == 1 && pose_of(bank, good_id) == before,
                       "a refused clip changed the bank's good one");
    return;
  }
  const anim::PackedClip& clip = p.value();
  SPINDLE_FUZZ_CHECK(clip.joint_count() >= 1 && clip.duration() > 0.0f, "accepted counts");
  std::vector<anim::JointTransform> pose(static_cast<std::size_t>(clip.joint_count()));
  anim::SamplingCache cache(clip.joint_count());
  const float d = clip.duration();
  for (float t : {0.0f, 0.25f * d, 0.5f * d, d, 0.1f * d, -1.0f, 2.0f * d}) {
    const spindle::core::Status s =
        anim::SamplingJob{.packed = &clip, .time = t, .cache = &cache, .output = pose}.run();
    SPINDLE_FUZZ_CHECK(s, s.message());
    for (const anim::JointTransform& x : pose) SPINDLE_FUZZ_CHECK(finite(x), "a pose not finite");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  spindle::fuzz::quiet_logs();
  static const Good good;
  // Aligned, as a game's loader gives them (open() refuses misaligned bytes; that is tested).
  std::vector<std::uint32_t> words((size + 3) / 4);
  if (size > 0) std::memcpy(words.data(), data, size);
  const std::span<std::byte> bytes = std::as_writable_bytes(std::span(words)).first(size);
  try_bytes(good, bytes);
  if (size >= 96) {
    const std::uint64_t sum = anim::PackedClip::checksum(bytes);
    const auto lo = static_cast<std::uint32_t>(sum), hi = static_cast<std::uint32_t>(sum >> 32);
    std::memcpy(bytes.data() + 8, &lo, 4);
    std::memcpy(bytes.data() + 12, &hi, 4);
    try_bytes(good, bytes);
  }
  return 0;
}
