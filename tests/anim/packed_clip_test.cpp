// Packed clips (PackedClip) and the clip bank (ClipBank): a packed clip samples to the bits of the
// compressed clip it came from, wherever its bytes lie; open() refuses truncated, damaged and
// hostile bytes by name; the bank filled past its slots goes into its panic mode, evicts the least
// recently used clip, and a slot reloaded with another clip is never sampled with stale cursors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <spindle/anim/clip_bank.h>
#include <spindle/anim/packed_clip.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/base/budget.h>

#include "walk_like_clip.h"

namespace spindle::anim::packed_clip_test {
namespace {

// Packed bytes in 4-byte aligned storage, as a ROM image or a file read whole would hold them.
struct Packed {
  std::vector<std::uint32_t> words;
  std::size_t size = 0;

  explicit Packed(const Clip& compressed) {
    size = PackedClip::size_of(compressed);
    words.assign((size + 3) / 4, 0);
    core::Result<std::size_t> r = PackedClip::pack(compressed, bytes());
    EXPECT_TRUE(r) << r.message();
    EXPECT_EQ(r ? r.value() : 0, size);
  }
  std::span<std::byte> bytes() { return std::as_writable_bytes(std::span(words)).first(size); }
  std::span<const std::byte> bytes() const { return std::as_bytes(std::span(words)).first(size); }
  // Writes `value` at `offset`, then the checksum that makes the damage pass it.
  template <class T>
  void patch(std::size_t offset, T value) {
    std::memcpy(bytes().data() + offset, &value, sizeof value);
    const std::uint64_t sum = PackedClip::checksum(bytes());
    const auto lo = static_cast<std::uint32_t>(sum), hi = static_cast<std::uint32_t>(sum >> 32);
    std::memcpy(bytes().data() + 8, &lo, 4);
    std::memcpy(bytes().data() + 12, &hi, 4);
  }
  template <class T>
  T read(std::size_t offset) const {
    T value;
    std::memcpy(&value, bytes().data() + offset, sizeof value);
    return value;
  }
};

struct Clips {
  Character character;
  Character other;  // the same skeleton size, other motion
  Clip walk, idle, walk_like, other_walk;
  Clip wide;  // 100 joints and irregular key times: 16-bit stream indices
};

const Clips& clips() {
  static const Clips c = [] {
    Clips out{make_character({.seed = 3}).value(),
              make_character({.seed = 8}).value(),
              {},
              {},
              {},
              {},
              {}};
    out.walk = out.character.walk.compressed().value();
    out.idle = out.character.idle.compressed().value();
    out.walk_like = test::make_walk_like_clip(out.character.skeleton).compressed().value();
    out.other_walk = out.other.walk.compressed().value();
    out.wide = make_character({.seed = 4, .joint_count = 100, .min_keys = 40})
                   .value()
                   .idle.compressed()
                   .value();
    return out;
  }();
  return c;
}

using Pose = std::vector<JointTransform>;

Pose sample(SamplingJob job, int joints) {
  Pose pose(static_cast<std::size_t>(joints));
  job.output = pose;
  const core::Status s = job.run();
  EXPECT_TRUE(s) << s.message();
  return pose;
}
Pose sample(const Clip& clip, float t, SamplingCache& cache) {
  return sample({.clip = &clip, .time = t, .cache = &cache}, clip.joint_count());
}
Pose sample(const PackedClip& clip, float t, SamplingCache& cache) {
  return sample({.packed = &clip, .time = t, .cache = &cache}, clip.joint_count());
}
Pose sample_fresh(const Clip& clip, float t) {
  SamplingCache cache(clip.joint_count());
  return sample(clip, t, cache);
}

bool same_bits(const Pose& a, const Pose& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

// Forward playback, then backwards, jumps and times outside the clip.
std::vector<float> playback(float duration) {
  std::vector<float> times;
  for (int f = 0; f <= 90; ++f) times.push_back(duration * static_cast<float>(f) / 90.0f);
  for (float t : {0.7f, 0.2f, 0.95f, 0.05f, -1.0f, 2.0f, 0.5f, 0.51f})
    times.push_back(duration * t);
  return times;
}

TEST(PackedClip, SamplesToTheBitsOfTheCompressedClip) {
  for (const Clip* clip : {&clips().walk, &clips().idle, &clips().walk_like, &clips().wide}) {
    SCOPED_TRACE(clip->name());
    const Packed packed(*clip);
    core::Result<PackedClip> p = PackedClip::open(packed.bytes());
    ASSERT_TRUE(p) << p.message();
    EXPECT_EQ(p.value().name(), clip->name());
    EXPECT_EQ(p.value().duration(), clip->duration());
    EXPECT_EQ(p.value().joint_count(), clip->joint_count());
    EXPECT_EQ(p.value().error_bound().rotation, clip->error_bound().rotation);
    EXPECT_EQ(p.value().error_bound().translation, clip->error_bound().translation);
    EXPECT_EQ(p.value().bytes().size(), packed.size);
    EXPECT_EQ(p.value().id(), PackedClip::checksum(packed.bytes()));
    // The packed form costs the compressed clip's tables and a 96-byte header, no more.
    EXPECT_LT(packed.size, clip->memory_bytes() + 96);
    SamplingCache from_clip(clip->joint_count()), from_bytes(clip->joint_count());
    for (float t : playback(clip->duration())) {
      const Pose a = sample(*clip, t, from_clip), b = sample(p.value(), t, from_bytes);
      ASSERT_TRUE(same_bits(a, b)) << "t=" << t;
    }
    // Forward playback decodes each key once, as the clip's own tables do.
    EXPECT_EQ(from_clip.decoded_keys(), from_bytes.decoded_keys());
    EXPECT_EQ(from_clip.searches(), from_bytes.searches());
  }
}

TEST(PackedClip, AByteCopyIsTheSameClip) {
  const Packed packed(clips().walk);
  std::vector<std::uint32_t> copy(packed.words);
  const PackedClip a = PackedClip::open(packed.bytes()).value();
  const PackedClip b = PackedClip::open(std::as_bytes(std::span(copy)).first(packed.size)).value();
  EXPECT_EQ(a.id(), b.id());
  EXPECT_NE(a.bytes().data(), b.bytes().data());
  SamplingCache ca(a.joint_count()), cb(b.joint_count());
  for (float t : playback(a.duration())) ASSERT_TRUE(same_bits(sample(a, t, ca), sample(b, t, cb)));
  // Padding after the clip (a ROM's alignment) is ignored.
  copy.push_back(0xdeadbeef);
  EXPECT_TRUE(PackedClip::open(std::as_bytes(std::span(copy))));
}

TEST(PackedClip, RefusesEveryTruncation) {
  const Packed packed(clips().walk);
  for (std::size_t n = 0; n < packed.size; n += n < 128 ? 1 : 61) {
    core::Result<PackedClip> p = PackedClip::open(packed.bytes().first(n));
    ASSERT_FALSE(p) << n << " bytes";
    const std::string& m = p.message();
    EXPECT_EQ(m.rfind("packed clip", 0), 0u) << m;
    EXPECT_TRUE(m.find("truncated") != std::string::npos || m.find("shorter") != std::string::npos)
        << m;
  }
}

TEST(PackedClip, RefusesDamageByName) {
  const Packed good(clips().walk);
  const auto refused = [](const Packed& p, const char* what) {
    core::Result<PackedClip> r = PackedClip::open(p.bytes());
    EXPECT_FALSE(r) << what;
    if (r) return;
    EXPECT_NE(r.message().find(what), std::string::npos) << r.message();
  };
  {
    Packed p = good;  // any changed byte: the checksum
    p.bytes()[good.size / 2] ^= std::byte{0x10};
    refused(p, "checksum mismatch");
  }
  {
    Packed p = good;
    p.bytes()[0] = std::byte{'X'};
    refused(p, "magic");
  }
  {
    Packed p = good;
    p.patch<std::uint16_t>(4, 7);
    refused(p, "version 7");
  }
  // A shifted start is refused as misaligned, not read unaligned.
  std::vector<std::uint32_t> shifted(good.words.size() + 1);
  std::memcpy(reinterpret_cast<std::byte*>(shifted.data()) + 1, good.bytes().data(), good.size);
  core::Result<PackedClip> r =
      PackedClip::open(std::as_bytes(std::span(shifted)).subspan(1, good.size));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("aligned"), std::string::npos) << r.message();
}

TEST(PackedClip, RefusesHostileTablesEvenWithAValidChecksum) {
  const Packed good(clips().walk_like);
  const auto joints = good.read<std::uint32_t>(20), keys = good.read<std::uint32_t>(28),
             times = good.read<std::uint32_t>(32);
  const std::size_t tracks = 3 * joints, ranges = 2 * joints;
  const std::size_t times_at = 96, consumed_at = times_at + 4 * times,
                    origin_at = consumed_at + 4 * times, values_at = origin_at + 24 * ranges;
  // 8-bit indices (at most 256 tracks and key times): tracks, then times.
  ASSERT_EQ(good.read<std::uint16_t>(6), 0);
  const std::size_t tracks_at = values_at + 6 * keys, time_indices_at = tracks_at + keys;
  struct Case {
    const char* what;
    std::function<void(Packed&)> damage;
  };
  const Case cases[] = {
      {"0 joints", [](Packed& p) { p.patch<std::uint32_t>(20, 0); }},
      {"packed clip '?alk_like': 0 joints",  // a control byte in the name is not echoed
       [](Packed& p) {
         p.patch<char>(64, '\x1b');
         p.patch<std::uint32_t>(20, 0);
       }},
      {"its counts need",
       [](Packed& p) { p.patch<std::uint32_t>(32, p.read<std::uint32_t>(32) - 1); }},
      {"duration", [](Packed& p) { p.patch<float>(24, NAN); }},
      {"unknown flags", [](Packed& p) { p.patch<std::uint16_t>(6, 8); }},
      {"not terminated", [](Packed& p) { p.patch<char>(95, 'x'); }},
      {"key time 1", [&](Packed& p) { p.patch<float>(times_at + 4, -1.0f); }},
      {"seek table entry 0", [&](Packed& p) { p.patch<std::uint32_t>(consumed_at, keys + 1); }},
      {"the range of vec3 track 3", [&](Packed& p) { p.patch<float>(origin_at + 36, INFINITY); }},
      {"stream key 7 has track 200",
       [&](Packed& p) { p.patch<std::uint8_t>(tracks_at + 7, std::uint8_t{200}); }},
      {"expected 3", [&](Packed& p) { p.patch<std::uint8_t>(tracks_at + 7, std::uint8_t{2}); }},
      {"has time index 255",
       [&](Packed& p) { p.patch<std::uint8_t>(time_indices_at + keys - 1, std::uint8_t{255}); }},
  };
  ASSERT_LT(tracks, 200u);
  ASSERT_LT(times, 255u);
  for (const Case& c : cases) {
    Packed p = good;
    c.damage(p);
    core::Result<PackedClip> r = PackedClip::open(p.bytes());
    ASSERT_FALSE(r) << c.what;
    EXPECT_NE(r.message().find(c.what), std::string::npos) << r.message();
    EXPECT_EQ(r.message().rfind("packed clip", 0), 0u) << r.message();
  }
}

TEST(PackedClip, PackRefusesWhatItCannotWrite) {
  const Clip& walk = clips().walk;
  std::vector<std::uint32_t> words(PackedClip::size_of(walk) / 4 + 1);
  const std::span<std::byte> out = std::as_writable_bytes(std::span(words));
  EXPECT_EQ(PackedClip::size_of(clips().character.walk), 0u);
  core::Result<std::size_t> r = PackedClip::pack(clips().character.walk, out);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("not a compressed() clip"), std::string::npos) << r.message();
  r = PackedClip::pack(walk, out.first(PackedClip::size_of(walk) - 4));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("needs " + std::to_string(PackedClip::size_of(walk))),
            std::string::npos)
      << r.message();
  r = PackedClip::pack(walk, out.subspan(2));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("aligned"), std::string::npos) << r.message();
}

