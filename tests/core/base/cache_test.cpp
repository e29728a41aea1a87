// ResourceCache (spindle/base/cache.h): a fixed footprint filled past its size evicts the least
// recently used unlocked entry, locked entries stay, all entries locked is the panic mode
// (nullptr, counted, logged once) and ends when one is unlocked, failed loads cache nothing, and
// the index finds every resident key after any sequence of loads and evictions.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <span>

#include <spindle/base/budget.h>
#include <spindle/base/cache.h>

namespace spindle::core {
namespace {

// A loader that writes the key's bytes and counts its calls.
struct Loader {
  int calls = 0;
  std::size_t operator()(std::uint64_t key, std::span<std::byte> out) {
    ++calls;
    std::memcpy(out.data(), &key, sizeof key);
    return sizeof key;
  }
};

std::uint64_t value_of(const CacheEntry* e) {
  std::uint64_t v = 0;
  std::memcpy(&v, e->bytes().data(), sizeof v);
  return v;
}

TEST(ResourceCache, FilledPastItsSizeItEvictsTheLeastRecentlyUsed) {
  ResourceCache cache({.name = "meshes", .slots = 4, .slot_bytes = 64, .panic_mode = "skip"});
  Loader loader;
  const auto load = [&](std::uint64_t key) {
    return cache.touch(key, [&](std::span<std::byte> out) { return loader(key, out); });
  };
  for (std::uint64_t k = 1; k <= 4; ++k) ASSERT_EQ(value_of(load(k)), k);
  EXPECT_EQ(loader.calls, 4);
  EXPECT_EQ(cache.stats().resident, 4u);
  ASSERT_NE(load(1), nullptr);  // a hit: 1 is now the most recent
  EXPECT_EQ(loader.calls, 4);
  ASSERT_EQ(value_of(load(5)), 5u);  // past the size: evicts 2, the least recently used
  EXPECT_EQ(cache.find(2), nullptr);
  EXPECT_NE(cache.find(1), nullptr);
  EXPECT_EQ(cache.stats().evictions, 1u);
  ASSERT_EQ(value_of(load(6)), 6u);  // then 3
  EXPECT_EQ(cache.find(3), nullptr);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 6u);
  EXPECT_EQ(cache.stats().resident, 4u);
  EXPECT_EQ(cache.stats().panics, 0u);
}

TEST(ResourceCache, LockedEntriesStayAndAllLockedIsThePanicMode) {
  ResourceCache cache(
      {.name = "textures", .slots = 3, .slot_bytes = 16, .panic_mode = "the object is drawn flat"});
  Loader loader;
  CacheEntry* locked[3];
  for (std::uint64_t k = 0; k < 3; ++k) {
    locked[k] = cache.lock(k + 10, [&](std::span<std::byte> out) { return loader(k + 10, out); });
    ASSERT_NE(locked[k], nullptr);
  }
  EXPECT_EQ(cache.stats().locked, 3u);
  // Every entry locked: nothing can load; a resident key still hits.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(cache.touch(99, [&](std::span<std::byte> out) { return loader(99, out); }), nullptr);
  EXPECT_EQ(cache.stats().panics, 3u);
  EXPECT_EQ(loader.calls, 3);
  EXPECT_EQ(cache.touch(11, [&](std::span<std::byte> out) { return loader(11, out); }), locked[1]);
  // A second lock of the same entry needs two unlocks.
  EXPECT_EQ(cache.lock(12, [&](std::span<std::byte> out) { return loader(12, out); }), locked[2]);
  cache.unlock(locked[2]);
  EXPECT_EQ(cache.touch(99, [&](std::span<std::byte> out) { return loader(99, out); }), nullptr);
  cache.unlock(locked[0]);  // entry of 10 free again: 99 replaces it, 11 and 12 stay
  const CacheEntry* e = cache.touch(99, [&](std::span<std::byte> out) { return loader(99, out); });
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(value_of(e), 99u);
  EXPECT_EQ(cache.find(10), nullptr);
  EXPECT_NE(cache.find(11), nullptr);
  EXPECT_NE(cache.find(12), nullptr);
  EXPECT_EQ(cache.stats().locked, 2u);
}

TEST(ResourceCache, AFailedLoadCachesNothing) {
  ResourceCache cache({.name = "sounds", .slots = 2, .slot_bytes = 32});
  EXPECT_EQ(cache.touch(7, [](std::span<std::byte>) { return std::size_t{0}; }), nullptr);
  EXPECT_EQ(cache.touch(7, [](std::span<std::byte> out) { return out.size() + 1; }), nullptr);
  EXPECT_EQ(cache.stats().load_failures, 2u);
  EXPECT_EQ(cache.find(7), nullptr);
  EXPECT_EQ(cache.stats().resident, 0u);
  EXPECT_NE(cache.touch(7, [](std::span<std::byte> out) { return out.size(); }), nullptr);
}

TEST(ResourceCache, ItsMemoryComesFromAnArenaOrTheCacheHoldsNothing) {
  MemoryBudget budget(64 * 1024);
  BudgetArena& arena = budget.add_arena("render", 8 * 1024, "none");
  ResourceCache fits({.name = "a", .slots = 4, .slot_bytes = 1024}, &arena);
  EXPECT_EQ(fits.capacity(), 4u);
  EXPECT_GE(arena.high_water(), 4096u);
  EXPECT_EQ(arena.high_water(), fits.footprint());
  ResourceCache too_big({.name = "b", .slots = 8, .slot_bytes = 1024}, &arena);
  EXPECT_EQ(too_big.capacity(), 0u);
  EXPECT_EQ(arena.refusals(), 1u);
  EXPECT_EQ(too_big.touch(1, [](std::span<std::byte> out) { return out.size(); }), nullptr);
  EXPECT_EQ(too_big.stats().panics, 1u);  // no entry at all: the panic mode, not a crash
}

TEST(ResourceCache, TheIndexFindsEveryResidentKeyThroughManyEvictions) {
  ResourceCache cache({.name = "clips", .slots = 37, .slot_bytes = 8});
  std::mt19937_64 rng(3);
  std::map<std::uint64_t, std::uint64_t> last_use;  // the model: key -> when last used
  std::uint64_t now = 0;
  for (int i = 0; i < 20000; ++i) {
    // Keys that collide often in a 128-position index, and a few locked at times.
    const std::uint64_t key = (rng() % 90) * 128;
    ++now;
    const bool lock = rng() % 16 == 0;
    CacheEntry* e = lock ? cache.lock(key,
                                      [&](std::span<std::byte> out) {
                                        std::memcpy(out.data(), &key, 8);
                                        return std::size_t{8};
                                      })
                         : cache.touch(key, [&](std::span<std::byte> out) {
                             std::memcpy(out.data(), &key, 8);
                             return std::size_t{8};
                           });
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(value_of(e), key);
    if (lock) cache.unlock(e);
    if (last_use.size() == 37 && last_use.count(key) == 0) {
      // The model evicts its least recently used key, as the cache must have.
      auto oldest = last_use.begin();
      for (auto it = last_use.begin(); it != last_use.end(); ++it)
        if (it->second < oldest->second) oldest = it;
      last_use.erase(oldest);
    }
    last_use[key] = now;
    ASSERT_EQ(cache.stats().resident, last_use.size());
  }
  for (std::uint64_t k = 0; k < 90; ++k)
    EXPECT_EQ(cache.find(k * 128) != nullptr, last_use.count(k * 128) == 1) << k;
  cache.clear();
  EXPECT_EQ(cache.stats().resident, 0u);
  for (std::uint64_t k = 0; k < 90; ++k) EXPECT_EQ(cache.find(k * 128), nullptr);
}

}  // namespace
}  // namespace spindle::core
