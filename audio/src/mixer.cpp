// The mixer. One mix() call is done in blocks of MixerConfig::block_frames; each block:
//   1. update   (serial, cheap): fades, 3D gains and pitch, which voices are mixed
//   2. streams  (a job per streamed voice): decode ahead into the voice's buffer
//   3. mix      (a job per batch of kVoicesPerBatch voices of one bus): resample, filter, pan,
//               add into the batch's own buffer
//   4. sum      (jobs over frame ranges): batches into their bus, in batch order
//   5. buses    (serial): filter, reverb, volume, into the parent; the master into the output
// Batches are cut from the mixed voices in a fixed order, so every sum happens in the same order
// whatever the split or the number of workers: the output is the same bit for bit.
#include "spindle/audio/mixer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

#include "dsp_internal.h"
#include "mix_kernel.h"
#include "spindle/algorithms/chunks.h"
#include "spindle/base/log.h"

namespace spindle::audio {

namespace {

constexpr std::uint64_t kOne = std::uint64_t{1} << 32;

struct SoundEntry {
  Sound sound;
  std::string path;  // streams: opened per voice
  bool stream = false;
  bool banked = false;
  std::span<const float> source;  // banked: the caller's samples
  std::uint32_t channels = 0;
  std::uint32_t rate = 0;
  std::uint64_t frames = 0;
};

// A streamed voice's decoder and its window of decoded frames, addressed by timeline frame
// (the voice's position; loops unrolled) modulo the capacity.
struct StreamSlot {
  std::unique_ptr<StreamDecoder> decoder;
  std::unique_ptr<float[]> buffer;  // capacity x channels
  std::uint32_t capacity = 0;       // power of two
  std::uint32_t channels = 1;
  std::uint64_t begin = 0;  // decoded timeline frames are [begin, end)
  std::uint64_t end = 0;
  std::uint64_t file_next = 0;                 // the file frame the decoder reads next
  std::uint64_t stops_at = ~std::uint64_t{0};  // timeline frame where a non-looping sound ends
  std::uint64_t starved = 0;
  bool in_use = false;
};

struct Voice {
  std::uint32_t generation = 1;
  VoiceState state = VoiceState::Stopped;
  const SoundEntry* sound = nullptr;
  const float* samples = nullptr;      // the sound's, or its bank slot's
  core::CacheEntry* banked = nullptr;  // the bank slot it holds locked
  std::int32_t stream = -1;            // StreamSlot index
  std::uint64_t pos = 0;               // 32.32 source (timeline, for streams) frames
  std::uint64_t loop_start = 0, loop_end = 0;
  bool loop = false;
  float volume = 1, volume_target = 1, volume_step = 0;
  std::uint32_t volume_left = 0;
  float fade = 1, fade_target = 1, fade_step = 0;
  std::uint32_t fade_left = 0;
  bool stop_at_fade_end = false;
  float pan = 0, pitch = 1;
  BusId bus = kMasterBus;
  std::int32_t priority = 0;
  std::uint32_t delay = 0;
  bool spatial = false;
  SpatialParams sp{};
  std::uint64_t order = 0;  // play sequence number: the older voice wins ties
  // This block:
  float start_l = 0, start_r = 0, end_l = 0, end_r = 0;
  float audibility = 0;
  float lp_a = 1;  // one-pole coefficient (1: open)
  float lp[2] = {0, 0};
  std::uint64_t step = kOne;
  std::uint32_t offset = 0;  // first frame of the block it plays
  bool candidate = false;    // not waiting on a delay past this block
  bool mixed = false, was_mixed = false, fresh = true, ended = false;
  bool gains_ready = false;  // compute_gains ran for this block
  bool tail = false;         // lost its place: mixed once more, fading to silence
  bool committed = false;    // commit_voice ran for this block
};

struct Bus {
  BusDesc desc;
  float volume = 1;
  detail::Biquad filter;
  std::unique_ptr<detail::Reverb> reverb;
  bool used = false;
};

struct Batch {
  BusId bus = 0;
  std::uint32_t begin = 0, end = 0;  // into Impl::mixed
};

struct RankKey {
  std::int32_t priority;
  float audibility;
  std::uint64_t order;
  std::uint32_t slot;
  // Strict order, unique keys (order is unique): the same ranking on every run.
  bool operator<(const RankKey& o) const {  // "more important than"
    if (priority != o.priority) return priority > o.priority;
    if (audibility != o.audibility) return audibility > o.audibility;
    return order < o.order;
  }
};

float finite_or(float v, float fallback) {
  return std::isfinite(v) ? v : fallback;
}

}  // namespace

struct Mixer::Impl {
  MixerConfig config;
  std::vector<std::unique_ptr<SoundEntry>> sounds;
  std::vector<Voice> voices;
  std::vector<std::uint32_t> free_slots;  // a stack
  std::vector<std::uint32_t> active;      // slots in play order (compacted on end)
  std::vector<RankKey> ranks;
  std::vector<std::uint32_t> mixed;  // slots, grouped by bus
  std::vector<Batch> batches;
  std::vector<float> batch_buffers;  // batch x block x 2
  std::vector<float> bus_buffers;    // bus x block x 2
  std::vector<Bus> buses;
  std::vector<StreamSlot> streams;
  std::vector<std::uint32_t> refills;  // stream slots to decode this block
  std::uint32_t bus_count[kMaxBuses] = {};
  Listener listener{};
  glm::vec3 listener_right{1.0f, 0.0f, 0.0f};  // unit: the listener's right, once per block
  MixerStats stats{};
  std::unique_ptr<core::ResourceCache> bank;
  std::uint64_t plays = 0;
  std::uint32_t tails = 0;  // this block's voices fading out of the mix
  bool logged_refusal = false;

