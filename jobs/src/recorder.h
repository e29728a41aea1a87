// The job-graph recorder behind JobSystem::begin_recording() / end_recording(). Private to jobs/.
//
// While recording, every thread that submits, runs or waits for a job appends events to a buffer
// of its own (bound on its first event of the recording; no lock, no allocation after the first
// recordings): a job's submission (id, counter, range), its start and end, a wait's start and
// end, a parallel_for's range and each piece's run. end_recording() turns the buffers into a
// JobGraph (job_graph.h): strands of items per job, waits resolved to the jobs they waited for,
// parallel_for ranges with their pieces. The graph keeps its vectors and the recorder its scratch,
// so a recording every frame stops allocating once they have grown.
//
// Job ids are per thread: (thread + 1) << 24 | sequence, stored in Job::record_id. A job records
// its counter by address and epoch (how often its pending count had reached zero). A run_after()
// dependency stands for the jobs of the epoch it was attached in; a wait for every job counted on
// that address since the previous wait on it ended (a counter may reach zero several times
// before anyone waits, and a new counter may take a finished one's address).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "platform.h"
#include "spindle/jobs/job_graph.h"
#include "spindle/jobs/job_system.h"

namespace spindle::jobs::detail {

class Recorder {
 public:
  enum class EventType : std::uint8_t {
    Submit,      // x: counter key, y: range id (0: none), a: job id, tag, flags
    Dep,         // x: counter key, a: job id
    After,       // x: the id of a job it starts after (JobSystem::record_after()), a: job id
    Begin,       // x: its name (const char*), a: job id (0: submitted before the recording)
    End,         // a: job id
    WaitBegin,   // x: counter key
    WaitEnd,     // x: counter key
    Range,       // x: begin, y: end, a: range id, flags: kRangeFixed, kRangeInOrder,
                 //   kRangeCostliestFirst
    PieceBegin,  // x: begin, y: end, a: range id
    PieceEnd,    // a: range id
  };
  struct Event {
    std::uint64_t tick = 0;
    std::uint64_t x = 0;
    std::uint64_t y = 0;
    std::uint32_t a = 0;
    EventType type = EventType::Submit;
    std::uint8_t flags = 0;
    std::uint16_t tag = 0;
  };
  static_assert(sizeof(Event) == 32);

  explicit Recorder(std::uint32_t participants);
  ~Recorder();

  // Between frames. The calling thread's strand outside jobs becomes node 0.
  void begin();
  // Stops recording: the graph ends here. A no-op when nothing is being recorded.
  void stop();
  // Stops recording if stop() has not, and fills `out`. False when nothing was recorded.
  bool end(JobGraph& out, Mode mode, std::uint32_t workers, double ns_per_tick);
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // --- events (call only while active()) -----------------------------------------------------
  // A new id for a job submitted by the calling thread.
  std::uint32_t next_job_id();
  std::uint32_t next_range_id();
  // Submit's flag: the job ran at once on its submitter only because nobody else was active;
  // the graph keeps it as a spawn.
  static constexpr std::uint8_t kSubmitQueuable = 1;
  // Range's flag: JobDesc::fixed_split.
  static constexpr std::uint8_t kRangeFixed = 1;
  static constexpr std::uint8_t kRangeInOrder = 2;
  static constexpr std::uint8_t kRangeCostliestFirst = 4;
  void add(EventType type, std::uint64_t x, std::uint64_t y, std::uint32_t a, std::uint16_t tag = 0,
           std::uint8_t flags = 0) {
    add_at(ticks(), type, x, y, a, tag, flags);
  }
  // At a tick the caller already read: a job's start and end, a wait's, are the very ticks its
  // busy time was measured with, so the graph's own times and the workers' busy time agree
  // exactly even when the thread is preempted between the two.
  void add_at(std::uint64_t tick, EventType type, std::uint64_t x, std::uint64_t y, std::uint32_t a,
              std::uint16_t tag = 0, std::uint8_t flags = 0);

  // A counter's key: its address and the epoch its current jobs belong to (from its state word).
  // `done_generation`: the generation that last finished instead.
  static std::uint64_t key(const void* counter, std::uint64_t word, bool done_generation);

 private:
  struct Buffer {
    std::unique_ptr<Event[]> events;
    std::uint32_t size = 0;
    std::uint32_t capacity = 0;
    bool overflowed = false;
    std::uint32_t next_job = 0;
    std::uint32_t next_range = 0;
  };
  Buffer* bind();
  void convert(JobGraph& out, double ns_per_tick);

  const std::uint32_t max_buffers_;
  std::unique_ptr<std::unique_ptr<Buffer>[]> buffers_;
  std::atomic<bool> active_{false};
  std::atomic<std::uint32_t> bound_{0};  // buffers handed out in this recording
  std::uint64_t session_ = 0;            // bumped per recording: thread bindings go stale
  std::uint32_t capacity_ = 1u << 14;    // events per buffer; doubled after an overflow
  std::uint64_t begin_tick_ = 0;
  std::uint64_t end_tick_ = 0;
  bool stopped_ = false;  // stop() ran: end() has a recording to convert

  // Scratch of convert(), kept between recordings.
  struct Strand;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace spindle::jobs::detail
