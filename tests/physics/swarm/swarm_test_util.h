// Helpers shared by the swarm tests: job systems in every mode this build has, random agents
// (uniform, clustered, with duplicates), and a hash of everything a swarm frame outputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "modes.h"
#include "spindle/jobs/job_system.h"
#include "spindle/physics/swarm.h"

namespace spindle::swarm::test {

using ::spindle::test::mode_name;
using ::spindle::test::own_modes;
inline jobs::Config config_for(jobs::Mode mode, std::uint32_t workers = 2) {
  return ::spindle::test::job_config(mode, workers);
}

// One single-mode job system for the whole suite, for tests of one mode's results.
inline jobs::JobSystem& single_jobs() {
  static jobs::JobSystem js(config_for(jobs::Mode::Single, 1));
  return js;
}

struct Agents {
  std::vector<float> x, y, vx, vy, radius, half_height;
  AgentSpans<float> spans() const { return {x, y, vx, vy, radius, half_height}; }
  std::size_t size() const { return x.size(); }
};

// n agents in [lo, hi)^2: `clustered` puts most of them in a few tight blobs (some exactly on
// top of each other), so cells overflow the neighbour and candidate caps.
inline Agents random_agents(std::size_t n, float lo, float hi, std::uint32_t seed, bool clustered) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(lo, hi);
  std::uniform_real_distribution<float> vel(-1.0f, 1.0f);
  std::uniform_real_distribution<float> rad(0.1f, 0.45f);
  std::normal_distribution<float> blob(0.0f, 0.3f);
  Agents a;
  float cx[4], cy[4];
  for (int b = 0; b < 4; ++b) {
    cx[b] = pos(rng);
    cy[b] = pos(rng);
  }
  for (std::size_t i = 0; i < n; ++i) {
    float x = pos(rng), y = pos(rng);
    if (clustered && rng() % 4 != 0) {
      const std::uint32_t b = rng() % 4;
      x = std::clamp(cx[b] + blob(rng), lo, std::nextafter(hi, lo));
      y = std::clamp(cy[b] + blob(rng), lo, std::nextafter(hi, lo));
      if (rng() % 16 == 0 && i > 0) {  // an exact duplicate of the previous agent
        x = a.x.back();
        y = a.y.back();
      }
    }
    a.x.push_back(x);
    a.y.push_back(y);
    a.vx.push_back(vel(rng));
    a.vy.push_back(vel(rng));
    a.radius.push_back(rad(rng));
  }
  return a;
}

inline std::uint64_t fnv(std::uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
template <class T>
std::uint64_t fnv(std::uint64_t h, std::span<const T> s) {
  return fnv(h, s.data(), s.size_bytes());
}

// Every output of a frame, bit for bit: order, rank, snapshot, neighbours, pushes, flock sums,
// stats.
template <class S>
std::uint64_t frame_hash(const Swarm<S>& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, s.order());
  h = fnv(h, s.rank());
  h = fnv(h, s.x());
  h = fnv(h, s.y());
  h = fnv(h, s.push_x());
  h = fnv(h, s.push_y());
  for (std::uint32_t k = 0; k < s.count(); ++k) {
    h = fnv(h, s.neighbours(k));
    const FlockSums<S> f = s.flock(k);
    const S sums[] = {f.separation_x, f.separation_y, f.velocity_x,
                      f.velocity_y,   f.offset_x,     f.offset_y};
    h = fnv(h, sums, sizeof sums);
    h = fnv(h, &f.count, sizeof f.count);
  }
  const Stats st = s.stats();
  return fnv(h, &st, sizeof st);
}

// Two swarms built from the same agents, one per CellOrder (or any two configurations that must
// agree): every agent, by its own index, has the same neighbours (as agent indices, in the same
// order), pushes and flock sums, bit for bit. Sorted positions differ; what they refer to does
// not.
template <class S>
void expect_same_per_agent(const Swarm<S>& a, const Swarm<S>& b) {
  ASSERT_EQ(a.count(), b.count());
  std::vector<std::uint32_t> na, nb;
  for (std::uint32_t agent = 0; agent < a.count(); ++agent) {
    const std::uint32_t ka = a.rank()[agent], kb = b.rank()[agent];
    na.clear();
    nb.clear();
    for (const std::uint32_t j : a.neighbours(ka)) na.push_back(a.order()[j]);
    for (const std::uint32_t j : b.neighbours(kb)) nb.push_back(b.order()[j]);
    ASSERT_EQ(na, nb) << "agent " << agent;
    ASSERT_EQ(a.push_x()[ka], b.push_x()[kb]) << "agent " << agent;
    ASSERT_EQ(a.push_y()[ka], b.push_y()[kb]) << "agent " << agent;
    const FlockSums<S> fa = a.flock(ka), fb = b.flock(kb);
    ASSERT_EQ(fa.separation_x, fb.separation_x) << "agent " << agent;
    ASSERT_EQ(fa.separation_y, fb.separation_y) << "agent " << agent;
    ASSERT_EQ(fa.offset_x, fb.offset_x) << "agent " << agent;
    ASSERT_EQ(fa.velocity_y, fb.velocity_y) << "agent " << agent;
  }
  EXPECT_EQ(a.stats().neighbour_capped, b.stats().neighbour_capped);
  EXPECT_EQ(a.stats().max_scanned, b.stats().max_scanned);
}

}  // namespace spindle::swarm::test
