// ContactDiffJob with exact inputs, without Bullet (this binary links only the Bullet-free
// physics jobs): which pairs began and which ended, and the inputs and outputs validate()
// refuses.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/physics/contact_diff_job.h>

namespace spindle::physics {
namespace {

// Pair (a, b) of entities at generation 0; pair(a, b, ga, gb) with generations.
ContactPair pair(std::uint32_t a, std::uint32_t b, std::uint32_t ga = 0, std::uint32_t gb = 0) {
  return {core::Entity{a, ga}, core::Entity{b, gb}};
}

// Runs the diff with outputs exactly as large as the inputs need.
struct Diff {
  Diff(std::vector<ContactPair> previous_pairs, std::vector<ContactPair> current_pairs)
      : previous(std::move(previous_pairs)),
        current(std::move(current_pairs)),
        began_buffer(current.size(), 0xdeadu),
        ended_buffer(previous.size(), 0xdeadu) {}

  ContactDiffJob job() {
    return {.previous = previous,
            .current = current,
            .began = began_buffer,
            .ended = ended_buffer,
            .began_count = &began_count,
            .ended_count = &ended_count};
  }
  std::vector<std::uint32_t> began() const {
    return {began_buffer.begin(), began_buffer.begin() + began_count};
  }
  std::vector<std::uint32_t> ended() const {
    return {ended_buffer.begin(), ended_buffer.begin() + ended_count};
  }

