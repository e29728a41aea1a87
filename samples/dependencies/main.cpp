// dependencies: jobs that start when other jobs finish, with no thread blocking in between.
//
// Three frames of a small pipeline are submitted at once and waited for once:
//
//   input -+-> physics ---+
//          +-> animation -+-> render -> present -> next frame's input
//   cull (4+ chunks) -----+
//
// run_after(a, b, ...) chains one job after a counter; run_after({&a, &b, &c}, ...) joins several.
// Every job stamps when it started and ended; main() then checks each started after what it
// depends on had ended, and that the results equal plain serial code's.
//
//   spindle_sample_dependencies [--mode single|static|dynamic|tbb] [--workers N]
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <spindle/jobs/job_system.h>

#include "sample_args.h"

using namespace spindle;

constexpr int kFrames = 3;
constexpr std::size_t kObjects = 4096;

// When a job started and ended, in ticks of a clock that every job advances.
struct Stamp {
  int start = -1, end = -1;
};
// fn as a job that stamps itself.
template <class F>
auto stamped(std::atomic<int>& clock, Stamp& stamp, F fn) {
  return [&clock, &stamp, fn] {
    stamp.start = clock++;
    fn();
    stamp.end = clock++;
  };
}

struct Frame;
// The cull loop's body as a plain struct: the non-blocking parallel_for_range references it, so
// it must outlive the jobs (a temporary lambda would not compile).
struct Cull {
  Frame* frame;
  void operator()(std::size_t begin, std::size_t end) const;
};

struct Frame {
  jobs::Counter input_done, physics_done, animation_done, cull_done, render_done, present_done;
  Stamp input, physics, animation, render, present;
  std::uint64_t in = 0, moved = 0, posed = 0, present_value = 0;
  std::atomic<std::uint64_t> visible{0}, culled_objects{0};
  std::uint64_t objects_seen_by_render = 0;
  Cull cull{this};
};

void Cull::operator()(std::size_t begin, std::size_t end) const {
  std::uint64_t seen = 0;
  for (std::size_t i = begin; i < end; ++i) seen += (i % 3 == 0);  // "visible" objects
  frame->visible += seen;
  frame->culled_objects += end - begin;
}

int main(int argc, char** argv) {
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;
  jobs::JobSystem jobs(jobs::Config{.workers = args.workers, .mode = args.mode});

  std::atomic<int> clock{0};
  Frame frames[kFrames];
  for (int n = 0; n < kFrames; ++n) {
    Frame& f = frames[n];
    Frame* prev = n > 0 ? &frames[n - 1] : nullptr;
    // Submit every dependency's jobs before the jobs that run after it: run_after waits for the
    // jobs pending on its dependency when it is called.
    auto input = stamped(clock, f.input, [&f, prev] { f.in = prev ? prev->present_value : 1; });
    if (prev)
      jobs.run_after(prev->present_done, f.input_done, {"input"}, input);
    else
      jobs.run(f.input_done, {"input"}, input);
    jobs.run_after(f.input_done, f.physics_done, {"physics"},
                   stamped(clock, f.physics, [&f] { f.moved = f.in * 3; }));
    jobs.run_after(f.input_done, f.animation_done, {"animation"},
                   stamped(clock, f.animation, [&f] { f.posed = f.in + 7; }));
    // A parallel loop counted on its own counter, not waited for here: it overlaps the chain.
    jobs.parallel_for_range(f.cull_done, 0, kObjects, 1024, f.cull, {"cull"});
    // A join: render starts once physics, animation and every cull chunk have finished.
    jobs.run_after({&f.physics_done, &f.animation_done, &f.cull_done}, f.render_done, {"render"},
                   stamped(clock, f.render, [&f] {
                     f.objects_seen_by_render = f.culled_objects;
                     f.present_value = f.moved + f.posed + f.visible;
                   }));
    jobs.run_after(f.render_done, f.present_done, {"present"}, stamped(clock, f.present, [&f] {
                     f.present_value = f.present_value % 1000003;
                   }));
  }
  // Counters must outlive their jobs: wait for all of them before they go out of scope.
  std::vector<jobs::Counter*> all;
  for (Frame& f : frames)
    all.insert(all.end(), {&f.input_done, &f.physics_done, &f.animation_done, &f.cull_done,
                           &f.render_done, &f.present_done});
  jobs.wait(all);

  bool ordered = true;
  std::uint64_t expected = 1;  // the same pipeline as plain serial code
  for (int n = 0; n < kFrames; ++n) {
    const Frame& f = frames[n];
    const auto after = [&](const Stamp& later, const Stamp& earlier) {
      ordered = ordered && later.start > earlier.end;
    };
    if (n > 0) after(f.input, frames[n - 1].present);
    after(f.physics, f.input);
    after(f.animation, f.input);
    after(f.render, f.physics);
    after(f.render, f.animation);
    after(f.present, f.render);
    ordered = ordered && f.objects_seen_by_render == kObjects;  // every cull chunk was done
    expected = (expected * 3 + expected + 7 + (kObjects + 2) / 3) % 1000003;
    std::printf("dependencies: frame %d: input %llu -> present %llu (render started at tick %d)\n",
                n, static_cast<unsigned long long>(f.in),
                static_cast<unsigned long long>(f.present_value), f.render.start);
  }
  const std::uint64_t last = frames[kFrames - 1].present_value;
  std::printf("dependencies: %s mode, every job after its dependencies: %s, hash %016llx\n",
              jobs::to_string(jobs.mode()), ordered ? "yes" : "NO",
              static_cast<unsigned long long>(last));
  const bool ok = ordered && last == expected;
  if (!ok) std::fprintf(stderr, "dependencies: a job ran before its dependencies\n");
  return ok ? 0 : 1;
}