TEST(PackedClip, SamplingJobRefusesAmbiguousOrEmptyClips) {
  const Packed packed(clips().walk);
  const PackedClip p = PackedClip::open(packed.bytes()).value();
  Pose pose(static_cast<std::size_t>(p.joint_count()));
  SamplingCache cache(p.joint_count());
  core::Status s =
      SamplingJob{.clip = &clips().walk, .packed = &p, .cache = &cache, .output = pose}.run();
  EXPECT_NE(s.message().find("both"), std::string::npos) << s.message();
  const PackedClip empty;
  s = SamplingJob{.packed = &empty, .cache = &cache, .output = pose}.run();
  EXPECT_NE(s.message().find("empty"), std::string::npos) << s.message();
  SamplingCache small(p.joint_count(), CacheFor::UncompressedClips);
  s = SamplingJob{.packed = &p, .cache = &small, .output = pose}.run();
  EXPECT_NE(s.message().find("UncompressedClips"), std::string::npos) << s.message();
}

// The bank's clips: four of the same skeleton size, and their packed bytes (the "ROM").
struct Rom {
  std::vector<Packed> packed;
  std::vector<const Clip*> clip;
  Rom() {
    for (const Clip* c : {&clips().walk, &clips().idle, &clips().walk_like, &clips().other_walk}) {
      packed.emplace_back(*c);
      clip.push_back(c);
    }
  }
};

