// The dynamic mode's choice of how many workers to wake each frame, and whether they keep to their
// own cores: the fewest that keep the frame short, found from what every frame measures anyway. A
// plain job with inputs and outputs (no engine, no clocks), so it can be tested with exact
// numbers.
//
// Usage (the Engine does this around every frame in dynamic mode):
//
//   spindle::core::WorkerController controller;
//   controller.workers = jobs.participant_count();
//   controller.may_unpin = true;                           // Config::pin_workers: try both ways
//   controller.cores_busy = probe.busy();                  // core::CoresBusyProbe: no pinning
//   spindle::core::WorkerChoice c = controller.choose();   // before the frame
//   jobs.set_active_workers(c.workers);
//   jobs.set_pinned(c.pinned);
//   ... run the frame ...
//   controller.observe(c, frame_ms, work_ms, wake_us, cpu_ms);  // after it
//
// The candidates, in order of preference: one worker (not pinned: alone, it should run wherever
// the OS has room, as single mode's thread does), then 2, 4 ... and `workers` itself, each pinned
// and then not pinned (with may_unpin; else only not pinned). The counts stop at a cap: a worker
// is only worth waking if the frame's work, spread over the workers, gives it at least
// min_work_per_worker_us more than the measured cost of waking it. Each candidate keeps a moving
// average of the frame time it gave. The choice is the earliest candidate that no later one beats
// by more than `margin` (so a second core that shortens the frame by 2% stays asleep), and whose
// extra CPU time buys enough of it: it must also lower the frame time x the CPU time per frame
// (the energy-delay product, with cpu_weight 1). A second worker that cut the frame by 17% for 42%
// more CPU (boids at 100 on a 2-core VM: 0.83 x 1.42 = 1.18) stays asleep; one that halves the
// frame for 20% more is woken. The
// candidate in use adds the median of its last three frames to its average, so a lone hitch
// does not move it. The frames just after the choice changes are not measured (they pay for
// moving the data between cores), so a trial runs trial_frames frames in a row and only its last
// counts. Now and then the candidate before or after the choice is tried again (after one frame
// of the choice until it has kLearnSamples measurements, so a scene learns in its first frames,
// as is any candidate whose learning began, however far from the choice; while learnt, a
// candidate's estimate is its fastest frame, then the median of its first kLearnSamples, so one
// hitch does not hide it; then every explore_every x trial_frames frames while it is within a
// margin of the choice, less often the further behind it is, 32 times less at most), so the
// choice follows the machine: other programs taking the cores, or leaving. Pinning helps a quiet
// machine and hurts one whose every core is busy (docs/jobs.md has the measurements behind the
// numbers).
#pragma once

#include <cstdint>

namespace spindle::core {

struct WorkerChoice {
  std::uint32_t workers = 1;  // participants that may be handed work, participant 0 included
  bool pinned = false;        // whether they keep to their own CPUs
  bool operator==(const WorkerChoice&) const = default;
};

struct WorkerController {
  // Settings.
  std::uint32_t workers = 1;  // participants available (>= 1)
  bool may_unpin = false;     // pinned candidates exist: pinning is the job config's
  // Other programs keep every core busy (core::CoresBusyProbe): the pinned candidates are left
  // out while it holds. A pinned thread then shares its own core with another program's, and one
  // trial of them spreads the threads over the cores for good: on 2 cores beside 2 steady loops,
  // one worker not pinned (or two on one core) had a core to itself most of the time, but only
  // when no pinned frames had come first (docs/jobs.md).
  bool cores_busy = false;
  double margin = 0.05;                // a later candidate must shorten the frame by this share
  double min_work_per_worker_us = 50;  // work a woken worker must get beyond its wake cost
  // How much a candidate's CPU time per frame counts beside its frame time: a later candidate
  // must lower frame_ms x cpu_ms^cpu_weight. 1: the energy-delay product (a worker that shortens
  // the frame by 10% may add 11% of CPU time); 0.5: the energy-delay-squared one, which favours
  // speed (23%); 0: only the frame time counts. Judged only where both candidates' CPU time was
  // measured (observe()'s cpu_ms).
  double cpu_weight = 1.0;
  std::uint32_t explore_every = 8;  // frames between trials of a close neighbour, per frame
                                    // of a trial (so that trials cost the same share)
  // Frames a trial runs, of which only the last is measured: the frames just after the count or
  // the pinning changes pay for moving the frame's data between cores' caches. A choice kept is
  // measured from its trial_frames-th frame in a row on. On a 2-core VM (boids 100), one worker
  // after a run of two-worker frames took 0.29-0.36 ms, then 0.25-0.26, then 0.24, where it takes
  // 0.22-0.23 in a row: judged by its first frames, the slower count kept the machine for good.
  std::uint32_t trial_frames = 3;
  double ema_alpha = 0.1;    // of the candidate in use (measured every frame)
  double trial_alpha = 0.3;  // of a candidate tried now and then
  // Frames after a reset that teach nothing (a scene's first frames pay for cold caches and
  // first-touch allocation), and the age after which a candidate's average is replaced by its
  // next measurement instead of nudged.
  std::uint32_t settle_frames = 3;
  std::uint32_t stale_frames = 128;

