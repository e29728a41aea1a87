// Sampling a compressed clip allocates nothing, in steady playback or when it reseeks (backwards
// time, jumps, another clip through the same cache); nor does the clip bank, loading, evicting and
// sampling packed clips.
#include <gtest/gtest.h>

#include <vector>

#include <spindle/anim/clip_bank.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>

#include "alloc_counter.h"

namespace spindle::anim {
namespace {

TEST(CompressedAlloc, SamplingAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  const Character c = make_character({.seed = 5}).value();
  const Clip walk = c.walk.compressed().value(), idle = c.idle.compressed().value();
  SamplingCache cache(c.skeleton.joint_count());
  std::vector<JointTransform> pose(static_cast<std::size_t>(c.skeleton.joint_count()));
  const long before = ::spindle::test::heap_allocations();
  bool ok = true;
  for (int f = 0; f < 300; ++f) {
    const float t = static_cast<float>((f * 37) % 100) / 50.0f;  // forward, back and jumps
    ok = ok &&
         SamplingJob{.clip = f % 3 == 0 ? &idle : &walk, .time = t, .cache = &cache, .output = pose}
             .run();
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_TRUE(ok);
}

TEST(CompressedAlloc, TheClipBankAllocatesNothingAfterAdd) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  const Character a = make_character({.seed = 5}).value(), b = make_character({.seed = 6}).value();
  const Clip clips[] = {a.walk.compressed().value(), a.idle.compressed().value(),
                        b.walk.compressed().value()};
  std::vector<std::vector<std::uint32_t>> rom;
  ClipBank bank({.slots = 2, .slot_bytes = 64u << 10});
  for (const Clip& c : clips) {
    rom.emplace_back(PackedClip::size_of(c) / 4);
    const std::span<std::byte> bytes = std::as_writable_bytes(std::span(rom.back()));
    ASSERT_TRUE(PackedClip::pack(c, bytes));
    ASSERT_TRUE(bank.add(bytes));
  }
  SamplingCache cache(a.skeleton.joint_count());
  std::vector<JointTransform> pose(static_cast<std::size_t>(a.skeleton.joint_count()));
  const long before = ::spindle::test::heap_allocations();
  bool ok = true;
  for (int f = 0; f < 300; ++f) {
    // Three clips through two slots: misses, evictions, and one frame in the panic mode.
    const auto n = static_cast<std::uint32_t>(f % 3);
    const BankedClipId id = ClipBank::id_of(1 + n), next = ClipBank::id_of(1 + (n + 1) % 3),
                       after = ClipBank::id_of(1 + (n + 2) % 3);
    const PackedClip* held = f == 150 ? bank.lock(next) : nullptr;
    const PackedClip* other = f == 150 ? bank.lock(after) : nullptr;
    const PackedClip* clip = bank.lock(id);
    if (clip != nullptr) {
      ok = ok && SamplingJob{.packed = clip,
                             .time = static_cast<float>(f % 40) / 40.0f,
                             .cache = &cache,
                             .output = pose}
                     .run();
      bank.unlock(id);
    }
    if (held != nullptr) bank.unlock(next);
    if (other != nullptr) bank.unlock(after);
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_TRUE(ok);
  EXPECT_GT(bank.stats().evictions, 100u);
  EXPECT_EQ(bank.stats().panics, 1u);
}

}  // namespace
}  // namespace spindle::anim