TEST(ClipBank, FilledPastItsSlotsItPanicsThenEvictsTheLeastRecentlyUsed) {
  Rom rom;
  ClipBank bank({.slots = 3, .slot_bytes = 48u << 10});
  std::vector<BankedClipId> ids;
  for (const Packed& p : rom.packed) {
    core::Result<BankedClipId> id = bank.add(p.bytes());
    ASSERT_TRUE(id) << id.message();
    ids.push_back(id.value());
  }
  EXPECT_EQ(bank.clip_count(), 4u);
  const int joints = rom.clip[0]->joint_count();
  SamplingCache cache(joints);
  // Three characters lock three clips: every slot is held.
  for (int i = 0; i < 3; ++i) {
    const PackedClip* c = bank.lock(ids[i]);
    ASSERT_NE(c, nullptr);
    EXPECT_NE(c->bytes().data(), rom.packed[i].bytes().data());  // a copy, in a slot
    cache.invalidate();
    EXPECT_TRUE(same_bits(sample(*c, 0.4f, cache), sample_fresh(*rom.clip[i], 0.4f)));
  }
  EXPECT_EQ(bank.stats().locked, 3u);
  // The fourth finds no slot: the panic mode, counted each time.
  EXPECT_EQ(bank.lock(ids[3]), nullptr);
  EXPECT_EQ(bank.touch(ids[3]), nullptr);
  EXPECT_EQ(bank.stats().panics, 2u);
  EXPECT_EQ(bank.stats().evictions, 0u);
  // A clip locked twice stays locked until both unlock.
  ASSERT_NE(bank.lock(ids[1]), nullptr);
  bank.unlock(ids[1]);
  EXPECT_EQ(bank.lock(ids[3]), nullptr);
  bank.unlock(ids[1]);
  // Now clip 1 is free, and the least recently used: the fourth takes its slot.
  const PackedClip* fourth = bank.lock(ids[3]);
  ASSERT_NE(fourth, nullptr);
  EXPECT_EQ(bank.stats().evictions, 1u);
  EXPECT_EQ(bank.cache().find(static_cast<std::uint64_t>(ids[1])), nullptr);
  EXPECT_NE(bank.cache().find(static_cast<std::uint64_t>(ids[0])), nullptr);
  cache.invalidate();
  EXPECT_TRUE(same_bits(sample(*fourth, 0.7f, cache), sample_fresh(*rom.clip[3], 0.7f)));
  // Unknown ids are nobody's clip.
  EXPECT_EQ(bank.lock(BankedClipId::None), nullptr);
  EXPECT_EQ(bank.lock(ClipBank::id_of(99)), nullptr);
  EXPECT_EQ(bank.source(ClipBank::id_of(99)), nullptr);
  EXPECT_EQ(bank.source(ids[2])->id(), PackedClip::open(rom.packed[2].bytes()).value().id());
}