  Voice* find(VoiceHandle h) {
    if (h.slot >= voices.size()) return nullptr;
    Voice& v = voices[h.slot];
    return v.generation == h.generation && v.state != VoiceState::Stopped ? &v : nullptr;
  }
  float rate() const { return static_cast<float>(config.sample_rate); }
  // Voices that lose their place are mixed one more block, fading out (no click), up to this many.
  std::uint32_t max_tails() const {
    return std::min(config.max_voices - config.max_mixed, std::max(8u, config.max_mixed / 4));
  }
  std::uint32_t max_batches() const {
    return (config.max_mixed + max_tails() + kVoicesPerBatch - 1) / kVoicesPerBatch + kMaxBuses;
  }

  void end_voice(std::uint32_t slot);
  void end_active_voice(std::uint32_t slot) {
    end_voice(slot);
    active.erase(std::find(active.begin(), active.end(), slot));
  }
  RankKey rank_of(std::uint32_t slot) const {
    const Voice& v = voices[slot];
    return {v.priority, v.audibility, v.order, slot};
  }
  // The least important playing voice that `eligible` accepts, ranked as the mixer ranks them;
  // ~0u when none.
  template <class Eligible>
  std::uint32_t least_important(const Eligible& eligible) const {
    std::uint32_t victim = ~0u;
    for (std::uint32_t slot : active) {
      if (eligible(voices[slot]) && (victim == ~0u || rank_of(victim) < rank_of(slot)))
        victim = slot;
    }
    return victim;
  }
  float bus_gain(BusId b) const {
    float g = 1;
    for (;;) {
      g *= buses[b].volume;
      if (b == kMasterBus) return g;
      b = buses[b].desc.parent;
    }
  }
  void compute_gains(Voice& v, std::uint32_t n);
  void choose_mixed();
  void refill(StreamSlot& s, const Voice& v, std::uint64_t through);
  void mix_voice(Voice& v, float* out, std::uint32_t n);
  void advance_silent(Voice& v, std::uint32_t n);
  void commit_voice(Voice& v, std::uint32_t n);
  void mix_block(const ParallelRanges& parallel, float* out, std::uint32_t n);
  // fn(begin, end) over [0, n) through the runner (inline when there is none or n < 2).
  template <class F>
  static void parallel_ranges(const ParallelRanges& p, std::uint32_t n, const F& fn) {
    if (n == 0) return;
    if (p.run == nullptr || n < 2 || p.split < 2) {
      fn(0u, n);
      return;
    }
    p.run(
        p.user, n,
        [](void* f, std::uint32_t b, std::uint32_t e) { (*static_cast<const F*>(f))(b, e); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }
  std::uint64_t stream_file_frame(const Voice& v, std::uint64_t t) const {
    if (!v.loop || t < v.loop_end) return t;
    return v.loop_start + (t - v.loop_start) % (v.loop_end - v.loop_start);
  }
};

Mixer::Mixer(MixerConfig config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  config.sample_rate = std::clamp(config.sample_rate, kMinSampleRate, kMaxSampleRate);
  config.max_voices = std::max<std::uint32_t>(config.max_voices, 1);
  config.max_mixed = std::clamp<std::uint32_t>(config.max_mixed, 1, config.max_voices);
  config.block_frames = std::clamp<std::uint32_t>(config.block_frames, 16, 16384);
  // A block at pitch 4 must fit with room to decode ahead; faster voices starve (counted).
  config.stream_buffer_frames = std::bit_ceil(
      std::clamp<std::uint32_t>(config.stream_buffer_frames, 8 * config.block_frames, 1u << 22));
  m.config = config;
  m.voices.resize(config.max_voices);
  m.free_slots.reserve(config.max_voices);
  for (std::uint32_t i = config.max_voices; i-- > 0;) m.free_slots.push_back(i);
  m.active.reserve(config.max_voices);
  m.ranks.reserve(config.max_voices);
  m.mixed.resize(config.max_mixed + m.max_tails());
  m.batches.resize(m.max_batches());
  m.batch_buffers.resize(std::size_t{m.max_batches()} * config.block_frames * 2);
  m.bus_buffers.resize(std::size_t{kMaxBuses} * config.block_frames * 2);
  m.buses.reserve(kMaxBuses);
  m.buses.emplace_back();
  m.buses.back().desc.name = "master";
  m.streams.resize(config.max_streams);
  m.refills.reserve(config.max_streams);
  if (config.bank_slots > 0) {
    m.bank = std::make_unique<core::ResourceCache>(
        core::CacheConfig{.name = "sound bank",
                          .slots = config.bank_slots,
                          .slot_bytes = config.bank_slot_bytes,
                          .panic_mode = "the quietest voice holding a slot is dropped"},
        config.bank_arena);
  }
}

Mixer::~Mixer() {
  stop_all();  // unlocks the bank before it goes
}

const MixerConfig& Mixer::config() const {
  return impl_->config;
}
const MixerStats& Mixer::stats() const {
  return impl_->stats;
}
const Listener& Mixer::listener() const {
  return impl_->listener;
}
void Mixer::set_listener(const Listener& listener) {
  impl_->listener = listener;
}

core::Result<SoundId> Mixer::add_sound(Sound sound) {
  Impl& m = *impl_;
  if (sound.channels() == 0 || sound.frames() == 0)
    return core::Status::error(sound.name() + ": empty sound, not added");
  const std::size_t budget = m.config.memory_budget;
  if (budget && m.stats.memory_used + sound.bytes() > budget) {
    return core::Status::error(sound.name() + ": needs " + std::to_string(sound.bytes()) +
                               " bytes, the mixer's memory budget has " +
                               std::to_string(budget - m.stats.memory_used) + " of " +
                               std::to_string(budget) + " left; not added");
  }
  m.stats.memory_used += sound.bytes();
  auto e = std::make_unique<SoundEntry>();
  e->channels = sound.channels();
  e->rate = sound.sample_rate();
  e->frames = sound.frames();
  e->sound = std::move(sound);
  m.sounds.push_back(std::move(e));
  return static_cast<SoundId>(m.sounds.size());
}

core::Result<SoundId> Mixer::add_stream(const std::string& path) {
  Impl& m = *impl_;
  auto decoder = open_stream(path);
  if (!decoder) return decoder.status();
  auto e = std::make_unique<SoundEntry>();
  e->stream = true;
  e->path = path;
  e->channels = decoder.value()->channels();
  e->rate = decoder.value()->sample_rate();
  e->frames = decoder.value()->frames();
  if (e->frames == 0) return core::Status::error(path + ": empty stream, not added");
  m.sounds.push_back(std::move(e));
  return static_cast<SoundId>(m.sounds.size());
}

core::Result<SoundId> Mixer::add_banked_sound(const BankedSound& b) {
  Impl& m = *impl_;
  if (!m.bank || m.bank->capacity() == 0)
    return core::Status::error(b.name + ": the mixer has no sound bank (MixerConfig::bank_slots)");
  if (b.channels != 1 && b.channels != 2)
    return core::Status::error(b.name + ": " + std::to_string(b.channels) +
                               " channels; a sound has 1 or 2");
  if (b.sample_rate < kMinSampleRate || b.sample_rate > kMaxSampleRate)
    return core::Status::error(b.name + ": sample rate " + std::to_string(b.sample_rate) +
                               " is out of range");
  if (b.samples.empty() || b.samples.size() % b.channels != 0)
    return core::Status::error(b.name + ": " + std::to_string(b.samples.size()) +
                               " samples are not whole frames of " + std::to_string(b.channels) +
                               " channels");
  const std::size_t bytes = b.samples.size_bytes();
  if (bytes > m.bank->config().slot_bytes)
    return core::Status::error(
        b.name + ": " + std::to_string(bytes) + " bytes do not fit a bank slot of " +
        std::to_string(m.bank->config().slot_bytes) + " (MixerConfig::bank_slot_bytes)");
  for (std::size_t i = 0; i < b.samples.size(); ++i) {
    if (!std::isfinite(b.samples[i]))
      return core::Status::error(b.name + ": sample " + std::to_string(i) + " is not finite");
  }
  auto e = std::make_unique<SoundEntry>();
  e->banked = true;
  e->source = b.samples;
  e->channels = b.channels;
  e->rate = b.sample_rate;
  e->frames = b.samples.size() / b.channels;
  m.sounds.push_back(std::move(e));
  return static_cast<SoundId>(m.sounds.size());
}

const core::CacheStats* Mixer::bank() const {
  return impl_->bank ? &impl_->bank->stats() : nullptr;
}

const Sound* Mixer::sound(SoundId id) const {
  const auto& sounds = impl_->sounds;
  if (id == 0 || id > sounds.size() || sounds[id - 1]->stream || sounds[id - 1]->banked)
    return nullptr;
  return &sounds[id - 1]->sound;
}

core::Result<BusId> Mixer::add_bus(BusDesc desc) {
  Impl& m = *impl_;
  if (m.buses.size() >= kMaxBuses)
    return core::Status::error("bus '" + desc.name + "': at most " + std::to_string(kMaxBuses) +
                               " buses (the master included)");
  if (desc.parent >= m.buses.size())
    return core::Status::error("bus '" + desc.name + "': parent bus " +
                               std::to_string(desc.parent) + " does not exist");
  Bus bus;
  bus.volume = std::max(finite_or(desc.volume, 1.0f), 0.0f);
  bus.filter.set(desc.filter, m.rate());
  if (desc.reverb_mix > 0)
    bus.reverb = std::make_unique<detail::Reverb>(m.rate(), desc.reverb_room, desc.reverb_mix);
  bus.desc = std::move(desc);
  m.buses.push_back(std::move(bus));
  return static_cast<BusId>(m.buses.size() - 1);
}

void Mixer::set_bus_volume(BusId bus, float volume) {
  if (bus < impl_->buses.size()) impl_->buses[bus].volume = std::max(finite_or(volume, 1.0f), 0.0f);
}
void Mixer::set_bus_filter(BusId bus, const BiquadDesc& filter) {
  if (bus < impl_->buses.size()) impl_->buses[bus].filter.set(filter, impl_->rate());
}

VoiceHandle Mixer::play(SoundId id, const PlayParams& p) {
  Impl& m = *impl_;
  auto refuse = [&m](const char* why) {
    ++m.stats.plays_refused;
    if (!m.logged_refusal) {
      m.logged_refusal = true;
      SPINDLE_LOG_WARNING(Audio,
                          "a play was refused (%s); counted in MixerStats::plays_refused, "
                          "logged once",
                          why);
    }
    return VoiceHandle{};
  };
  if (id == 0 || id > m.sounds.size()) return refuse("no such sound");
  const SoundEntry& s = *m.sounds[id - 1];
  const float volume = std::max(finite_or(p.volume, 0.0f), 0.0f);
  const BusId bus = p.bus < m.buses.size() ? p.bus : kMasterBus;
  // The new voice ranked as the mixer ranks playing ones, for taking another's place.
  const float audible =
      volume *
      (p.spatial ? attenuation_gain(p.spatial_params.model,
                                    glm::length(p.spatial_params.position - m.listener.position),
                                    p.spatial_params.min_distance, p.spatial_params.max_distance,
                                    p.spatial_params.rolloff)
                 : 1.0f) *
      m.bus_gain(bus);
  const RankKey incoming{p.priority, audible, ~std::uint64_t{0}, 0};
  if (m.free_slots.empty()) {
    if (!p.steal || m.active.empty()) return refuse("every voice slot is busy");
    const std::uint32_t victim = m.least_important([](const Voice&) { return true; });
    if (!(incoming < m.rank_of(victim)))
      return refuse("every voice slot is busy, none ranks below");
    m.end_active_voice(victim);
    ++m.stats.steals;
  }
  core::CacheEntry* banked = nullptr;
  if (s.banked) {
    const auto load = [&s](std::span<std::byte> out) {
      if (out.size() < s.source.size_bytes()) return std::size_t{0};
      std::memcpy(out.data(), s.source.data(), s.source.size_bytes());
      return s.source.size_bytes();
    };
    banked = m.bank->lock(id, load);
    if (banked == nullptr) {
      // The bank's panic mode: every slot is held. The least important voice that holds a slot
      // alone gives it up, if it ranks below the new one.
      const std::uint32_t victim = m.least_important(
          [](const Voice& v) { return v.banked != nullptr && v.banked->locks() == 1; });
      if (victim == ~0u || !(incoming < m.rank_of(victim)))
        return refuse("every sound bank slot is held by a voice that ranks higher");
      m.end_active_voice(victim);
      ++m.stats.bank_drops;
      banked = m.bank->lock(id, load);
      if (banked == nullptr) return refuse("the sound bank could not load the sound");
    }
  }
  std::int32_t stream = -1;
  if (s.stream) {
    for (std::uint32_t i = 0; i < m.streams.size(); ++i) {
      if (!m.streams[i].in_use) {
        stream = static_cast<std::int32_t>(i);
        break;
      }
    }
    if (stream < 0) return refuse("every stream slot is busy (MixerConfig::max_streams)");
    StreamSlot& ss = m.streams[static_cast<std::size_t>(stream)];
    if (!ss.buffer || ss.channels != s.channels) {
      const std::size_t bytes = std::size_t{m.config.stream_buffer_frames} * s.channels * 4;
      if (m.config.memory_budget && m.stats.memory_used + bytes > m.config.memory_budget)
        return refuse("a stream buffer would exceed the memory budget");
      if (ss.buffer) m.stats.memory_used -= std::size_t{ss.capacity} * ss.channels * 4;
      ss.buffer =
          std::make_unique<float[]>(std::size_t{m.config.stream_buffer_frames} * s.channels);
      ss.capacity = m.config.stream_buffer_frames;
      ss.channels = s.channels;
      m.stats.memory_used += bytes;
    }
    auto decoder = open_stream(s.path);
    if (!decoder) {
      SPINDLE_LOG_ERROR(Audio, "%s", decoder.status().c_str());
      return refuse("a stream could not be opened");
    }
    ss.decoder = std::move(decoder).value();
    ss.in_use = true;
    ss.begin = ss.end = 0;
    ss.file_next = 0;
    ss.stops_at = ~std::uint64_t{0};
  }
  const std::uint32_t slot = m.free_slots.back();
  m.free_slots.pop_back();
  Voice& v = m.voices[slot];
  const std::uint32_t generation = v.generation;
  v = Voice{};
  v.generation = generation;
  v.state = p.delay_frames ? VoiceState::Delayed : VoiceState::Playing;
  v.sound = &s;
  v.samples = banked != nullptr ? reinterpret_cast<const float*>(banked->bytes().data())
                                : s.sound.samples().data();
  v.banked = banked;
  v.stream = stream;
  v.loop = p.loop;
  v.loop_end = p.loop_end && p.loop_end <= s.frames ? p.loop_end : s.frames;
  v.loop_start = p.loop_start < v.loop_end ? p.loop_start : 0;
  v.pos = (p.start_frame < s.frames ? p.start_frame : 0) << 32;
  v.volume = v.volume_target = volume;
  v.pan = std::clamp(finite_or(p.pan, 0.0f), -1.0f, 1.0f);
  v.pitch = std::clamp(finite_or(p.pitch, 1.0f), 1.0f / 64, 64.0f);
  v.bus = bus;
  v.priority = p.priority;
  v.delay = p.delay_frames;
  v.spatial = p.spatial;
  v.sp = p.spatial_params;
  if (p.fade_in > 0) {
    v.fade = 0;
    v.fade_left = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(p.fade_in * m.rate()));
    v.fade_step = 1.0f / static_cast<float>(v.fade_left);
  }
  v.order = ++m.plays;
  m.active.push_back(slot);
  ++m.stats.plays;
  return {slot, generation};
}

void Mixer::Impl::end_voice(std::uint32_t slot) {
  Voice& v = voices[slot];
  if (v.stream >= 0) {
    StreamSlot& s = streams[static_cast<std::size_t>(v.stream)];
    s.decoder.reset();
    s.in_use = false;
  }
  if (v.banked != nullptr) {
    bank->unlock(v.banked);
    v.banked = nullptr;
  }
  v.state = VoiceState::Stopped;
  v.stream = -1;
  ++v.generation;
  free_slots.push_back(slot);
}

void Mixer::stop(VoiceHandle h, float fade_out) {
  Voice* v = impl_->find(h);
  if (!v) return;
  if (fade_out > 0 && std::isfinite(fade_out)) {
    v->fade_left = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(fade_out * impl_->rate()));
    v->fade_target = 0;
    v->fade_step = -v->fade / static_cast<float>(v->fade_left);
    v->stop_at_fade_end = true;
    return;
  }
  impl_->end_voice(h.slot);
  impl_->active.erase(std::find(impl_->active.begin(), impl_->active.end(), h.slot));
}

void Mixer::stop_all() {
  for (std::uint32_t slot : impl_->active) impl_->end_voice(slot);
  impl_->active.clear();
}

void Mixer::set_volume(VoiceHandle h, float volume, float fade) {
  Voice* v = impl_->find(h);
  if (!v) return;
  volume = std::max(finite_or(volume, v->volume), 0.0f);
  const bool fading = fade > 0 && std::isfinite(fade);
  if (!fading && volume == v->volume_target) return;  // unchanged: a running fade goes on
  if (fading) {
    v->volume_left = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(fade * impl_->rate()));
    v->volume_target = volume;
    v->volume_step = (volume - v->volume) / static_cast<float>(v->volume_left);
  } else {
    v->volume = v->volume_target = volume;
    v->volume_left = 0;
  }
}
void Mixer::set_pan(VoiceHandle h, float pan) {
  if (Voice* v = impl_->find(h)) v->pan = std::clamp(finite_or(pan, v->pan), -1.0f, 1.0f);
}
void Mixer::set_pitch(VoiceHandle h, float pitch) {
  if (Voice* v = impl_->find(h))
    v->pitch = std::clamp(finite_or(pitch, v->pitch), 1.0f / 64, 64.0f);
}
void Mixer::set_priority(VoiceHandle h, std::int32_t priority) {
  if (Voice* v = impl_->find(h)) v->priority = priority;
}
void Mixer::set_spatial(VoiceHandle h, const SpatialParams& params) {
  if (Voice* v = impl_->find(h)) {
    v->spatial = true;
    v->sp = params;
  }
}
VoiceState Mixer::state(VoiceHandle h) const {
  const Voice* v = impl_->find(h);
  return v ? v->state : VoiceState::Stopped;
}
std::uint64_t Mixer::position(VoiceHandle h) const {
  const Voice* v = impl_->find(h);
  if (!v) return 0;
  return v->stream >= 0 ? impl_->stream_file_frame(*v, v->pos >> 32) : v->pos >> 32;
}

