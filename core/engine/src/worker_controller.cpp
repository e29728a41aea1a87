#include <spindle/engine/worker_controller.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace spindle::core {

namespace {
// 1, 2, 4 ... up to n, then n itself.
std::uint32_t count_at(int step, std::uint32_t n) {
  const std::uint32_t power = step >= 31 ? ~0u : 1u << step;
  return std::min(power, std::max<std::uint32_t>(n, 1));
}
}  // namespace

int WorkerController::candidate_count() const {
  int counts = 1;
  while (counts < 7 && count_at(counts - 1, workers) < workers) ++counts;
  // One worker once; every other count pinned and not (with may_unpin).
  return may_unpin ? 2 * counts - 1 : counts;
}

WorkerChoice WorkerController::candidate(int index) const {
  if (!may_unpin) return {count_at(index, workers), false};
  if (index == 0) return {1, false};
  return {count_at((index + 1) / 2, workers), index % 2 == 1};
}

int WorkerController::index_of(const WorkerChoice& choice) const {
  for (int i = 0; i < candidate_count(); ++i)
    if (candidate(i) == choice) return i;
  return -1;
}

std::uint32_t WorkerController::cap() const {
  if (!(work_ms_ > 0)) return std::max<std::uint32_t>(workers, 1);
  const double per_worker_us = std::max(1.0, min_work_per_worker_us + wake_us_);
  const double worth = std::floor(work_ms_ * 1000.0 / per_worker_us);
  return static_cast<std::uint32_t>(std::clamp(worth, 1.0, static_cast<double>(workers)));
}

int WorkerController::allowed_count() const {
  const std::uint32_t most = cap();
  int allowed = 0;
  while (allowed < candidate_count() && candidate(allowed).workers <= most) ++allowed;
  return std::max(allowed, 1);
}

double WorkerController::estimate_ms(const WorkerChoice& choice) const {
  const int i = index_of(choice);
  return i >= 0 && measured_[i] ? ema_[i] : std::numeric_limits<double>::quiet_NaN();
}

double WorkerController::estimate_cpu_ms(const WorkerChoice& choice) const {
  const int i = index_of(choice);
  return i >= 0 && cpu_samples_[i] > 0 ? cpu_ms_[i] : std::numeric_limits<double>::quiet_NaN();
}

double WorkerController::cost_ratio(int a, int b) const {
  if (!(cpu_weight > 0) || cpu_samples_[a] == 0 || cpu_samples_[b] == 0 || !(cpu_ms_[a] > 0) ||
      !(cpu_ms_[b] > 0) || !(ema_[b] > 0))
    return 1.0;
  return ema_[a] / ema_[b] * std::pow(cpu_ms_[a] / cpu_ms_[b], cpu_weight);
}

double WorkerController::alpha_for(bool in_use, std::uint32_t samples, bool stale) const {
  if (stale) return 1.0;  // long unmeasured: start again from this one
  const double alpha = in_use ? ema_alpha : trial_alpha;
  return samples < 10 ? std::max(alpha, 1.0 / (samples + 1)) : alpha;  // the first: a plain mean
}

int WorkerController::best_index() const {
  const int allowed = allowed_count();
  int best = -1;
  for (int i = 0; i < allowed; ++i) {
    if (!measured_[i] || !usable(i)) continue;
    // A later candidate only when it shortens the frame by more than the margin, and by enough
    // for the CPU time it adds.
    if (best < 0 || (ema_[i] < ema_[best] * (1.0 - margin) && cost_ratio(i, best) <= 1.0)) best = i;
  }
  if (best >= 0) return best;
  // Nothing measured yet: every worker worth waking, pinned when pinning is an option.
  const int last = allowed - 1;
  return may_unpin && !cores_busy && last > 0 && !candidate(last).pinned ? last - 1 : last;
}

WorkerChoice WorkerController::choose() {
  ++frames_;
  if (hold_ > 0) {  // a trial's later frames: its first ones pay for the move (trial_frames)
    --hold_;
    return current_;
  }
  const int best = best_index();
  const int allowed = allowed_count();
  // The neighbours: the next usable candidate either way.
  int down = best - 1;
  while (down >= 0 && !usable(down)) --down;
  int up = best + 1;
  while (up < allowed && !usable(up)) ++up;
  const bool has_down = down >= 0;
  const bool has_up = up < allowed;
  int next = -1;
  if (has_down || has_up) next = (trial_up_ && has_up) || !has_down ? up : down;
  // A candidate whose learning began but did not end, because the choice moved away from it (one
  // slow first frame does that): it is learnt all the same, however far it now is.
  if (next < 0 || samples_[next] >= kLearnSamples) {
    for (int d = 2; d < allowed; ++d) {
      const int lo = best - d;
      const int hi = best + d;
      if (lo >= 0 && usable(lo) && samples_[lo] > 0 && samples_[lo] < kLearnSamples) {
        next = lo;
        break;
      }
      if (hi < allowed && usable(hi) && samples_[hi] > 0 && samples_[hi] < kLearnSamples) {
        next = hi;
        break;
      }
    }
  }
  // No trials before the choice itself has been measured: there is nothing to compare with (and
  // the frames while settling teach nothing; observe() drops them).
  if (next >= 0 && measured_[best]) {
    // A neighbour behind is tried less often, in proportion: one margin behind as often as
    // explore_every says, twenty margins (2x slower, at the default) 20 times less often, 32 at
    // most. Trying a 2x slower candidate every 160 frames costs 0.6% of the frame time on
    // average.
    // A neighbour measured fewer than kLearnSamples times is tried again after one frame of the
    // choice: a scene learns its neighbours within its first frames (which pay for cold caches
    // anyway), instead of meeting a slow trial every few dozen frames for its first second. A
    // trial runs trial_frames frames, and the interval grows with it: trials take the same
    // share of the frames whatever their length.
    const std::uint32_t length = std::max<std::uint32_t>(trial_frames, 1);
    double every =
        samples_[next] < kLearnSamples ? length + 1.0 : static_cast<double>(explore_every) * length;
    if (measured_[next] && samples_[next] >= kLearnSamples && ema_[best] > 0) {
      // Behind in frame time, or in frame time x CPU time (cpu_weight) for a faster candidate
      // that costs too much CPU: a second worker that saves 3% for 70% more CPU is 1.65x behind.
      const double behind = std::max(ema_[next] / ema_[best], cost_ratio(next, best)) - 1.0;
      every *= std::clamp(behind / margin, 1.0, 32.0);
    }
    if (frames_ - last_trial_ >= static_cast<std::uint32_t>(every)) {
      last_trial_ = frames_;
      trial_up_ = !trial_up_;
      hold_ = length - 1;
      current_ = candidate(next);
      return current_;
    }
  }
  current_ = candidate(best);
  return current_;
}

