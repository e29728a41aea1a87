#include "spindle/ecs/entity.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace spindle::core {
namespace {

TEST(EntityPool, CreatesDistinctLiveHandles) {
  EntityPool pool(100);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 100; ++i) {
    const Entity e = pool.create();
    ASSERT_FALSE(e.is_null());
    EXPECT_TRUE(pool.alive(e));
    EXPECT_TRUE(seen.insert(e.bits()).second);
  }
  EXPECT_EQ(pool.size(), 100u);
  EXPECT_TRUE(pool.create().is_null()) << "full pool gives the null handle";
}

TEST(EntityPool, StaleHandleIsDetectedAfterTheSlotIsReused) {
  EntityPool pool(1);
  const Entity first = pool.create();
  EXPECT_TRUE(pool.destroy(first));
  EXPECT_FALSE(pool.destroy(first)) << "double destroy is refused";
  const Entity second = pool.create();
  EXPECT_EQ(second.index, first.index);
  EXPECT_NE(second.generation, first.generation);
  EXPECT_FALSE(pool.alive(first));
  EXPECT_TRUE(pool.alive(second));
  EXPECT_FALSE(pool.destroy(first)) << "a stale handle cannot destroy the new occupant";
  EXPECT_TRUE(pool.alive(second));
}

TEST(EntityPool, NullAndOutOfRangeHandlesAreNeverAlive) {
  EntityPool pool(4);
  EXPECT_FALSE(pool.alive(Entity::null()));
  EXPECT_FALSE(pool.alive(Entity{7, 0}));
  EXPECT_FALSE(pool.destroy(Entity{7, 0}));
  EXPECT_TRUE(pool.at(2).is_null());
}

TEST(EntityPool, ReusesTheOldestFreedSlotFirst) {
  EntityPool pool(3);
  const Entity a = pool.create();
  const Entity b = pool.create();
  const Entity c = pool.create();
  pool.destroy(b);
  pool.destroy(a);
  EXPECT_EQ(pool.create().index, b.index);
  EXPECT_EQ(pool.create().index, a.index);
  EXPECT_TRUE(pool.alive(c));
}

TEST(EntityPool, SlotIsRetiredInsteadOfRepeatingAGeneration) {
  EntityPool pool(1, /*generation_limit=*/3);
  std::set<std::uint64_t> handed_out;
  for (;;) {
    const Entity e = pool.create();
    if (e.is_null()) break;
    EXPECT_TRUE(handed_out.insert(e.bits()).second) << "a handle was repeated";
    pool.destroy(e);
  }
  EXPECT_EQ(handed_out.size(), 4u);  // generations 0..3
  EXPECT_EQ(pool.retired(), 1u);
}

TEST(EntityPool, RandomChurnMatchesAReferenceModel) {
  EntityPool pool(64);
  std::vector<Entity> live;
  std::vector<Entity> dead;
  std::mt19937 rng(42);
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || (rng() % 2 == 0 && live.size() < 64)) {
      const Entity e = pool.create();
      ASSERT_FALSE(e.is_null());
      live.push_back(e);
    } else {
      const std::size_t k = rng() % live.size();
      ASSERT_TRUE(pool.destroy(live[k]));
      dead.push_back(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
    ASSERT_EQ(pool.size(), live.size());
  }
  for (const Entity& e : live) EXPECT_TRUE(pool.alive(e));
  for (const Entity& e : dead) EXPECT_FALSE(pool.alive(e));
}

}  // namespace
}  // namespace spindle::core