// Gains at the start and the end of this block's n frames, the pitch step, the low-pass.
void Mixer::Impl::compute_gains(Voice& v, std::uint32_t n) {
  const float span = static_cast<float>(n - std::min(n, v.offset));
  const float vol_end =
      v.volume_left ? (span >= static_cast<float>(v.volume_left) ? v.volume_target
                                                                 : v.volume + v.volume_step * span)
                    : v.volume;
  const float fade_end =
      v.fade_left
          ? (span >= static_cast<float>(v.fade_left) ? v.fade_target : v.fade + v.fade_step * span)
          : v.fade;
  float gain = 1, pan = v.pan, doppler = 1;
  v.lp_a = 1;
  if (v.spatial) {
    const glm::vec3 to = v.sp.position - listener.position;
    const float distance = glm::length(to);
    gain =
        attenuation_gain(v.sp.model, distance, v.sp.min_distance, v.sp.max_distance, v.sp.rolloff);
    if (distance > 1e-5f) {
      pan = std::clamp(glm::dot(to, listener_right) / distance, -1.0f, 1.0f);
    } else {
      pan = 0;
    }
    doppler = doppler_factor(listener.position, listener.velocity, v.sp.position, v.sp.velocity,
                             config.speed_of_sound, config.doppler_scale);
    const float occ = std::clamp(finite_or(v.sp.occlusion, 0.0f), 0.0f, 1.0f);
    if (occ > 1e-3f) {
      // Cutoff from 22 kHz (clear) down to 500 Hz (fully occluded), exponentially; the gain
      // drops by at most a half: muffled, never cut.
      const float cutoff = 22000.0f * std::pow(500.0f / 22000.0f, occ);
      v.lp_a = 1.0f - std::exp(-2.0f * std::numbers::pi_v<float> *
                               std::min(cutoff, 0.49f * rate()) / rate());
      gain *= 1.0f - 0.5f * occ;
    }
  }
  glm::vec2 lr;
  if (v.sound->channels == 1) {
    lr = equal_power_pan(pan);
  } else {  // stereo: a balance control, both channels at 1 in the centre
    lr = {std::min(1.0f, 1.0f - pan), std::min(1.0f, 1.0f + pan)};
  }
  const float g_end = gain * vol_end * fade_end;
  v.end_l = g_end * lr.x;
  v.end_r = g_end * lr.y;
  if (v.fresh || !v.was_mixed) {
    const float g_start = gain * v.volume * v.fade;
    v.start_l = v.fresh ? g_start * lr.x : 0.0f;  // coming back from virtual: ramp up from 0
    v.start_r = v.fresh ? g_start * lr.y : 0.0f;
  }
  v.audibility = std::max(g_end, gain * v.volume * v.fade) * bus_gain(v.bus);
  const double ratio = static_cast<double>(v.pitch) * doppler * v.sound->rate / config.sample_rate;
  v.step =
      static_cast<std::uint64_t>(std::clamp(ratio, 1.0 / 256, 256.0) * static_cast<double>(kOne));
}

