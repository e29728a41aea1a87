// Radix sort against std::stable_sort (payloads expose stability), and the parallel form against
// the serial one for several chunk counts in every job mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <random>
#include <string_view>
#include <vector>

#include "modes.h"
#include "spindle/algorithms/radix_sort.h"

namespace spindle::core {
namespace {

struct Data {
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> values;  // input positions: equal keys must keep them ascending
};

Data make_data(std::vector<std::uint64_t> keys) {
  Data d{std::move(keys), {}};
  d.values.resize(d.keys.size());
  std::iota(d.values.begin(), d.values.end(), 0u);
  return d;
}

Data reference_sort(const Data& in) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> pairs;
  for (std::size_t i = 0; i < in.keys.size(); ++i) pairs.emplace_back(in.keys[i], in.values[i]);
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Data out;
  for (const auto& [k, v] : pairs) {
    out.keys.push_back(k);
    out.values.push_back(v);
  }
  return out;
}

Data serial_sort(Data d) {
  std::vector<std::uint64_t> kt(d.keys.size());
  std::vector<std::uint32_t> vt(d.keys.size());
  EXPECT_TRUE(radix_sort(d.keys, d.values, kt, vt));
  return d;
}

// Random keys drawn from `distinct` values spread over all 64 bits, so many are duplicates.
std::vector<std::uint64_t> random_keys(std::size_t n, std::size_t distinct, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> pool(distinct);
  for (auto& k : pool) k = rng();
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = pool[rng() % distinct];
  return keys;
}

// Keys below `limit`, duplicates among them.
std::vector<std::uint64_t> bounded_keys(std::size_t n, std::uint64_t limit, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = rng() % limit;
  return keys;
}

// Three keys in four share their top byte (a crowd in one corner of a grid).
std::vector<std::uint64_t> skewed_keys(std::size_t n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = rng() % 4 != 0 ? rng() % 256 : rng() % (1u << 20);
  return keys;
}

void expect_same(const Data& a, const Data& b) {
  ASSERT_EQ(a.keys.size(), b.keys.size());
  EXPECT_TRUE(a.keys == b.keys);
  EXPECT_TRUE(a.values == b.values);
}

TEST(RadixSort, MatchesStableSortOnRandomKeysWithDuplicates) {
  for (std::size_t n : {0u, 1u, 2u, 17u, 1000u, 20000u}) {
    const Data in = make_data(random_keys(n, std::max<std::size_t>(n / 8, 1), 7 + n));
    expect_same(serial_sort(in), reference_sort(in));
  }
}

TEST(RadixSort, AllEqualKeysKeepTheirOrder) {
  const Data in = make_data(std::vector<std::uint64_t>(5000, 0x0123456789abcdefull));
  const Data out = serial_sort(in);
  expect_same(out, in);
}

TEST(RadixSort, KeysDifferingOnlyInTheTopByte) {
  std::mt19937 rng(3);
  std::vector<std::uint64_t> keys(5000);
  for (auto& k : keys) k = (std::uint64_t{rng() % 256} << 56) | 0x00ffee0011223344ull;
  const Data in = make_data(keys);
  expect_same(serial_sort(in), reference_sort(in));
}

TEST(RadixSort, KeysDifferingOnlyInTheBottomByte) {
  std::mt19937 rng(4);
  std::vector<std::uint64_t> keys(5000);
  for (auto& k : keys) k = 0xab00000000000000ull | (rng() % 256);
  const Data in = make_data(keys);
  expect_same(serial_sort(in), reference_sort(in));
}

TEST(RadixSort, RejectsMismatchedSizes) {
  std::vector<std::uint64_t> keys{3, 1, 2}, small_kt(2), kt(3);
  std::vector<std::uint32_t> values{0, 1, 2}, vt(3), short_values(2);
  EXPECT_FALSE(radix_sort(keys, values, small_kt, vt));    // key scratch too small
  EXPECT_FALSE(radix_sort(keys, short_values, kt, vt));    // values shorter than keys
  EXPECT_EQ(keys, (std::vector<std::uint64_t>{3, 1, 2}));  // untouched
  EXPECT_TRUE(radix_sort(keys, values, kt, vt));
  EXPECT_EQ(keys, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(values, (std::vector<std::uint32_t>{1, 2, 0}));
}

class ParallelRadixSort : public ::testing::TestWithParam<jobs::Mode> {};

TEST_P(ParallelRadixSort, IdenticalToSerialForAnyChunkCount) {
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(spindle::test::job_config(GetParam()));
  RadixSortScratch scratch(64);
  const std::vector<Data> inputs = {
      make_data(random_keys(30000, 3000, 11)), make_data(random_keys(3000, 3000, 12)),
      make_data(std::vector<std::uint64_t>(1000, 42)), make_data(random_keys(5, 2, 13)),
      // The paths of the parallel sort (sort_chunks()), each ending in keys or in a copy:
      make_data(bounded_keys(30000, 1u << 12, 14)),  // 2 bytes vary, 16 big buckets: by bucket
      make_data(bounded_keys(30000, 1u << 20, 15)),  // 3 bytes, 16 big buckets: 2 passes each
      make_data(bounded_keys(30000, 1u << 24, 16)),  // 3 bytes, small buckets: 3 passes a group
      make_data(bounded_keys(30000, 1u << 16, 17)),  // 2 bytes, small buckets: whole array
      make_data(skewed_keys(30000, 18)),             // most keys in one bucket: whole array
  };
  for (const Data& in : inputs) {
    const Data expected = serial_sort(in);
    expect_same(expected, reference_sort(in));
    for (std::uint32_t chunks : {1u, 2u, 3u, 7u, 64u, 1000u}) {  // 1000: clamped to 64
      Data d = in;
      std::vector<std::uint64_t> kt(d.keys.size());
      std::vector<std::uint32_t> vt(d.keys.size());
      ASSERT_TRUE(radix_sort(js, chunks, scratch, d.keys, d.values, kt, vt, 3));
      SCOPED_TRACE(testing::Message() << "n=" << in.keys.size() << " chunks=" << chunks);
      expect_same(d, expected);
    }
  }
}

// Which path sorted: the groups' jobs ("radix_groups") or the passes over the whole array
// ("radix_scatter" after the first). Keeps the inputs above covering both.
TEST(ParallelRadixSortPaths, GroupsWhereBucketsAreEvenAndPassesWhereOneHoldsMost) {
  SPINDLE_REQUIRE_MODE(jobs::Mode::Dynamic);
  jobs::JobSystem js(spindle::test::job_config(jobs::Mode::Dynamic));
  struct Seen {
    std::atomic<int> groups{0}, scatters{0};
  } seen;
  js.set_hooks({&seen,
                [](void* user, const jobs::JobDesc& desc, std::uint32_t) {
                  auto& s = *static_cast<Seen*>(user);
                  if (std::string_view(desc.name) == "radix_groups") ++s.groups;
                  if (std::string_view(desc.name) == "radix_scatter") ++s.scatters;
                },
                nullptr});
  RadixSortScratch scratch(8);
  auto sort_with_8_chunks = [&](Data d) {
    seen.groups = 0;
    seen.scatters = 0;
    std::vector<std::uint64_t> kt(d.keys.size());
    std::vector<std::uint32_t> vt(d.keys.size());
    EXPECT_TRUE(radix_sort(js, 8, scratch, d.keys, d.values, kt, vt));
    return d;
  };
  const Data wide = make_data(random_keys(30000, 3000, 21));
  expect_same(sort_with_8_chunks(wide), reference_sort(wide));
  EXPECT_EQ(seen.groups.load(), 8);
  EXPECT_EQ(seen.scatters.load(), 8);  // the top byte's only
  const Data skewed = make_data(skewed_keys(30000, 22));
  expect_same(sort_with_8_chunks(skewed), reference_sort(skewed));
  EXPECT_EQ(seen.groups.load(), 0);
  EXPECT_EQ(seen.scatters.load(), 3 * 8);  // three varying bytes, a pass each
}

INSTANTIATE_TEST_SUITE_P(Modes, ParallelRadixSort, ::testing::ValuesIn(spindle::test::own_modes()),
                         spindle::test::mode_name);

}  // namespace
}  // namespace spindle::core
