#include <spindle/anim/clip_bank.h>

#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include <spindle/base/assert.h>

namespace spindle::anim {
namespace {

core::CacheConfig cache_config(const ClipBankConfig& config) {
  return {.name = "clip bank",
          .slots = config.slots,
          .slot_bytes = config.slot_bytes,  // the cache rounds it to 16: slots aligned for clips
          .panic_mode = "the character holds its last pose"};
}

}  // namespace

ClipBank::ClipBank(const ClipBankConfig& config) : cache_(cache_config(config), config.arena) {
  if (config.max_clips == 0) return;
  if (config.arena != nullptr) {
    void* table = config.arena->allocate(sizeof(Entry) * config.max_clips, alignof(Entry));
    if (table == nullptr) return;  // refused: the arena logs it; add() refuses every clip
    clips_ = new (table) Entry[config.max_clips];
  } else {
    owned_ = std::make_unique<Entry[]>(config.max_clips);
    clips_ = owned_.get();
  }
  capacity_ = config.max_clips;
}

ClipBank::~ClipBank() {
  // Entries are trivially destructible: an arena's table needs no destructor calls.
  static_assert(std::is_trivially_destructible_v<Entry>);
}

core::Result<BankedClipId> ClipBank::add(std::span<const std::byte> packed) {
  core::Result<PackedClip> p = PackedClip::open(packed);
  if (!p) return core::Status::error("clip bank: " + p.message());
  const std::string where = "clip bank: clip '" + std::string(p.value().name()) + "': ";
  const std::size_t bytes = p.value().bytes().size();
  if (bytes > cache_.config().slot_bytes || cache_.capacity() == 0)
    return core::Status::error(
        where + std::to_string(bytes) + " bytes do not fit a slot of " +
        std::to_string(cache_.capacity() == 0 ? 0 : cache_.config().slot_bytes) +
        " (ClipBankConfig::slot_bytes, slots)");
  if (count_ == capacity_)
    return core::Status::error(where + "the bank holds " + std::to_string(capacity_) +
                               " clips already (ClipBankConfig::max_clips)");
  clips_[count_].source = p.value();
  return id_of(++count_);
}

ClipBank::Entry* ClipBank::entry_of(BankedClipId id) const {
  const auto n = static_cast<std::uint32_t>(id);
  return n == 0 || n > count_ ? nullptr : &clips_[n - 1];
}

template <bool Lock>
const PackedClip* ClipBank::acquire(BankedClipId id) {
  Entry* found = entry_of(id);
  if (found == nullptr) return nullptr;
  Entry& c = *found;
  const std::span<const std::byte> source = c.source.bytes();
  const auto load = [&](std::span<std::byte> slot) {
    std::memcpy(slot.data(), source.data(), source.size());  // add() checked it fits
    return source.size();
  };
  const auto key = static_cast<std::uint64_t>(id);
  core::CacheEntry* e = Lock ? cache_.lock(key, load) : cache_.touch(key, load);
  if (e == nullptr) return nullptr;  // the panic mode: counted and logged by the cache
  if constexpr (Lock) c.entry = e;
  c.loaded = c.source.copied_to(e->bytes().data());
  return &c.loaded;
}

const PackedClip* ClipBank::lock(BankedClipId id) {
  return acquire<true>(id);
}
const PackedClip* ClipBank::touch(BankedClipId id) {
  return acquire<false>(id);
}

void ClipBank::unlock(BankedClipId id) {
  Entry* found = entry_of(id);
  if (found == nullptr) return;
  Entry& c = *found;
  SPINDLE_ASSERTF(c.entry != nullptr, "clip bank: unlock of clip %u, which is not locked",
                  static_cast<unsigned>(id));
  if (c.entry == nullptr) return;
  core::CacheEntry* e = c.entry;
  if (e->locks() == 1) c.entry = nullptr;
  cache_.unlock(e);
}

const PackedClip* ClipBank::source(BankedClipId id) const {
  const Entry* c = entry_of(id);
  return c == nullptr ? nullptr : &c->source;
}

std::size_t ClipBank::footprint() const {
  return cache_.footprint() + static_cast<std::size_t>(capacity_) * sizeof(Entry);
}

}  // namespace spindle::anim