void Mixer::Impl::choose_mixed() {
  ranks.clear();
  for (std::uint32_t slot : active) {
    const Voice& v = voices[slot];
    if (v.candidate) ranks.push_back({v.priority, v.audibility, v.order, slot});
  }
  const bool over = ranks.size() > config.max_mixed;
  if (over) std::nth_element(ranks.begin(), ranks.begin() + config.max_mixed, ranks.end());
  const std::size_t chosen = std::min<std::size_t>(ranks.size(), config.max_mixed);
  for (std::size_t k = 0; k < chosen; ++k) voices[ranks[k].slot].mixed = true;
  // Voices mixed last block that lost their place fade out over this one, in rank order.
  tails = 0;
  for (std::size_t k = chosen; k < ranks.size() && tails < max_tails(); ++k) {
    Voice& v = voices[ranks[k].slot];
    if (!v.was_mixed || v.fresh) continue;
    v.mixed = v.tail = true;
    v.end_l = v.end_r = 0;
    ++tails;
  }
}

// Decodes the voice's stream so that timeline frames through `through` are in the buffer, and
// as far ahead as the buffer holds.
void Mixer::Impl::refill(StreamSlot& s, const Voice& v, std::uint64_t through) {
  const std::uint64_t idx = v.pos >> 32;
  const std::uint64_t keep_from = idx > 2 ? idx - 2 : 0;
  if (keep_from < s.begin || keep_from > s.end) {  // jumped (virtual, seek): start again here
    s.begin = s.end = keep_from;
    s.file_next = ~std::uint64_t{0};
  }
  if (s.end - keep_from > s.capacity) s.begin = s.end - s.capacity;
  if (s.begin < keep_from) s.begin = keep_from;
  const std::uint64_t target = keep_from + s.capacity;
  while (s.end < target && s.end < s.stops_at) {
    const std::uint64_t file = stream_file_frame(v, s.end);
    const std::uint64_t segment_end = v.loop ? v.loop_end : v.sound->frames;
    if (file >= segment_end) {
      s.stops_at = s.end;
      break;
    }
    if (file != s.file_next && !s.decoder->seek(file)) {
      s.stops_at = s.end;
      break;
    }
    const std::uint32_t at = static_cast<std::uint32_t>(s.end & (s.capacity - 1));
    const std::uint64_t want = std::min<std::uint64_t>(
        {target - s.end, segment_end - file, std::uint64_t{s.capacity - at}});
    const std::uint32_t got = s.decoder->read(s.buffer.get() + std::size_t{at} * s.channels,
                                              static_cast<std::uint32_t>(want));
    if (got == 0) {  // the file is shorter than it said, or corrupt from here: it ends
      s.stops_at = s.end;
      break;
    }
    s.end += got;
    s.file_next = file + got;
  }
  if (s.end < std::min(through, s.stops_at)) s.starved += std::min(through, s.stops_at) - s.end;
}

