// Profiler: scoped zones per thread, frame aggregates, job hooks and Chrome trace export.
//
// Usage:
//
//   void update_physics() {
//     SPINDLE_PROFILE_ZONE("physics");          // records [begin, end) of this scope
//     ...
//   }
//
//   namespace prof = spindle::core::profiler;
//   jobs_config.hooks = prof::job_hooks();      // every job becomes a zone named JobDesc::name
//   prof::set_thread_name("main");
//   prof::begin_frame();
//   run_frame();
//   prof::end_frame();
//   for (const auto& z : prof::last_frame().zones) printf("%s %llu\n", z.name, z.total_ns);
//   prof::write_chrome_trace("trace.json");     // open in Perfetto or chrome://tracing
//
// Each thread registers once (on its first zone) and then records into its own fixed ring of
// events with no lock: the newest events_per_thread() events are kept, older ones are
// overwritten and counted in events_lost(). With SPINDLE_PROFILER defined to 0 the macros compile
// to nothing; the functions stay available. Zone names must outlive the profiler (literals).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <spindle/base/build_config.h>
#include <spindle/base/result.h>

namespace spindle::jobs {
struct JobHooks;  // <spindle/jobs/job_system.h>; keeps this header light
}

namespace spindle::core {

namespace profiler {

// Threads recording at once; a thread beyond is not recorded. An exited thread's buffer (and its
// events) goes to the next thread that registers once all are in use.
inline constexpr std::uint32_t kMaxThreads = 256;
inline constexpr std::uint32_t kMaxZoneNames = 256;  // distinct names in one frame's aggregates
inline constexpr std::uint32_t kMaxOpenZones = 64;   // nesting of begin_zone() per thread

// Per zone name, over one frame (zones that began and ended inside it).
struct ZoneStats {
  const char* name;
  std::uint32_t count;
  std::uint64_t total_ns;
  std::uint64_t max_ns;
};

struct FrameProfile {
  std::uint64_t frame = 0;     // 1 for the first end_frame()
  std::uint64_t begin_ns = 0;  // since the profiler started
  std::uint64_t end_ns = 0;
  std::span<const ZoneStats> zones;  // sorted by total_ns, largest first
  std::uint64_t events_lost = 0;     // overwritten before they could be counted
  std::uint64_t names_dropped = 0;   // zones whose name did not fit in kMaxZoneNames
};

// Enables or disables recording at run time (on by default).
void set_enabled(bool enabled);
bool enabled();
// Ring size for threads that register after this call; rounded up to a power of two.
void set_events_per_thread(std::uint32_t events);
std::uint32_t events_per_thread();
// Names the calling thread in traces ("thread N" otherwise; job workers get "worker N").
void set_thread_name(const char* name);

// Manual zones, for begin/end that are not one C++ scope. Nest per thread, LIFO.
void begin_zone(const char* name);
void end_zone();

// Frame markers; call from one thread. end_frame() computes last_frame(), which stays valid
// until the next end_frame(). A frame also appears in the trace as a zone named "frame".
void begin_frame();
void end_frame();
const FrameProfile& last_frame();

// Hooks for spindle::jobs::Config::hooks / JobSystem::set_hooks.
jobs::JobHooks job_hooks();

// Writes every event still held, as Chrome trace-event JSON.
Status write_chrome_trace(const char* path);

// Forgets recorded events (threads stay registered; zones open now still complete later).
void clear();
std::uint64_t events_lost();      // overwritten events, all threads, since clear()
std::uint64_t threads_dropped();  // threads that found every registration slot taken
std::uint32_t thread_count();

// Hot-path entry points used by ProfileZone; begin returns 0 when nothing is recorded.
std::uint64_t zone_begin();
void zone_end(const char* name, std::uint64_t begin_ns);

}  // namespace profiler

// Records the enclosing scope as a zone on the calling thread.
class ProfileZone {
 public:
  explicit ProfileZone(const char* name) : name_(name), begin_ns_(profiler::zone_begin()) {}
  ~ProfileZone() {
    if (begin_ns_ != 0) profiler::zone_end(name_, begin_ns_);
  }
  ProfileZone(const ProfileZone&) = delete;
  ProfileZone& operator=(const ProfileZone&) = delete;

 private:
  const char* name_;
  std::uint64_t begin_ns_;
};

}  // namespace spindle::core

#if SPINDLE_PROFILER
#define SPINDLE_PROFILE_ZONE(name) \
  ::spindle::core::ProfileZone SPINDLE_CONCAT(spindle_profile_zone_, __LINE__)(name)
#define SPINDLE_PROFILE_BEGIN_FRAME() ::spindle::core::profiler::begin_frame()
#define SPINDLE_PROFILE_END_FRAME() ::spindle::core::profiler::end_frame()
#else
#define SPINDLE_PROFILE_ZONE(name) static_cast<void>(0)
#define SPINDLE_PROFILE_BEGIN_FRAME() static_cast<void>(0)
#define SPINDLE_PROFILE_END_FRAME() static_cast<void>(0)
#endif
