#include <spindle/base/profiler.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <spindle/base/log.h>
#include <spindle/base/mutex.h>
#include <spindle/base/time.h>
#include <spindle/jobs/job_system.h>

namespace spindle::core::profiler {
namespace {

#if SPINDLE_THREADS
template <class T>
using Cell = std::atomic<T>;
#else
// One thread: plain storage, so 32-bit targets need no 64-bit atomics.
template <class T>
struct Cell {
  T value{};
  void store(T v, std::memory_order) { value = v; }
  T load(std::memory_order) const { return value; }
};
#endif

// One event slot, published with a per-slot sequence (a seqlock): the owner thread writes, any
// thread may read, and a reader detects a slot that was being overwritten while it read.
struct Slot {
  Cell<std::size_t> seq;  // index + 1 of the event held; 0 while being written
  Cell<const char*> name;
  Cell<std::uint64_t> begin_ns;
  Cell<std::uint64_t> end_ns;
};

struct OpenZone {
  const char* name;
  std::uint64_t begin_ns;  // 0: opened while disabled, record nothing
};

struct Event {
  const char* name;
  std::uint64_t begin_ns;
  std::uint64_t end_ns;
};

struct ThreadBuffer {
  std::uint32_t tid = 0;  // unique per registration, also when the buffer is reused
  char name[48] = {};     // written and read under the registry mutex
  std::unique_ptr<Slot[]> slots;
  std::size_t mask = 0;
  // Events ever written; only the owner thread stores it.
  Cell<std::size_t> head;
  // Events below this index were cleared; written under the registry mutex.
  Cell<std::size_t> floor;
  // Set by the owner thread as it exits; the buffer may then serve a new thread.
  std::atomic<bool> retired{false};
  // Owner thread only.
  OpenZone open[kMaxOpenZones];
  std::uint32_t open_count = 0;
  std::uint32_t open_overflow = 0;
  // Frame aggregation cursor; only the end_frame() thread touches it (under the mutex).
  std::size_t aggregated = 0;

  std::size_t capacity() const { return mask + 1; }

  void record(const char* zone, std::uint64_t begin, std::uint64_t end) {
    std::size_t index = head.load(std::memory_order_relaxed);
    Slot& slot = slots[index & mask];
    // Release stores (plain moves on x86) keep "seq = 0" ahead of the new data for any reader
    // that sees the data; no fences, which ThreadSanitizer cannot follow.
    slot.seq.store(0, std::memory_order_relaxed);
    slot.name.store(zone, std::memory_order_release);
    slot.begin_ns.store(begin, std::memory_order_release);
    slot.end_ns.store(end, std::memory_order_release);
    slot.seq.store(index + 1, std::memory_order_release);
    head.store(index + 1, std::memory_order_release);
  }

  // Reads event `index`; false if it was overwritten (or is being overwritten). A data load that
  // sees a newer event's store also sees its "seq = 0", so the second check catches it.
  bool read(std::size_t index, Event& out) const {
    const Slot& slot = slots[index & mask];
    if (slot.seq.load(std::memory_order_acquire) != index + 1) return false;
    out.name = slot.name.load(std::memory_order_acquire);
    out.begin_ns = slot.begin_ns.load(std::memory_order_acquire);
    out.end_ns = slot.end_ns.load(std::memory_order_acquire);
    return slot.seq.load(std::memory_order_relaxed) == index + 1;
  }

  // First index still held (not overwritten, not cleared).
  std::size_t first_held(std::size_t end) const {
    std::size_t first = floor.load(std::memory_order_relaxed);
    if (end - first > capacity()) first = end - capacity();
    return first;
  }
};

struct NameEntry {
  const char* name = nullptr;
  std::uint32_t hash = 0;
  ZoneStats stats{};
};

struct State {
  Mutex registry_mutex;
  ThreadBuffer* threads[kMaxThreads] = {};
  std::atomic<std::uint32_t> thread_count{0};
  std::uint32_t next_tid = 1;
  std::atomic<std::uint32_t> threads_dropped{0};
  std::atomic<bool> enabled{true};
  std::atomic<std::uint32_t> events_per_thread{1u << 15};
  std::uint64_t epoch_ns = monotonic_ns();