TEST(ClipBank, ASlotReloadedWithAnotherClipIsNotSampledWithTheOldCursors) {
  Rom rom;
  ClipBank bank({.slots = 1, .slot_bytes = 48u << 10});
  const BankedClipId a = bank.add(rom.packed[0].bytes()).value(),
                     b = bank.add(rom.packed[3].bytes()).value();
  SamplingCache cache(rom.clip[0]->joint_count());
  const PackedClip* first = bank.touch(a);
  ASSERT_NE(first, nullptr);
  const std::byte* slot = first->bytes().data();
  for (float t = 0.0f; t <= 0.5f; t += 0.05f) sample(*first, t, cache);
  // The same slot, another clip, time moving on: what a stale cursor would decode wrongly.
  const PackedClip* second = bank.touch(b);
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->bytes().data(), slot);
  for (float t : {0.55f, 0.6f, 0.9f})
    EXPECT_TRUE(same_bits(sample(*second, t, cache), sample_fresh(*rom.clip[3], t))) << t;
  // And back: clip a reloaded into the slot samples from its own keys again.
  const PackedClip* again = bank.touch(a);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(same_bits(sample(*again, 0.95f, cache), sample_fresh(*rom.clip[0], 0.95f)));
  EXPECT_EQ(bank.stats().misses, 3u);
}