  std::vector<ContactPair> previous, current;
  std::vector<std::uint32_t> began_buffer, ended_buffer;
  std::uint32_t began_count = 0xdeadu, ended_count = 0xdeadu;
};

using Indices = std::vector<std::uint32_t>;

TEST(ContactDiffJob, EmptyInputsGiveNoEvents) {
  Diff d({}, {});
  ASSERT_TRUE(d.job().run());
  EXPECT_EQ(d.began_count, 0u);
  EXPECT_EQ(d.ended_count, 0u);
}

TEST(ContactDiffJob, EveryPairIsNewWhenNothingTouchedBefore) {
  Diff d({}, {pair(1, 2), pair(1, 5), pair(3, 4)});
  ASSERT_TRUE(d.job().run());
  EXPECT_EQ(d.began(), (Indices{0, 1, 2}));
  EXPECT_EQ(d.ended(), Indices{});
}

TEST(ContactDiffJob, EveryPairEndsWhenNothingTouchesNow) {
  Diff d({pair(1, 2), pair(1, 5), pair(3, 4)}, {});
  ASSERT_TRUE(d.job().run());
  EXPECT_EQ(d.began(), Indices{});
  EXPECT_EQ(d.ended(), (Indices{0, 1, 2}));
}

TEST(ContactDiffJob, PairsStillTouchingGiveNoEvents) {
  Diff d({pair(1, 2), pair(3, 4)}, {pair(1, 2), pair(3, 4)});
  ASSERT_TRUE(d.job().run());
  EXPECT_EQ(d.began_count, 0u);
  EXPECT_EQ(d.ended_count, 0u);
}

TEST(ContactDiffJob, InterleavedPairsBeginAndEndInOrder) {
  // previous: (1,2) (1,5) (2,3) (4,9) (7,8)
  // current:  (1,2) (1,3) (2,3) (5,6) (7,8) (8,9)
  Diff d({pair(1, 2), pair(1, 5), pair(2, 3), pair(4, 9), pair(7, 8)},
         {pair(1, 2), pair(1, 3), pair(2, 3), pair(5, 6), pair(7, 8), pair(8, 9)});
  ASSERT_TRUE(d.job().run());
  EXPECT_EQ(d.began(), (Indices{1, 3, 5}));  // (1,3) (5,6) (8,9)
  EXPECT_EQ(d.ended(), (Indices{1, 3}));     // (1,5) (4,9)
}

// A body destroyed and its index reused within one step: the old pair ends, the new one begins.
TEST(ContactDiffJob, GenerationsTellReusedEntitiesApart) {
  Diff d({pair(1, 2, 0, 0), pair(2, 3, 0, 0)}, {pair(1, 2, 0, 1), pair(2, 3, 0, 0)});
  ASSERT_TRUE(d.job().run());
  EXPECT_EQ(d.began(), (Indices{0}));
  EXPECT_EQ(d.ended(), (Indices{0}));
}

TEST(ContactDiffJob, PairsOrderByIndexThenGeneration) {
  EXPECT_TRUE(pair(1, 9) < pair(2, 3));
  EXPECT_TRUE(pair(1, 2, 0, 0) < pair(1, 2, 0, 1));
  EXPECT_TRUE(pair(1, 9, 0, 0) < pair(1, 2, 1, 0));  // a's generation before b's index
  EXPECT_TRUE(pair(1, 2) < pair(1, 3));
  EXPECT_FALSE(pair(1, 2) < pair(1, 2));
}

TEST(ContactDiffJob, DuplicateOrUnsortedInputsAreRejected) {
  const std::vector<ContactPair> sorted = {pair(1, 2), pair(3, 4)};
  for (const std::vector<ContactPair>& bad :
       {std::vector<ContactPair>{pair(1, 2), pair(1, 2)},               // duplicate
        std::vector<ContactPair>{pair(3, 4), pair(1, 2)},               // descending
        std::vector<ContactPair>{pair(1, 2), pair(5, 6), pair(3, 4)}})  // one out of place
  {
    for (bool bad_is_current : {false, true}) {
      Diff d(bad_is_current ? sorted : bad, bad_is_current ? bad : sorted);
      EXPECT_FALSE(d.job().validate()) << (bad_is_current ? "current" : "previous");
      EXPECT_FALSE(d.job().run());
      EXPECT_EQ(d.began_count, 0xdeadu);  // nothing written
      EXPECT_EQ(d.ended_count, 0xdeadu);
      for (std::uint32_t v : d.began_buffer) EXPECT_EQ(v, 0xdeadu);
      for (std::uint32_t v : d.ended_buffer) EXPECT_EQ(v, 0xdeadu);
    }
  }
}

TEST(ContactDiffJob, OutputsSmallerThanTheirInputAreRejected) {
  Diff d({pair(1, 2), pair(3, 4)}, {pair(1, 2), pair(5, 6), pair(7, 8)});
  ASSERT_TRUE(d.job().validate());
  ContactDiffJob job = d.job();
  job.began = std::span(d.began_buffer).first(2);  // 3 current pairs may all begin
  EXPECT_FALSE(job.validate());
  EXPECT_FALSE(job.run());
  job = d.job();
  job.ended = std::span(d.ended_buffer).first(1);  // 2 previous pairs may all end
  EXPECT_FALSE(job.validate());
  EXPECT_FALSE(job.run());
  EXPECT_EQ(d.began_count, 0xdeadu);
  // Larger outputs are fine; only the counted part is written.
  std::vector<std::uint32_t> began(10, 0xdeadu), ended(10, 0xdeadu);
  job = d.job();
  job.began = began;
  job.ended = ended;
  ASSERT_TRUE(job.run());
  EXPECT_EQ(d.began_count, 2u);
  EXPECT_EQ(began[0], 1u);
  EXPECT_EQ(began[1], 2u);
  EXPECT_EQ(began[2], 0xdeadu);
  EXPECT_EQ(d.ended_count, 1u);
  EXPECT_EQ(ended[0], 1u);
}

TEST(ContactDiffJob, MissingCountsAreRejected) {
  Diff d({}, {pair(1, 2)});
  ContactDiffJob job = d.job();
  job.began_count = nullptr;
  EXPECT_FALSE(job.validate());
  EXPECT_FALSE(job.run());
  job = d.job();
  job.ended_count = nullptr;
  EXPECT_FALSE(job.run());
  EXPECT_EQ(d.began_buffer[0], 0xdeadu);
}

}  // namespace
}  // namespace spindle::physics