  // Frame state: the frame thread only.
  std::uint64_t frame_begin_ns = 0;
  std::uint64_t frame_index = 0;
  NameEntry table[kMaxZoneNames * 2];  // open addressing, at most half full
  ZoneStats frame_zones[kMaxZoneNames];
  FrameProfile last_frame;
};

State& state() {
  // Never destroyed: threads may still record while static destructors run.
  alignas(State) static unsigned char storage[sizeof(State)];
  static State* instance = ::new (storage) State();
  return *instance;
}

thread_local ThreadBuffer* t_buffer = nullptr;
thread_local bool t_unregistered = false;  // no buffer (limit reached, or exiting): record nothing

// Retires the thread's buffer when the thread exits, so engines that restart their job system
// (mode switches, benchmarks) do not run out of registrations.
struct ThreadExit {
  ~ThreadExit() {
    if (t_buffer != nullptr) t_buffer->retired.store(true, std::memory_order_release);
    t_buffer = nullptr;
    t_unregistered = true;
  }
};
thread_local ThreadExit t_exit;

// A retired buffer to reuse: its old events are dropped, since the tid they belong to is gone.
ThreadBuffer* reuse_retired(State& s, std::uint32_t count, std::size_t capacity) {
  for (std::uint32_t t = 0; t < count; ++t) {
    ThreadBuffer* buffer = s.threads[t];
    if (!buffer->retired.load(std::memory_order_acquire)) continue;
    if (buffer->capacity() != capacity) {
      buffer->slots = std::make_unique<Slot[]>(capacity);
      buffer->mask = capacity - 1;
    }
    std::size_t head = buffer->head.load(std::memory_order_relaxed);
    buffer->floor.store(head, std::memory_order_relaxed);
    buffer->aggregated = head;
    buffer->open_count = 0;
    buffer->open_overflow = 0;
    buffer->retired.store(false, std::memory_order_relaxed);
    return buffer;
  }
  return nullptr;
}

ThreadBuffer* register_thread() {
  State& s = state();
  (void)&t_exit;  // constructs this thread's exit hook
  LockGuard lock(s.registry_mutex);
  std::uint32_t count = s.thread_count.load(std::memory_order_relaxed);
  std::size_t capacity = std::bit_ceil(
      std::max<std::uint32_t>(s.events_per_thread.load(std::memory_order_relaxed), 16u));
  ThreadBuffer* buffer = nullptr;
  if (count < kMaxThreads) {
    buffer = new ThreadBuffer();
    buffer->slots = std::make_unique<Slot[]>(capacity);
    buffer->mask = capacity - 1;
    s.threads[count] = buffer;
    s.thread_count.store(count + 1, std::memory_order_release);
  } else {
    buffer = reuse_retired(s, count, capacity);
  }
  if (buffer == nullptr) {
    t_unregistered = true;
    s.threads_dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  buffer->tid = s.next_tid++;
  std::snprintf(buffer->name, sizeof(buffer->name), "thread %u", buffer->tid);
  t_buffer = buffer;
  return buffer;
}

ThreadBuffer* this_thread() {
  if (t_buffer != nullptr) return t_buffer;
  if (t_unregistered) return nullptr;
  ThreadBuffer* buffer = register_thread();
  // Logged here, outside the registry lock: a log sink may itself open a zone.
  if (buffer == nullptr && state().threads_dropped.load(std::memory_order_relaxed) == 1) {
    SPINDLE_LOG_WARNING(Profiler, "more than %u live threads: later ones are not profiled",
                        kMaxThreads);
  }
  return buffer;
}

std::uint32_t hash_name(const char* name) {
  if (name == nullptr) name = "?";
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (const char* c = name; *c != '\0'; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 16777619u;
  return h;
}

// Same text means same zone, even when two translation units hold separate copies of a literal.
NameEntry* find_entry(State& s, const char* name, std::uint32_t& used) {
  std::uint32_t hash = hash_name(name);
  constexpr std::uint32_t kSize = kMaxZoneNames * 2;
  for (std::uint32_t probe = 0; probe < kSize; ++probe) {
    NameEntry& e = s.table[(hash + probe) & (kSize - 1)];
    if (e.name == nullptr) {
      if (used == kMaxZoneNames) return nullptr;
      ++used;
      e.name = name;
      e.hash = hash;
      e.stats = ZoneStats{name, 0, 0, 0};
      return &e;
    }
    if (e.hash == hash && (e.name == name || std::strcmp(e.name, name) == 0)) return &e;
  }
  return nullptr;
}

void append_escaped(std::string& out, const char* text) {
  if (text == nullptr) text = "?";
  for (const char* c = text; *c != '\0'; ++c) {
    auto u = static_cast<unsigned char>(*c);
    if (u == '"' || u == '\\') {
      out += '\\';
      out += *c;
    } else if (u < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", u);
      out += esc;
    } else {
      out += *c;
    }
  }
}

// Microseconds with nanosecond digits, printed exactly (no floating-point rounding).
void append_us(std::string& out, std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
  out += text;
}

}  // namespace

void set_enabled(bool on) {
  state().enabled.store(on, std::memory_order_relaxed);
}
bool enabled() {
  return state().enabled.load(std::memory_order_relaxed);
}

void set_events_per_thread(std::uint32_t events) {
  // Capped at 2^24 events (512 MiB at 32 bytes) so bit_ceil stays defined and a ring can exist.
  constexpr std::uint32_t kMaxEvents = 1u << 24;
  state().events_per_thread.store(events < kMaxEvents ? events : kMaxEvents,
                                  std::memory_order_relaxed);
}
std::uint32_t events_per_thread() {
  return std::bit_ceil(
      std::max<std::uint32_t>(state().events_per_thread.load(std::memory_order_relaxed), 16u));
}

void set_thread_name(const char* name) {
  ThreadBuffer* buffer = this_thread();
  if (buffer == nullptr) return;
  // Keep what fits, cut before a UTF-8 continuation byte (10xxxxxx) so no character is split.
  std::size_t n = std::strlen(name);
  if (n >= sizeof(buffer->name)) {
    n = sizeof(buffer->name) - 1;
    while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  }
  LockGuard lock(state().registry_mutex);
  std::memcpy(buffer->name, name, n);
  buffer->name[n] = '\0';
}

std::uint64_t zone_begin() {
  return enabled() ? monotonic_ns() : 0;
}

void zone_end(const char* name, std::uint64_t begin_ns) {
  std::uint64_t end_ns = monotonic_ns();
  if (ThreadBuffer* buffer = this_thread()) buffer->record(name, begin_ns, end_ns);
}

void begin_zone(const char* name) {
  if (name == nullptr) name = "?";  // a JobDesc without a name must not crash the trace
  ThreadBuffer* buffer = this_thread();
  if (buffer == nullptr) return;
  if (buffer->open_count == kMaxOpenZones) {
    ++buffer->open_overflow;
    return;
  }
  buffer->open[buffer->open_count++] = OpenZone{name, zone_begin()};
}

void end_zone() {
  ThreadBuffer* buffer = this_thread();
  if (buffer == nullptr) return;
  if (buffer->open_overflow > 0) {
    --buffer->open_overflow;
    return;
  }
  if (buffer->open_count == 0) return;  // unmatched end: ignore rather than corrupt the stack
  const OpenZone& zone = buffer->open[--buffer->open_count];
  if (zone.begin_ns != 0) zone_end(zone.name, zone.begin_ns);
}

void begin_frame() {
  State& s = state();
  s.frame_begin_ns = monotonic_ns();
  begin_zone("frame");
}

void end_frame() {
  end_zone();
  State& s = state();
  std::uint64_t frame_end_ns = monotonic_ns();
  for (NameEntry& e : s.table) e = NameEntry{};
  std::uint32_t used = 0;
  std::uint64_t lost = 0;
  std::uint64_t dropped = 0;

  LockGuard lock(s.registry_mutex);
  std::uint32_t count = s.thread_count.load(std::memory_order_acquire);
  for (std::uint32_t t = 0; t < count; ++t) {
    ThreadBuffer& buffer = *s.threads[t];
    std::size_t end = buffer.head.load(std::memory_order_acquire);
    std::size_t first = buffer.first_held(end);
    std::size_t cursor = std::max(buffer.aggregated, buffer.floor.load(std::memory_order_relaxed));
    if (cursor < first) {
      lost += first - cursor;
      cursor = first;
    }
    for (std::size_t i = cursor; i < end; ++i) {
      Event ev;
      if (!buffer.read(i, ev)) {
        ++lost;
        continue;
      }
      if (ev.begin_ns < s.frame_begin_ns || ev.end_ns > frame_end_ns) continue;
      NameEntry* entry = find_entry(s, ev.name, used);
      if (entry == nullptr) {
        ++dropped;
        continue;
      }
      std::uint64_t ns = ev.end_ns - ev.begin_ns;
      ++entry->stats.count;
      entry->stats.total_ns += ns;
      entry->stats.max_ns = std::max(entry->stats.max_ns, ns);
    }
    buffer.aggregated = end;
  }

  std::uint32_t n = 0;
  for (const NameEntry& e : s.table) {
    if (e.name != nullptr) s.frame_zones[n++] = e.stats;
  }
  std::sort(s.frame_zones, s.frame_zones + n, [](const ZoneStats& a, const ZoneStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : std::strcmp(a.name, b.name) < 0;
  });
  FrameProfile& frame = s.last_frame;
  frame.frame = ++s.frame_index;
  frame.begin_ns = s.frame_begin_ns - s.epoch_ns;
  frame.end_ns = frame_end_ns - s.epoch_ns;
  frame.zones = std::span<const ZoneStats>(s.frame_zones, n);
  frame.events_lost = lost;
  frame.names_dropped = dropped;
}

const FrameProfile& last_frame() {
  return state().last_frame;
}

jobs::JobHooks job_hooks() {
  jobs::JobHooks hooks;
  hooks.on_begin = [](void*, const jobs::JobDesc& desc, std::uint32_t worker) {
    ThreadBuffer* buffer = this_thread();
    if (buffer == nullptr) return;
    // Name pool threads after their participant index the first time they run a job.
    if (worker != 0 && worker != jobs::kExternalThread &&
        std::strncmp(buffer->name, "thread ", 7) == 0) {
      char name[32];
      std::snprintf(name, sizeof(name), "worker %u", worker);
      set_thread_name(name);
    }
    begin_zone(desc.name);
  };
  hooks.on_end = [](void*, const jobs::JobDesc&, std::uint32_t) { end_zone(); };
  return hooks;
}

Status write_chrome_trace(const char* path) {
  State& s = state();
  std::string out;
  out.reserve(1 << 16);
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"spindle"}})";
  {
    LockGuard lock(s.registry_mutex);
    std::uint32_t count = s.thread_count.load(std::memory_order_acquire);
    for (std::uint32_t t = 0; t < count; ++t) {
      const ThreadBuffer& buffer = *s.threads[t];
      char tid[16];
      std::snprintf(tid, sizeof(tid), "%u", buffer.tid);
      out += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":";
      out += tid;
      out += ",\"args\":{\"name\":\"";
      append_escaped(out, buffer.name);
      out += "\"}}";
      out += ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":";
      out += tid;
      out += ",\"args\":{\"sort_index\":";
      out += tid;
      out += "}}";
      std::size_t end = buffer.head.load(std::memory_order_acquire);
      for (std::size_t i = buffer.first_held(end); i < end; ++i) {
        Event ev;
        if (!buffer.read(i, ev) || ev.begin_ns < s.epoch_ns) continue;
        out += ",\n{\"name\":\"";
        append_escaped(out, ev.name);
        out += "\",\"cat\":\"zone\",\"ph\":\"X\",\"ts\":";
        append_us(out, ev.begin_ns - s.epoch_ns);
        out += ",\"dur\":";
        append_us(out, ev.end_ns - ev.begin_ns);
        out += ",\"pid\":1,\"tid\":";
        out += tid;
        out += "}";
      }
    }
  }
  out += "\n]}\n";