namespace {

// Reads a memory sound's frames; indices outside [0, limit) wrap into the loop or read 0.
template <int Ch>
struct WrappedSource {
  const float* d;
  std::int64_t frames, loop_start, loop_end;  // loop_end: frames when not looping
  bool loop;
  float operator()(std::int64_t i, int c) const {
    if (loop && i >= loop_end) i = loop_start + (i - loop_start) % (loop_end - loop_start);
    if (i < 0 || i >= frames) return 0.0f;
    return d[i * Ch + c];
  }
};
template <int Ch>
struct StreamSource {
  const float* d;
  std::uint64_t mask, begin, end;
  float operator()(std::int64_t i, int c) const {
    const auto u = static_cast<std::uint64_t>(i);
    if (i < 0 || u < begin || u >= end) return 0.0f;
    return d[(u & mask) * Ch + c];
  }
};

template <int Ch, bool Cubic, bool Filter>
void mix_frames(Voice& v, const StreamSlot* stream, float* out, std::uint32_t first,
                std::uint32_t n, const detail::Ramp& g);

}  // namespace

void Mixer::Impl::mix_voice(Voice& v, float* out, std::uint32_t n) {
  // The ramp runs over the frames the voice plays: frame `offset` of the block is its index 0.
  const std::uint32_t len = n - v.offset;
  const auto span = static_cast<float>(len);
  const auto at = static_cast<float>(v.offset);
  const float dl = (v.end_l - v.start_l) / span, dr = (v.end_r - v.start_r) / span;
  const detail::Ramp g{v.start_l - dl * at, v.start_r - dr * at, dl, dr};
  const bool cubic = config.resampler == Resampler::Cubic;
  const bool filter = v.lp_a < 1.0f;
  const int key = (v.sound->channels == 2 ? 4 : 0) | (cubic ? 2 : 0) | (filter ? 1 : 0);
  const StreamSlot* stream = v.stream >= 0 ? &streams[static_cast<std::size_t>(v.stream)] : nullptr;
  switch (key) {
    case 0:
      mix_frames<1, false, false>(v, stream, out, v.offset, n, g);
      break;
    case 1:
      mix_frames<1, false, true>(v, stream, out, v.offset, n, g);
      break;
    case 2:
      mix_frames<1, true, false>(v, stream, out, v.offset, n, g);
      break;
    case 3:
      mix_frames<1, true, true>(v, stream, out, v.offset, n, g);
      break;
    case 4:
      mix_frames<2, false, false>(v, stream, out, v.offset, n, g);
      break;
    case 5:
      mix_frames<2, false, true>(v, stream, out, v.offset, n, g);
      break;
    case 6:
      mix_frames<2, true, false>(v, stream, out, v.offset, n, g);
      break;
    default:
      mix_frames<2, true, true>(v, stream, out, v.offset, n, g);
      break;
  }
}