void WorkerController::observe(const WorkerChoice& choice, double frame_ms, double work_ms,
                               double wake_us, double cpu_ms) {
  const int i = index_of(choice);
  if (i < 0) return;
  // The frames just after a change still move the frame's data between cores: not what the
  // choice costs (see trial_frames).
  run_ = observed_ && choice == previous_ ? run_ + 1 : 1;
  previous_ = choice;
  observed_ = true;
  if (run_ < trial_frames || !(frame_ms > 0) || !std::isfinite(frame_ms)) return;
  if (frames_ <= settle_frames) return;
  const bool in_use = i == best_index();  // measured every frame, or a trial now and then
  const bool stale = frames_ - last_frame_[i] > stale_frames;
  if (samples_[i] < kLearnSamples) {
    // Learning: frame times only ever gain from noise (a hitch, another program), so the
    // estimate is the fastest so far, then the median of the first kLearnSamples: one slow frame
    // neither hides a candidate nor stays in its average.
    double* learnt = learn_ms_[i];
    learnt[samples_[i]] = frame_ms;
    const std::uint32_t n = samples_[i] + 1;
    std::sort(learnt, learnt + n);
    ema_[i] = n < kLearnSamples ? learnt[0] : learnt[n / 2];
  } else {
    const double alpha = alpha_for(in_use, samples_[i], stale);
    // The choice in use, measured every frame, adds the median of its last three frames: one
    // slow frame (a hitch, another program's burst) moves its average not at all, two in a row
    // do. A trial's one measured frame goes in as it is.
    double typical = frame_ms;
    if (in_use) {
      double* recent = recent_ms_[i];
      if (stale || frames_ - last_frame_[i] > 1) recent_count_[i] = 0;
      const std::uint32_t n = recent_count_[i];
      recent[n % kRecent] = frame_ms;
      recent_count_[i] = n + 1 >= 2 * kRecent ? n + 1 - kRecent : n + 1;  // never wraps
      if (n + 1 == 2) typical = std::min(recent[0], recent[1]);
      if (n + 1 >= kRecent)
        typical = std::max(std::min(recent[0], recent[1]),
                           std::min(std::max(recent[0], recent[1]), recent[2]));
    }
    ema_[i] = alpha * typical + (1.0 - alpha) * ema_[i];
  }
  // CPU time hardly gains from a hitch (a thread waiting for a core uses none): a plain moving
  // average, with the frame's rules for the first samples and a long-unmeasured candidate.
  if (cpu_ms > 0 && std::isfinite(cpu_ms)) {
    const double alpha = alpha_for(in_use, cpu_samples_[i], stale);
    cpu_ms_[i] = alpha * cpu_ms + (1.0 - alpha) * cpu_ms_[i];
    ++cpu_samples_[i];
  }
  measured_[i] = true;
  ++samples_[i];
  last_frame_[i] = frames_;
  if (work_ms > 0 && std::isfinite(work_ms))
    work_ms_ = work_ms_ > 0 ? 0.1 * work_ms + 0.9 * work_ms_ : work_ms;
  if (wake_us > 0 && std::isfinite(wake_us))
    wake_us_ = wake_us_ > 0 ? 0.1 * wake_us + 0.9 * wake_us_ : wake_us;
}

void WorkerController::reset() {
  for (int i = 0; i < kMaxCandidates; ++i) {
    ema_[i] = 0;
    cpu_ms_[i] = 0;
    cpu_samples_[i] = 0;
    measured_[i] = false;
    samples_[i] = 0;
    last_frame_[i] = 0;
    recent_count_[i] = 0;
    for (double& ms : learn_ms_[i]) ms = 0;
  }
  frames_ = 0;
  last_trial_ = 0;
  trial_up_ = false;
  hold_ = 0;
  current_ = {};
  previous_ = {};
  observed_ = false;
  run_ = 0;
  work_ms_ = 0;
  wake_us_ = 0;
}

}  // namespace spindle::core