  std::FILE* file = std::fopen(path, "wb");
  if (file == nullptr) {
    return Status::error(std::string(path) + ": cannot write trace: " + std::strerror(errno));
  }
  bool ok = std::fwrite(out.data(), 1, out.size(), file) == out.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok) return Status::error(std::string(path) + ": write failed: " + std::strerror(errno));
  return {};
}

void clear() {
  State& s = state();
  LockGuard lock(s.registry_mutex);
  std::uint32_t count = s.thread_count.load(std::memory_order_acquire);
  for (std::uint32_t t = 0; t < count; ++t) {
    ThreadBuffer& buffer = *s.threads[t];
    std::size_t end = buffer.head.load(std::memory_order_acquire);
    buffer.floor.store(end, std::memory_order_relaxed);
    buffer.aggregated = end;
  }
}

std::uint64_t events_lost() {
  State& s = state();
  LockGuard lock(s.registry_mutex);
  std::uint64_t lost = 0;
  std::uint32_t count = s.thread_count.load(std::memory_order_acquire);
  for (std::uint32_t t = 0; t < count; ++t) {
    const ThreadBuffer& buffer = *s.threads[t];
    std::size_t end = buffer.head.load(std::memory_order_acquire);
    lost += buffer.first_held(end) - buffer.floor.load(std::memory_order_relaxed);
  }
  return lost;
}

std::uint64_t threads_dropped() {
  return state().threads_dropped.load(std::memory_order_relaxed);
}

std::uint32_t thread_count() {
  return state().thread_count.load(std::memory_order_acquire);
}

}  // namespace spindle::core::profiler