namespace {

// Resamples and adds `n` frames of the voice into out, running the straight-line kernel over
// stretches where every tap is inside the sound and stepping one frame at a time over loop
// seams, the start and the end. Ends the voice at the end of a one-shot.
template <int Ch, bool Cubic, bool Filter>
void mix_frames(Voice& v, const StreamSlot* stream, float* out, std::uint32_t first,
                std::uint32_t n, const detail::Ramp& g) {
  constexpr std::int64_t kBefore = Cubic ? 1 : 0;
  constexpr std::int64_t kAfter = Cubic ? 2 : 1;
  std::uint32_t i = first;
  if (stream) {
    const StreamSlot& s = *stream;
    const StreamSource<Ch> src{s.buffer.get(), s.capacity - 1u, s.begin, s.end};
    const std::uint64_t stop = s.stops_at;
    while (i < n) {
      if ((v.pos >> 32) >= stop) {
        v.ended = true;
        return;
      }
      detail::mix_run<Ch, Cubic, Filter>(src, v.pos, v.step, i, 1, out, g, v.lp, v.lp_a);
      ++i;
    }
    return;
  }
  const SoundEntry& s = *v.sound;
  const float* d = v.samples;
  const auto limit = static_cast<std::int64_t>(v.loop ? v.loop_end : s.frames);
  const WrappedSource<Ch> wrapped{d, static_cast<std::int64_t>(s.frames),
                                  static_cast<std::int64_t>(v.loop_start), limit, v.loop};
  const detail::DirectSource<Ch> direct{d};
  while (i < n) {
    auto idx = static_cast<std::int64_t>(v.pos >> 32);
    if (idx >= limit) {
      if (!v.loop) {
        v.ended = true;
        return;
      }
      const auto len = static_cast<std::uint64_t>(v.loop_end - v.loop_start);
      v.pos -= (((v.pos >> 32) - v.loop_start) / len) * len << 32;
      continue;
    }
    const std::int64_t last = limit - 1 - kAfter;  // the last idx whose taps are all inside
    if (idx >= kBefore && idx <= last) {
      const std::uint64_t room = ((static_cast<std::uint64_t>(last) + 1) << 32) - 1 - v.pos;
      const std::uint64_t k = std::min<std::uint64_t>(n - i, room / v.step + 1);
      detail::mix_run<Ch, Cubic, Filter>(direct, v.pos, v.step, i, static_cast<std::uint32_t>(k),
                                         out, g, v.lp, v.lp_a);
      i += static_cast<std::uint32_t>(k);
    } else {
      detail::mix_run<Ch, Cubic, Filter>(wrapped, v.pos, v.step, i, 1, out, g, v.lp, v.lp_a);
      ++i;
    }
  }
}

}  // namespace

