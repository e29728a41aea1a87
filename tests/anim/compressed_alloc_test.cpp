// Sampling a compressed clip allocates nothing, in steady playback or when it reseeks (backwards
// time, jumps, another clip through the same cache).
#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace spindle::anim