TEST(ClipBank, AddRefusesByName) {
  Rom rom;
  {
    ClipBank bank({.slots = 2, .slot_bytes = 1024, .max_clips = 1});
    core::Result<BankedClipId> r = bank.add(rom.packed[0].bytes());
    ASSERT_FALSE(r);
    EXPECT_NE(r.message().find("clip 'walk'"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("do not fit a slot of 1024"), std::string::npos) << r.message();
  }
  ClipBank bank({.slots = 2, .slot_bytes = 48u << 10, .max_clips = 1});
  std::vector<std::uint32_t> junk(64, 0x12345678);
  core::Result<BankedClipId> r = bank.add(std::as_bytes(std::span(junk)));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind("clip bank: packed clip", 0), 0u) << r.message();
  ASSERT_TRUE(bank.add(rom.packed[0].bytes()));
  r = bank.add(rom.packed[1].bytes());
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("max_clips"), std::string::npos) << r.message();
  EXPECT_EQ(bank.clip_count(), 1u);  // the refusals lost nothing
  EXPECT_NE(bank.lock(ClipBank::id_of(1)), nullptr);
  bank.unlock(ClipBank::id_of(1));
}

TEST(ClipBank, ItsMemoryComesFromItsArena) {
  Rom rom;
  core::MemoryBudget budget(256u << 10);
  core::BudgetArena& arena = budget.add_arena("anim", 192u << 10, "the character holds its pose");
  {
    ClipBank bank({.slots = 3, .slot_bytes = 40001, .max_clips = 8, .arena = &arena});
    EXPECT_EQ(bank.cache().config().slot_bytes, 40016u);  // slots stay 16-byte aligned
    EXPECT_GE(arena.high_water(), bank.footprint());
    ASSERT_TRUE(bank.add(rom.packed[2].bytes()));
    const PackedClip* c = bank.lock(ClipBank::id_of(1));
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(arena.owns(c->bytes().data()));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c->bytes().data()) % 16, 0u);
    bank.unlock(ClipBank::id_of(1));
  }
  // An arena too small for the slots: a bank that takes no clip, and says so.
  core::BudgetArena& tiny = budget.add_arena("tiny", 1024, "none");
  ClipBank starved({.slots = 3, .slot_bytes = 30000, .arena = &tiny});
  core::Result<BankedClipId> r = starved.add(rom.packed[0].bytes());
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("slot of 0"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace spindle::anim::packed_clip_test