// A voice not mixed this block: its position, fades and loops move as if it were.
void Mixer::Impl::advance_silent(Voice& v, std::uint32_t n) {
  const std::uint64_t len = n - std::min(n, v.offset);
  v.pos += v.step * len;
  const std::uint64_t idx = v.pos >> 32;
  if (v.stream >= 0) {
    if (idx >= streams[static_cast<std::size_t>(v.stream)].stops_at &&
        streams[static_cast<std::size_t>(v.stream)].stops_at != ~std::uint64_t{0})
      v.ended = true;
    if (!v.loop && idx >= v.sound->frames) v.ended = true;
    return;
  }
  const std::uint64_t limit = v.loop ? v.loop_end : v.sound->frames;
  if (idx < limit) return;
  if (!v.loop) {
    v.ended = true;
    return;
  }
  const std::uint64_t loop = v.loop_end - v.loop_start;
  v.pos -= (((idx - v.loop_start) / loop) * loop) << 32;
}

// After a block (mixed or not): fades and volume ramps move on, the next block ramps from here.
void Mixer::Impl::commit_voice(Voice& v, std::uint32_t n) {
  const std::uint32_t len = n - v.offset;
  v.delay = 0;
  v.fresh = false;
  v.was_mixed = v.mixed && !v.tail;
  v.start_l = v.end_l;
  v.start_r = v.end_r;
  v.state = v.was_mixed ? VoiceState::Playing : VoiceState::Virtual;
  if (v.volume_left) {
    if (len >= v.volume_left) {
      v.volume = v.volume_target, v.volume_left = 0;
    } else {
      v.volume += v.volume_step * static_cast<float>(len), v.volume_left -= len;
    }
  }
  if (v.fade_left) {
    if (len >= v.fade_left) {
      v.fade = v.fade_target, v.fade_left = 0;
      if (v.stop_at_fade_end) v.ended = true;
    } else {
      v.fade += v.fade_step * static_cast<float>(len), v.fade_left -= len;
    }
  }
}