  static constexpr int kMaxCandidates = 16;  // 1, then 2 ... 64 pinned and not
  // Trials of a neighbour before its average counts (until then it is tried every other frame).
  static constexpr std::uint32_t kLearnSamples = 3;

  // What to run the next frame with.
  WorkerChoice choose();
  // After a frame run with `choice`: its wall time per simulation step, the work it did (every
  // job's own time), the measured cost of waking a worker and the CPU time every thread of the
  // process used for the frame, per step (0: unknown).
  void observe(const WorkerChoice& choice, double frame_ms, double work_ms, double wake_us = 0,
               double cpu_ms = 0);
  // Forgets every measurement (a scene or mode switch changes what frames cost).
  void reset();

  // What it has learnt, for reports and tests.
  WorkerChoice current() const { return current_; }
  std::uint32_t cap() const;
  double estimate_ms(const WorkerChoice& choice) const;      // NaN if never measured
  double estimate_cpu_ms(const WorkerChoice& choice) const;  // NaN if never measured

 private:
  int index_of(const WorkerChoice& choice) const;  // -1 if not a candidate
  WorkerChoice candidate(int index) const;
  int candidate_count() const;
  int allowed_count() const;  // the candidates within the cap
  int best_index() const;
  bool usable(int index) const { return !(cores_busy && candidate(index).pinned); }
  // Candidate a's frame_ms x cpu_ms^cpu_weight over b's (1 where a CPU time is unknown).
  double cost_ratio(int a, int b) const;
  // The weight of a new measurement in a candidate's moving average.
  double alpha_for(bool in_use, std::uint32_t samples, bool stale) const;

  double ema_[kMaxCandidates] = {};
  double cpu_ms_[kMaxCandidates] = {};  // a moving average of the CPU per frame; 0: unknown
  std::uint32_t cpu_samples_[kMaxCandidates] = {};
  bool measured_[kMaxCandidates] = {};
  std::uint32_t samples_[kMaxCandidates] = {};
  std::uint32_t last_frame_[kMaxCandidates] = {};        // frames_ when last measured
  double learn_ms_[kMaxCandidates][kLearnSamples] = {};  // the first samples, while learning
  static constexpr std::uint32_t kRecent = 3;       // a median of three (worker_controller.cpp)
  double recent_ms_[kMaxCandidates][kRecent] = {};  // the last frames in a row, a ring
  std::uint32_t recent_count_[kMaxCandidates] = {};
  std::uint32_t frames_ = 0;
  std::uint32_t last_trial_ = 0;
  bool trial_up_ = false;   // the next trial goes up the list (else down)
  std::uint32_t hold_ = 0;  // frames the trial in progress still runs
  WorkerChoice current_{};
  WorkerChoice previous_{};  // what the last observed frame ran with
  bool observed_ = false;    // whether previous_ is set
  std::uint32_t run_ = 0;    // frames in a row run with previous_
  double work_ms_ = 0;
  double wake_us_ = 0;
};

}  // namespace spindle::core
