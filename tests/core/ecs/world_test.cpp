// The world: storage, queries, stale handles, events, resources and command-buffer ordering.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/ecs/world.h>
#include <spindle/jobs/job_system.h>

#include "test_components.h"

namespace spindle::core {
namespace {

using test::Pos;
using test::Vel;
struct Tag {
  std::uint32_t value = 0;
};
struct Ping {
  std::uint32_t id;
};

TEST(World, AddGetRemoveAndStaleHandles) {
  World world(16);
  const Entity a = world.create();
  const Entity b = world.create();
  ASSERT_NE(world.add<Pos>(a, Pos{1, 2}), nullptr);
  world.add<Vel>(a, Vel{3, 4});
  world.add<Pos>(b, Pos{5, 6});
  EXPECT_EQ(world.get<Pos>(a)->y, 2);
  EXPECT_TRUE(world.has<Vel>(a));
  EXPECT_FALSE(world.has<Vel>(b));
  EXPECT_TRUE(world.remove<Vel>(a));
  EXPECT_FALSE(world.remove<Vel>(a));
  EXPECT_TRUE(world.destroy(a));
  // Every accessor sees the stale handle, also after the slot is reused.
  const Entity c = world.create();
  EXPECT_EQ(c.index, a.index == 0 ? c.index : c.index);  // a slot was handed out
  EXPECT_EQ(world.get<Pos>(a), nullptr);
  EXPECT_FALSE(world.has<Pos>(a));
  EXPECT_EQ(world.add<Pos>(a, Pos{}), nullptr);
  EXPECT_FALSE(world.remove<Pos>(a));
  EXPECT_FALSE(world.destroy(a));
  EXPECT_EQ(world.get<Pos>(b)->x, 5);  // the swap-remove kept b's data
}

TEST(World, SlotReuseKeepsNewEntityClean) {
  World world(1);
  const Entity a = world.create();
  world.add<Pos>(a, Pos{7, 7});
  world.destroy(a);
  const Entity b = world.create();
  ASSERT_EQ(b.index, a.index);
  EXPECT_NE(b.generation, a.generation);
  EXPECT_EQ(world.get<Pos>(b), nullptr);  // components of a died with it
  EXPECT_TRUE(world.create().is_null());  // full
}

TEST(World, QueryVisitsExactlyTheMatchingEntities) {
  World world(1000);
  std::mt19937 rng(7);
  std::set<std::uint32_t> both;
  std::vector<Entity> all;
  for (int i = 0; i < 500; ++i) {
    const Entity e = world.create();
    all.push_back(e);
    const bool p = rng() % 2, v = rng() % 3 == 0;
    if (p) world.add<Pos>(e, Pos{float(i), 0});
    if (v) world.add<Vel>(e, Vel{1, float(i)});
    if (p && v) both.insert(e.index);
  }
  // Remove some and destroy some to shuffle the dense arrays.
  for (int i = 0; i < 500; i += 7) {
    if (world.remove<Vel>(all[i])) both.erase(all[i].index);
  }
  for (int i = 3; i < 500; i += 11) {
    world.destroy(all[i]);
    both.erase(all[i].index);
  }
  std::set<std::uint32_t> seen;
  world.query<const Pos, Vel>().each([&](Entity e, const Pos& p, Vel& v) {
    EXPECT_TRUE(world.alive(e));
    EXPECT_EQ(p.x, v.y);  // both components belong to the same entity
    EXPECT_TRUE(seen.insert(e.index).second);
  });
  EXPECT_EQ(seen, both);
  EXPECT_EQ((world.query<Pos, Vel>().count()), both.size());
}

TEST(World, QueryRangesCoverEverythingOnce) {
  World world(2000);
  for (int i = 0; i < 1500; ++i) {
    const Entity e = world.create();
    world.add<Pos>(e, Pos{});
    if (i % 2) world.add<Vel>(e, Vel{});
  }
  auto q = world.query<Pos, const Vel>();
  std::vector<int> visits(2000, 0);
  const std::uint32_t n = q.size();
  for (std::uint32_t b = 0; b < n; b += 97) {
    q.each_range(b, std::min(n, b + 97), [&](Entity e, Pos&, const Vel&) { ++visits[e.index]; });
  }
  for (int i = 0; i < 1500; ++i) EXPECT_EQ(visits[i], i % 2) << i;
}

TEST(World, QueryPairsTheRightComponentsWhetherStoragesAreAlignedOrNot) {
  // Components added together share dense order (the fast path); a remove + re-add moves one
  // entity to the end of one storage only, so some ranges are aligned and others are not.
  World world(3000);
  std::vector<Entity> all;
  for (int i = 0; i < 2000; ++i) {
    const Entity e = world.create();
    all.push_back(e);
    world.add<Pos>(e, Pos{float(e.index), 0});
    world.add<Vel>(e, Vel{0, float(e.index)});
  }
  for (int i = 1500; i < 2000; i += 37) {
    world.remove<Vel>(all[i]);
    world.add<Vel>(all[i], Vel{0, float(all[i].index)});
  }
  auto q = world.query<const Pos, const Vel>();
  for (std::uint32_t step : {1u, 64u, 999u, 5000u}) {
    std::vector<int> seen(3000, 0);
    for (std::uint32_t b = 0; b < q.size(); b += step) {
      q.each_range(b, std::min(q.size(), b + step), [&](Entity e, const Pos& p, const Vel& v) {
        EXPECT_EQ(p.x, float(e.index));
        EXPECT_EQ(v.y, float(e.index));
        ++seen[e.index];
      });
    }
    for (Entity e : all) EXPECT_EQ(seen[e.index], 1) << step;
  }
}

TEST(World, TrackedPairsKnowTheirCommonPrefixAndNeverServeAStaleOne) {
  World world(100);
  std::vector<Entity> e;
  for (int i = 0; i < 10; ++i) {
    e.push_back(world.create());
    world.add<Pos>(e.back(), Pos{float(e.back().index), 0});
    world.add<Vel>(e.back(), Vel{0, float(e.back().index)});
  }
  const ComponentStorageBase* p = world.storage<Pos>();
  const ComponentStorageBase* v = world.storage<Vel>();
  EXPECT_EQ(world.aligned_prefix(p, v), -1);  // not tracked
  world.track_order(type_id<Pos>(), type_id<Vel>());
  EXPECT_EQ(world.aligned_prefix(p, v), -1);  // tracked, not refreshed
  world.refresh_order();
  EXPECT_EQ(world.aligned_prefix(p, v), 10);
  world.remove<Vel>(e[3]);                    // Vel's slot 3 now holds e[9]; Pos's still e[3]
  EXPECT_EQ(world.aligned_prefix(v, p), -1);  // changed since the refresh: unknown
  // The query must pair by entity, not trust the stale prefix.
  world.query<const Pos, const Vel>().each([](Entity en, const Pos& a, const Vel& b) {
    EXPECT_EQ(a.x, float(en.index));
    EXPECT_EQ(b.y, float(en.index));
  });
  world.refresh_order();
  EXPECT_EQ(world.aligned_prefix(p, v), 3);
  world.add<Vel>(e[3], Vel{0, float(e[3].index)});
  world.refresh_order();
  EXPECT_EQ(world.aligned_prefix(p, v), 3);  // e[3] is last in Vel now
  std::uint32_t n = 0;
  world.query<const Pos, const Vel>().each([&](Entity en, const Pos& a, const Vel& b) {
    EXPECT_EQ(a.x, float(en.index));
    EXPECT_EQ(b.y, float(en.index));
    ++n;
  });
  EXPECT_EQ(n, 10u);
}

// flush_events(): a frame of one step, for a World without an Engine.
TEST(World, EventsAreReadOnceInTheNextFrame) {
  World world(4);
  world.events<Ping>();
  world.emit(Ping{1});
  world.emit(Ping{2});
  EXPECT_TRUE(world.read_events<Ping>().empty());  // not before the flush
  world.flush_events();
  ASSERT_EQ(world.read_events<Ping>().size(), 2u);
  EXPECT_EQ(world.read_events<Ping>()[1].id, 2u);
  world.flush_events();
  EXPECT_TRUE(world.read_events<Ping>().empty());  // gone after one frame
}

TEST(World, AStepReadsItsOwnDeliveryAndTheFrameReadsAllOfThem) {
  World world(4);
  world.events<Ping>(4);
  world.emit(Ping{1});  // by the game, before the frame
  world.begin_event_frame();
  world.begin_event_step();
  world.emit(Ping{2});  // during step 1: for step 2
  ASSERT_EQ(world.read_events<Ping>().size(), 1u);
  EXPECT_EQ(world.read_events<Ping>()[0].id, 1u);
  // Emitting beyond the reserve moves only the pending events, never what readers hold (a
  // stage may emit directly while another reads).
  const std::span<const Ping> held = world.read_events<Ping>();
  for (std::uint32_t i = 0; i < 64; ++i) world.emit(Ping{100 + i});
  EXPECT_EQ(held.data(), world.read_events<Ping>().data());
  world.end_event_step();
  world.begin_event_step();
  ASSERT_EQ(world.read_events<Ping>().size(), 65u);
  EXPECT_EQ(world.read_events<Ping>()[0].id, 2u);
  world.end_event_step();
  world.begin_event_step();
  EXPECT_TRUE(world.read_events<Ping>().empty());  // nothing pending
  world.end_event_step();
  // Outside a step: every delivery of the frame, in order.
  ASSERT_EQ(world.read_events<Ping>().size(), 66u);
  EXPECT_EQ(world.read_events<Ping>()[0].id, 1u);
  EXPECT_EQ(world.read_events<Ping>()[1].id, 2u);
  EXPECT_EQ(world.read_events<Ping>()[65].id, 163u);
  world.begin_event_frame();  // a frame without steps delivers nothing, and shows nothing again
  EXPECT_TRUE(world.read_events<Ping>().empty());
}

TEST(World, LifecycleEvents) {
  World world(4);
  world.events<EntityCreated>();
  world.events<EntityDestroyed>();
  const Entity e = world.create();
  world.destroy(e);
  world.flush_events();
  ASSERT_EQ(world.read_events<EntityCreated>().size(), 1u);
  EXPECT_EQ(world.read_events<EntityCreated>()[0].entity, e);
  ASSERT_EQ(world.read_events<EntityDestroyed>().size(), 1u);
}

TEST(World, ComponentMemoryIsBookedUnderCore) {
  const std::size_t before = mem_stats(MemTag::Core).reserved_bytes;
  {
    World world(1000);
    world.register_component<Pos>("pos");
    EXPECT_GE(mem_stats(MemTag::Core).reserved_bytes, before + 1000 * sizeof(Pos));
  }
  EXPECT_EQ(mem_stats(MemTag::Core).reserved_bytes, before);
}

TEST(World, ATypeRegisteredWithAReserveTakesRoomForThatManyAndGrowsPastIt) {
  World world(1000);
  const std::size_t before = mem_stats(MemTag::Core).reserved_bytes;
  ComponentStorage<Pos>& few = world.register_component<Pos>("pos", 2);
  // The entity -> slot table for all 1000, room for 2 components.
  EXPECT_EQ(mem_stats(MemTag::Core).reserved_bytes - before,
            1000 * sizeof(std::uint32_t) + 2 * (sizeof(Pos) + sizeof(std::uint32_t)));
  EXPECT_EQ(&world.register_component<Pos>("again", 500), &few);  // registered: kept as is
  std::vector<Entity> es;
  for (int i = 0; i < 5; ++i) {
    es.push_back(world.create());
    world.add<Pos>(es.back(), Pos{static_cast<float>(i), 0});
  }
  ASSERT_EQ(few.size(), 5u);  // past the reserve: grown, and every one readable
  for (int i = 0; i < 5; ++i) EXPECT_EQ(world.get<Pos>(es[i])->x, static_cast<float>(i));
  world.remove<Pos>(es[1]);
  EXPECT_EQ(few.size(), 4u);
  EXPECT_EQ(world.get<Pos>(es[4])->x, 4.0f);
  // 0, or more than the capacity: the world's capacity.
  const std::size_t before_vel = mem_stats(MemTag::Core).reserved_bytes;
  world.register_component<Vel>("vel", 5000);
  EXPECT_EQ(mem_stats(MemTag::Core).reserved_bytes - before_vel,
            1000 * sizeof(std::uint32_t) + 1000 * (sizeof(Vel) + sizeof(std::uint32_t)));
}

TEST(World, Resources) {
  World world(4);
  EXPECT_EQ(world.resource<Tag>(), nullptr);
  world.set_resource<Tag>(Tag{42});
  EXPECT_EQ(world.resource<Tag>()->value, 42u);
}

TEST(World, CommandsApplyInOriginOrderWhateverTheRecordingOrder) {
  World world(64);
  world.register_component<Tag>("tag");
  world.events<Ping>();
  world.commands().resize(3);
  // Three "workers" record out of order; origins say the order a serial loop would have had.
  world.commands().at(2).set_origin(20);
  world.commands().at(2).spawn(Tag{20});
  world.commands().at(2).emit(Ping{20});
  world.commands().at(0).set_origin(10);
  world.commands().at(0).spawn(Tag{10});
  world.commands().at(0).spawn(Tag{11});
  world.commands().at(1).set_origin(5);
  world.commands().at(1).emit(Ping{5});
  world.apply_commands();
  world.flush_events();
  std::vector<std::uint32_t> tags;
  for (std::uint32_t i = 0; i < world.capacity(); ++i) {
    const Entity e = world.entity_at(i);
    if (!e.is_null()) tags.push_back(world.get<Tag>(e)->value);
  }
  EXPECT_EQ(tags, (std::vector<std::uint32_t>{10, 11, 20}));  // created in origin order
  ASSERT_EQ(world.read_events<Ping>().size(), 2u);
  EXPECT_EQ(world.read_events<Ping>()[0].id, 5u);
  EXPECT_EQ(world.read_events<Ping>()[1].id, 20u);
  EXPECT_TRUE(world.commands().at(0).empty());
}

TEST(World, CommandsOnStaleEntitiesAreCountedNotApplied) {
  World world(8);
  world.register_component<Tag>("tag");
  const Entity e = world.create();
  CommandBuffer& cmd = world.commands().at(0);
  cmd.destroy(e);
  cmd.add(e, Tag{1});  // after the destroy: stale
  cmd.destroy(e);      // twice: stale
  world.apply_commands();
  EXPECT_FALSE(world.alive(e));
  EXPECT_EQ(world.command_stats().stale, 2u);
}

TEST(World, SpawnIntoFullWorldIsRefusedAndCounted) {
  World world(1);
  world.register_component<Tag>("tag");
  world.commands().at(0).spawn(Tag{1});
  world.commands().at(0).spawn(Tag{2});
  world.apply_commands();
  EXPECT_EQ(world.entity_count(), 1u);
  EXPECT_EQ(world.command_stats().create_failed, 1u);
  EXPECT_EQ(world.get<Tag>(world.entity_at(0))->value, 1u);
}

TEST(World, StateHashDependsOnStateNotHistory) {
  auto build = [](bool shuffled) {
    auto world = std::make_unique<World>(16);
    world->register_component<Pos>("pos");
    std::vector<Entity> e;
    for (int i = 0; i < 6; ++i) e.push_back(world->create());
    // Same final components, added in different orders (different dense layouts).
    std::vector<int> order = {0, 1, 2, 3, 4, 5};
    if (shuffled) order = {5, 3, 1, 0, 4, 2};
    for (int i : order) world->add<Pos>(e[i], Pos{float(i), float(i * 2)});
    return world;
  };
  auto a = build(false);
  auto b = build(true);
  EXPECT_EQ(a->state_hash(), b->state_hash());
  b->get<Pos>(b->entity_at(3))->y += 1e-3f;
  EXPECT_NE(a->state_hash(), b->state_hash());
}

struct Score {  // game state kept in a resource: opted into the hash by its bytes
  int points = 0;
  int lives = 3;
};
struct Settings {  // not opted in: a resource the hash ignores
  float volume = 1.0f;
};
struct Named {  // spindle_hash joins it by itself
  std::vector<int> values;
  friend std::uint64_t spindle_hash(const Named& n) {
    std::uint64_t h = 1469598103934665603ull;
    for (const int v : n.values) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return h;
  }
};

// Game state in resources (the score, the lives) is part of the state hash once it joins it, so
// a replay that diverged only there is caught; resources that did not join change nothing.
TEST(World, HashedResourcesJoinTheStateHash) {
  World a(4), b(4);
  for (World* w : {&a, &b}) {
    w->set_resource<Score>();
    w->set_resource<Settings>();
    w->hash_resource<Score>();
    w->hash_resource<Score>();  // twice is once
  }
  EXPECT_EQ(a.state_hash(), b.state_hash());
  b.resource<Settings>()->volume = 0.5f;
  EXPECT_EQ(a.state_hash(), b.state_hash()) << "Settings never joined";
  b.resource<Score>()->points = 10;
  EXPECT_NE(a.state_hash(), b.state_hash());
  a.resource<Score>()->points = 10;
  EXPECT_EQ(a.state_hash(), b.state_hash());

  // spindle_hash: joins when set, hashed through it (a vector's contents, not its pointer).
  a.set_resource<Named>(Named{{1, 2, 3}});
  b.set_resource<Named>(Named{{1, 2, 3}});
  EXPECT_EQ(a.state_hash(), b.state_hash());
  b.resource<Named>()->values.push_back(4);
  EXPECT_NE(a.state_hash(), b.state_hash());

  // A hashed resource that is not set hashes as absent, unlike a default one.
  World c(4), d(4);
  c.hash_resource<Score>();
  d.hash_resource<Score>();
  EXPECT_EQ(c.state_hash(), d.state_hash());
  d.set_resource<Score>();
  EXPECT_NE(c.state_hash(), d.state_hash());
}

TEST(World, ParallelRecordingAppliesDeterministically) {
  // The same spawns recorded from a parallel loop with different splits and modes give the
  // same world.
  auto run = [](jobs::Mode mode, std::size_t grain) {
    jobs::Config cfg;
    cfg.workers = 2;
    cfg.mode = mode;
    cfg.pin_workers = false;
    cfg.pin_main_thread = false;
    jobs::JobSystem js(cfg);
    World world(5000);
    world.register_component<Tag>("tag");
    world.commands().resize(js.participant_count());
    js.parallel_for_range(0, 1000, grain, [&](std::size_t b, std::size_t e) {
      CommandBuffer& cmd = world.commands().local(js);
      cmd.set_origin(b);
      for (std::size_t i = b; i < e; ++i) {
        if (i % 3 == 0) cmd.spawn(Tag{static_cast<std::uint32_t>(i)});
        if (i % 5 == 0) cmd.spawn(Tag{static_cast<std::uint32_t>(i + 100000)});
      }
    });
    world.apply_commands();
    return world.state_hash();
  };
  const std::uint64_t reference = run(jobs::Mode::Single, 1000);
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic}) {
    if (!jobs::mode_available(mode)) continue;
    for (std::size_t grain : {1, 7, 64, 333}) EXPECT_EQ(run(mode, grain), reference) << grain;
  }
}

}  // namespace
}  // namespace spindle::core