void Mixer::Impl::mix_block(const ParallelRanges& parallel, float* out, std::uint32_t n) {
  const std::uint32_t split = parallel.run ? std::max<std::uint32_t>(parallel.split, 1) : 1;
  // 1. Update. Which voices play in this block, and whether all of them fit under max_mixed:
  // then nothing needs ranking and each batch job updates its own voices just before mixing
  // them (one parallel section less). Otherwise every voice's gains are needed first, in
  // parallel when there are many, to rank them.
  const glm::vec3 right = glm::cross(listener.forward, listener.up);
  listener_right = glm::length(right) > 1e-12f ? glm::normalize(right) : glm::vec3(1, 0, 0);
  std::uint32_t candidates = 0;
  for (std::uint32_t slot : active) {
    Voice& v = voices[slot];
    v.ended = false;
    v.committed = false;
    v.gains_ready = false;
    v.tail = false;
    v.candidate = v.delay < n;
    v.offset = v.candidate ? v.delay : n;
    v.mixed = v.candidate;
    candidates += v.candidate ? 1 : 0;
  }
  const bool fused = candidates <= config.max_mixed;
  tails = 0;
  auto update = [this, n](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      Voice& v = voices[active[k]];
      v.mixed = false;
      compute_gains(v, n);
      v.gains_ready = true;
    }
  };
  const auto active_count = static_cast<std::uint32_t>(active.size());
  const std::uint32_t update_chunks =
      std::clamp<std::uint32_t>(std::min(split, active_count / 1024), 1, 64);
  if (fused) {
    for (std::uint32_t slot : active) {  // streams decode before the batches: their pitch first
      Voice& v = voices[slot];
      if (v.stream >= 0) compute_gains(v, n), v.gains_ready = true;
    }
  } else {
    parallel_ranges(parallel, update_chunks, [&](std::uint32_t b, std::uint32_t e) {
      for (std::uint32_t c = b; c < e; ++c) {
        const core::ChunkRange r = core::chunk_range(active_count, update_chunks, c);
        update(r.begin, r.end);
      }
    });
    choose_mixed();
  }
  // 2. Streams: each mixed stream decodes in its own job.
  refills.clear();
  for (std::uint32_t slot : active) {
    const Voice& v = voices[slot];
    if (v.mixed && v.stream >= 0) refills.push_back(slot);
  }
  auto refill_one = [this, n](std::uint32_t r) {
    Voice& v = voices[refills[r]];
    StreamSlot& s = streams[static_cast<std::size_t>(v.stream)];
    refill(s, v, ((v.pos + v.step * n) >> 32) + 3);
  };
  const auto refill_count = static_cast<std::uint32_t>(refills.size());
  parallel_ranges(parallel, refill_count, [&](std::uint32_t b, std::uint32_t e) {
    for (std::uint32_t r = b; r < e; ++r) refill_one(r);
  });
  // 3. Batches: the mixed voices grouped by bus, in play order within a bus.
  std::fill(std::begin(bus_count), std::end(bus_count), 0u);
  std::uint32_t mixed_count = 0;
  for (std::uint32_t slot : active) {
    if (voices[slot].mixed) ++bus_count[voices[slot].bus], mixed_count += voices[slot].tail ? 0 : 1;
  }
  std::uint32_t starts[kMaxBuses];
  std::uint32_t batch_count = 0;
  for (std::uint32_t b = 0, at = 0; b < buses.size(); ++b) {
    starts[b] = at;
    for (std::uint32_t k = 0; k < bus_count[b]; k += kVoicesPerBatch)
      batches[batch_count++] = {static_cast<BusId>(b), at + k,
                                at + std::min(bus_count[b], k + kVoicesPerBatch)};
    at += bus_count[b];
  }
  for (std::uint32_t slot : active) {
    if (voices[slot].mixed) mixed[starts[voices[slot].bus]++] = slot;
  }
  const std::size_t stride = std::size_t{config.block_frames} * 2;
  auto mix_batch = [this, n, stride](std::uint32_t b) {
    float* buf = batch_buffers.data() + b * stride;
    std::fill_n(buf, std::size_t{n} * 2, 0.0f);
    for (std::uint32_t k = batches[b].begin; k < batches[b].end; ++k) {
      Voice& v = voices[mixed[k]];
      if (!v.gains_ready) compute_gains(v, n);
      mix_voice(v, buf, n);
      commit_voice(v, n);
      v.committed = true;
    }
  };
  parallel_ranges(parallel, batch_count, [&](std::uint32_t b, std::uint32_t e) {
    for (std::uint32_t k = b; k < e; ++k) mix_batch(k);
  });
  // 4. Sum the batches into their buses, in batch order, over frame ranges in parallel.
  for (Bus& bus : buses) bus.used = false;
  for (std::uint32_t b = 0; b < batch_count; ++b) buses[batches[b].bus].used = true;
  auto sum_range = [this, n, stride, batch_count](std::uint32_t c, std::uint32_t chunks) {
    const core::ChunkRange r = core::chunk_range(std::size_t{n} * 2, chunks, c);
    for (std::uint32_t bus = 0; bus < buses.size(); ++bus) {
      float* dst = bus_buffers.data() + bus * stride;
      std::fill(dst + r.begin, dst + r.end, 0.0f);
    }
    for (std::uint32_t b = 0; b < batch_count; ++b) {
      float* dst = bus_buffers.data() + batches[b].bus * stride;
      const float* src = batch_buffers.data() + b * stride;
      for (std::size_t i = r.begin; i < r.end; ++i) dst[i] += src[i];
    }
  };
  // Voices move on: fades, virtual voices, each its own state (in parallel with the sum).
  auto commit = [this, n](std::size_t begin, std::size_t end) {
    std::uint32_t silent = 0;
    for (std::size_t k = begin; k < end; ++k) {
      Voice& v = voices[active[k]];
      if (v.committed) continue;  // a mixed voice, done by its batch
      if (!v.candidate) {
        v.delay -= n;
        continue;
      }
      advance_silent(v, n);
      ++silent;
      commit_voice(v, n);
    }
    return silent;
  };
  // The sum reads batch buffers, the commit writes voices: one parallel section does both.
  const std::uint32_t sum_chunks =
      std::clamp<std::uint32_t>(std::min(split, batch_count / 16 + 1), 1, 16);
  std::uint32_t silent[64] = {};
  auto sum_or_commit = [&](std::uint32_t c) {
    if (c < sum_chunks) {
      sum_range(c, sum_chunks);
      return;
    }
    const core::ChunkRange r = core::chunk_range(active_count, update_chunks, c - sum_chunks);
    silent[c - sum_chunks] = commit(r.begin, r.end);
  };
  const std::uint32_t sections = sum_chunks + update_chunks;
  parallel_ranges(parallel, sections > 2 ? sections : 1, [&](std::uint32_t b, std::uint32_t e) {
    if (sections <= 2) b = 0, e = sections;
    for (std::uint32_t c = b; c < e; ++c) sum_or_commit(c);
  });
  std::uint32_t virtual_voices = tails;
  for (std::uint32_t c = 0; c < update_chunks; ++c) virtual_voices += silent[c];
  // 5. Buses, children before parents (a parent's id is lower), then the master.
  for (std::size_t b = buses.size(); b-- > 0;) {
    Bus& bus = buses[b];
    float* buf = bus_buffers.data() + b * stride;
    bus.filter.process(buf, n);
    if (bus.reverb) bus.reverb->process(buf, n);
    const float volume = bus.volume * (b == kMasterBus ? config.master_volume : 1.0f);
    if (b == kMasterBus) {
      for (std::size_t i = 0; i < std::size_t{n} * 2; ++i)
        out[i] = std::clamp(buf[i] * volume, -1.0f, 1.0f);
    } else {
      float* parent = bus_buffers.data() + bus.desc.parent * stride;
      for (std::size_t i = 0; i < std::size_t{n} * 2; ++i) parent[i] += buf[i] * volume;
    }
  }
  // 6. The voices that ended give their slots back, in order.
  std::uint32_t kept = 0;
  for (std::uint32_t slot : active) {
    if (voices[slot].candidate && voices[slot].ended) {
      end_voice(slot);
    } else {
      active[kept++] = slot;
    }
  }
  active.resize(kept);
  std::uint64_t starved = 0;
  for (const StreamSlot& s : streams) starved += s.starved;
  stats.stream_starved = starved;
  stats.voices = kept;
  stats.mixed = mixed_count;
  stats.virtual_voices = virtual_voices;
  stats.frames_mixed += n;
}

void Mixer::mix(const ParallelRanges& parallel, std::span<float> out) {
  const auto frames = static_cast<std::uint32_t>(out.size() / 2);
  for (std::uint32_t done = 0; done < frames;) {
    const std::uint32_t n = std::min(impl_->config.block_frames, frames - done);
    impl_->mix_block(parallel, out.data() + 2 * std::size_t{done}, n);
    done += n;
  }
}

void Mixer::mix(jobs::JobSystem& jobs, std::uint32_t split, std::uint16_t tag,
                std::span<float> out) {
  struct Runner {
    jobs::JobSystem* jobs;
    std::uint32_t split;
    std::uint16_t tag;
  } runner{&jobs, std::max<std::uint32_t>(split, 1), tag};
  // At most `split` jobs, each a contiguous range.
  const ParallelRanges parallel{
      &runner,
      [](void* user, std::uint32_t n, ParallelRanges::Body body, void* body_user) {
        const Runner& r = *static_cast<const Runner*>(user);
        const std::uint32_t chunks = std::min(r.split, n);
        core::for_each_chunk(*r.jobs, chunks, {"audio_mix", r.tag}, [&](std::uint32_t c) {
          const core::ChunkRange range = core::chunk_range(n, chunks, c);
          body(body_user, static_cast<std::uint32_t>(range.begin),
               static_cast<std::uint32_t>(range.end));
        });
      },
      runner.split};
  mix(parallel, out);
}

void Mixer::mix(std::span<float> out) {
  mix(ParallelRanges{}, out);
}

}  // namespace spindle::audio
