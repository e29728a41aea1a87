// The Engine: owns the job system, the world, the clocks and the frame graph of stages, and runs
// frames in one of the job modes (single, static, dynamic, tbb).
//
// Usage (a whole game loop):
//
//   spindle::core::EngineConfig config;             // dynamic mode, one worker per core
//   spindle::core::Engine engine(config);
//   engine.world().register_component<Position>("position");
//   engine.world().register_component<Velocity>("velocity");
//   // A system: runs fn over every entity with these components, split into jobs. `const` marks
//   // read-only access; systems whose writes do not conflict run concurrently.
//   engine.add_system<const Velocity, Position>("move",
//       [](spindle::core::StageContext& ctx, spindle::core::Entity, const Velocity& v, Position& p)
//       {
//         p.x += v.x * ctx.dt();
//       });
//   // A stage with its own code (declares what it touches; may split its own work):
//   engine.add_stage({.name = "score", .phase = spindle::core::Phase::Gameplay,  // or your own
//                     .access = spindle::core::Access{}.read<Position>(),
//                     .run = [](spindle::core::StageContext& ctx) { ... ctx.parallel_for(n, fn);
//                     }});
//   engine.add_scene("level1", [](spindle::core::Engine& e) { /* spawn entities */ });
//   engine.switch_scene("level1");
//   while (!engine.quit_requested()) engine.frame(real_delta_ns);  // or engine.step() in tests
//
// Stages run in (phase order, registration order); a stage depends on an earlier one when their
// access conflicts or when it names it in `after` (by name or StageId; an unknown one is an
// error). Simulation stages run once per fixed step, presentation stages (`simulation = false`)
// once per frame after the steps. The engine asks the job system how to run each group of stages
// (JobSystem::stage_policy()): one after another (single, static) or as a graph of jobs (dynamic,
// tbb), where dynamic mode's StagePlanner (stage_planner.h) shares the workers out every frame.
// The world hash after N steps is the same in every mode and worker count. A frame allocates
// nothing once the graph is built. The reasons and the planner's formulas: docs/engine.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <spindle/base/log.h>
#include <spindle/base/result.h>
#include <spindle/base/time.h>
#include <spindle/ecs/world.h>
#include <spindle/engine/phase.h>
#include <spindle/engine/worker_controller.h>
#include <spindle/jobs/job_graph.h>
#include <spindle/jobs/job_system.h>

namespace spindle::core {

class Engine;
class MemoryBudget;

// The component (or resource) types a stage reads and writes.
struct Access {
  std::vector<TypeId> reads;
  std::vector<TypeId> writes;

  template <class... T>
  Access read() && {
    (reads.push_back(type_id<T>()), ...);
    return std::move(*this);
  }
  template <class... T>
  Access write() && {
    (writes.push_back(type_id<T>()), ...);
    return std::move(*this);
  }
  // Whether running these two at once could race.
  bool conflicts(const Access& other) const;
};

class StageContext;

using StageId = std::uint16_t;

// A stage named in StageDesc::after: by name (looked up when the graph is built) or by id.
class StageRef {
 public:
  StageRef(const char* name) : name_(name) {}  // NOLINT: implicit, so {"a", "b"} reads well
  StageRef(std::string name) : name_(std::move(name)) {}
  StageRef(std::string_view name) : name_(name) {}
  StageRef(StageId id) : id_(id) {}
  bool by_id() const { return id_ >= 0; }
  StageId id() const { return static_cast<StageId>(id_); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  int id_ = -1;
};

struct StageDesc {
  const char* name = "stage";  // must outlive the engine (a literal)
  Phase phase = Phase::Gameplay;
  Access access{};
  // Stages that must finish first, by name or StageId, in the same phase or an earlier one. A
  // name no stage has (or an id out of range) is an error when the graph is built.
  std::vector<StageRef> after{};
  std::function<void(StageContext&)> run{};
  bool simulation = true;  // false: once per frame after the simulation steps (render, audio)
};
// Stage i books its jobs under job tag i + 1 (tag 0 is the job system's default).
inline constexpr std::uint32_t kMaxStages = jobs::kMaxTags - 1;

// The allocator's decision for one stage in one frame.
struct Decision {
  StageId stage = 0;
  std::uint16_t workers = 0;
  std::uint32_t split = 0;
  std::uint16_t order = 0;  // 0 starts first
  bool critical = false;    // on the critical path: high priority
  double predicted_ms = 0;  // the cost estimate the decision was made from
};

struct StageTiming {
  std::uint64_t wall_ns = 0;  // from its first job's start to its last job's end
  // Summed own time of its jobs: the stage's, its chunks', and every job they started without a
  // tag of their own (nested ones included, each counted once).
  std::uint64_t cpu_ns = 0;
  std::uint32_t jobs = 0;
  std::uint32_t runs = 0;  // times it ran this frame (simulation stages: once per step)
};

struct FrameStats {
  std::uint64_t frame = 0;          // frame number
  std::uint64_t frame_ns = 0;       // wall time of frame()/step()
  std::uint32_t steps = 0;          // simulation steps run
  std::vector<StageTiming> stages;  // by StageId
  // By participant: the own time of every job it ran this frame (nested jobs and stage code run
  // inline included, each counted once; waiting is not busy).
  std::vector<std::uint64_t> worker_busy_ns;
  // The frame's work: worker_busy_ns summed (what one thread would have to do alone).
  std::uint64_t work_ns = 0;
  // Time of the threads that run jobs in this mode not spent in jobs: threads x frame time - work.
  std::uint64_t idle_ns = 0;
  // CPU time the process used during the frame, every thread (spinning and waking included),
  // read from each thread's own clock: a worker still running at the frame's end counts in full.
  std::uint64_t cpu_ns = 0;
  // With EngineConfig::record_job_graph (0 otherwise): the frame thread's own time outside jobs
  // (the engine's bookkeeping between groups: serial work that is in no job), the longest chain of
  // dependent work, the same with every hand-off between threads paid, and the measured hand-off
  // (jobs/job_graph.h). The frame's whole work is work_ns + serial_ns.
  std::uint64_t serial_ns = 0;
  std::uint64_t span_ns = 0;
  std::uint64_t span_handoff_ns = 0;
  std::uint64_t handoff_ns = 0;
  std::uint32_t jobs = 0;  // jobs recorded (record_job_graph only)
  // Participants the frame could use: all of the mode's, or in dynamic mode the ones the worker
  // controller woke, and whether they kept to their CPUs.
  std::uint32_t active_workers = 1;
  bool pinned = false;
  // Dynamic mode: other programs kept every core busy when the workers were chosen
  // (core::CoresBusyProbe, EngineConfig::unpin_when_cores_busy), so only unpinned ones were.
  bool cores_busy = false;
  // Jobs that ran inline on their submitter this frame because no job slot was free (a parallel
  // stage quietly running serially): raise jobs::Config::jobs_per_worker. Logged as a warning.
  std::uint64_t job_overflows = 0;
};

// What a stage's code gets: the world, the jobs, the time, and a split chosen by the mode.
class StageContext {
 public:
  World& world() const { return *world_; }
  jobs::JobSystem& jobs() const { return *jobs_; }
  Engine& engine() const { return *engine_; }
  const char* name() const { return name_; }
  // Seconds of this step (simulation: the fixed step; presentation: the frame delta).
  float dt() const { return static_cast<float>(ns_to_seconds(dt_ns_)); }
  std::int64_t dt_ns() const { return dt_ns_; }
  std::uint64_t tick() const { return tick_; }  // simulation steps since start
  float alpha() const { return alpha_; }        // presentation: blend previous/current step
  // Chunks the mode/allocator chose for this stage's parallel work.
  std::uint32_t split() const { return split_; }
  // The job tag of this stage: pass it to job-system calls made directly (e.g. a radix sort)
  // so their jobs are booked under the stage in traces.
  std::uint16_t tag() const { return tag_; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), split into about split()
  // chunks, and returns when all are done. Commands recorded through commands() inside fn apply
  // in item order. Each chunk is timed into the stage.
  template <class F>
  void parallel_for(std::uint32_t n, const F& fn);
  // The calling participant's command buffer (origin already set for this stage and chunk).
  CommandBuffer& commands() const;

 private:
  friend class Engine;
  struct Chunk {
    const StageContext* ctx;
    std::uint64_t origin;
  };
  // Origin bits: stage ordinal + 1 (6) | segment (25) | chunk flag (1) | item index (32).
  static constexpr std::uint32_t kMaxSegments = 1u << 25;
  // Ordinal + 1: origin 0 stays for commands recorded outside any stage (between frames).
  std::uint64_t serial_origin(std::uint32_t segment) const {
    return (std::uint64_t{ordinal_ + 1u} << 58) | (std::uint64_t{segment} << 33);
  }

  Engine* engine_ = nullptr;
  World* world_ = nullptr;
  jobs::JobSystem* jobs_ = nullptr;
  const char* name_ = "";
  StageId stage_ = 0;
  std::uint16_t tag_ = 0;
  std::uint16_t ordinal_ = 0;  // position in the deterministic stage order
  jobs::Priority priority_ = jobs::Priority::Normal;
  std::thread::id root_thread_{};  // the thread running the stage's own code
  std::uint32_t split_ = 1;
  std::int64_t dt_ns_ = 0;
  std::uint64_t tick_ = 0;
  float alpha_ = 1;
  mutable std::uint32_t calls_ = 0;  // parallel_for calls so far in this run
};

// A subsystem: adds its components, stages and resources to the engine.
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual const char* name() const = 0;
  virtual void build(Engine& engine) = 0;
};

struct EngineConfig {
  jobs::Mode mode = jobs::Mode::Dynamic;
  std::uint32_t workers = 0;  // participants including the main thread; 0: one per core
  bool pin_workers = true;
  // Job slots per participant (jobs::Config::jobs_per_worker): over it, jobs run inline and
  // FrameStats::job_overflows counts them.
  std::uint32_t jobs_per_worker = 4096;
  std::uint32_t entity_capacity = 65536;
  std::int64_t fixed_step_ns = kNsPerSecond / 60;
  std::uint32_t max_steps_per_frame = 8;
  double ema_alpha = 0.2;
  std::uint32_t oversplit = 4;
  // Dynamic: smallest planned chunk on up to 4 workers; on W more, min_chunk_us * sqrt(3 / (W - 1))
  // (jobs::min_chunk_for(): 8.9 us on 16).
  double min_chunk_us = 20;
  double inline_below_us = 30;  // dynamic: a group estimated below this runs inline
  bool profile = false;         // install the profiler's job hooks (every job becomes a trace zone)
  // Record every frame's job graph (jobs/job_graph.h): FrameStats gets the span, and
  // last_job_graph() the graph to analyse or replay. A few ns per job while the frame runs and a
  // conversion after it (outside frame_ns); the first frames allocate the buffers.
  bool record_job_graph = false;
  // Dynamic mode: wake only the workers that shorten the frame, pinned or not, chosen every frame
  // by measuring (core::WorkerController, worker_controller.h); false: every participant,
  // pinned as pin_workers says, every frame.
  bool adapt_workers = true;
  // Dynamic mode: how much the CPU time a worker costs counts beside the frame time it saves
  // (core::WorkerController::cpu_weight). 1: a worker is woken only if it lowers frame time x CPU
  // time (boids at 100 on 2 cores: 17% shorter frames for 42% more CPU, so one worker); 0: the
  // fastest frame, whatever it costs the machine.
  double worker_cpu_weight = 1.0;
  // Dynamic mode: while other programs keep every core busy (core::CoresBusyProbe: their runnable
  // threads, at least as many as the cores, in each of the last 16 samples 2 ms apart), choose
  // only among candidates not pinned. false: pinned ones stay candidates whatever the load.
  bool unpin_when_cores_busy = true;
  // ... on machines of at most this many cores (0: any size). Measured on 2 cores beside 2 steady
  // loops, not pinning took dynamic from 0.60-0.87x single's speed to 0.92-1.01x; on 16 cores
  // beside 16 loops, pinned dynamic ran at 4.41x single against tbb's 1.00x, and not pinned was
  // never measured there, so a bigger machine keeps the pinned candidates (docs/jobs.md).
  std::uint32_t unpin_when_busy_max_cores = 4;
  // A memory budget (spindle/base/budget.h) the engine books its own data in: the job pool in its
  // arena "jobs", the world in "ecs", the stage graph in "engine" (an arena missing: the caller's
  // current BudgetScope). nullptr: the heap. Takes effect with spindle::heap_guard linked.
  MemoryBudget* memory = nullptr;
};

// Whether dynamic mode, with `config` on this machine, stops pinning its workers while other
// programs keep every core busy: pin_workers and unpin_when_cores_busy set, and the machine's
// cores within unpin_when_busy_max_cores (0: any).
bool unpins_when_cores_busy(const EngineConfig& config);

class Engine {
 public:
  explicit Engine(const EngineConfig& config = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  World& world() { return *world_; }
  const World& world() const { return *world_; }
  jobs::JobSystem& jobs() { return *jobs_; }
  const EngineConfig& config() const;

  // Stages and systems; the graph is rebuilt before the next frame.
  StageId add_stage(StageDesc desc);
  // A per-entity system: fn(StageContext&, Entity, Ts&...) for every entity with all Ts, split
  // into jobs. `const T` is read access, `T` write access.
  // `extra` declares what fn touches besides its components (e.g. a resource it reads).
  template <class... Ts, class F>
  StageId add_system(const char* name, F fn, Phase phase = Phase::Gameplay,
                     std::vector<StageRef> after = {}, Access extra = {});
  // Creates the plugin, keeps it for the engine's lifetime and calls its build().
  template <class P, class... A>
  P& add_plugin(A&&... args) {
    return static_cast<P&>(adopt(std::make_unique<P>(std::forward<A>(args)...)));
  }
  // The plugin added first whose name() is `name` ("transforms", "physics"), or null: for code
  // that needs a plugin another part of the game may have added already.
  Plugin* find_plugin(std::string_view name) const;
  std::uint32_t stage_count() const;
  const char* stage_name(StageId id) const;
  // -1 when there is no such stage.
  int find_stage(std::string_view name) const;
  // The deterministic stage order and the edges (built lazily; forces a build).
  std::span<const StageId> stage_order();
  bool depends_on(StageId later, StageId earlier);  // path earlier -> later
  // Pairs of conflicting stages ordered only by registration (no `after`, same phase).
  std::vector<std::pair<StageId, StageId>> implicit_orders();
  // Adds `earlier` to the `after` of the stage named `stage`: for stages that code which does
  // not know each other registered (two plugins writing one component), so the game can declare
  // their order. False, and nothing changes, when no stage is named `stage`; an `earlier` that
  // names no stage is the graph's error, as in StageDesc::after.
  bool run_after(std::string_view stage, StageRef earlier);
  // Builds the graph if it changed. An error names the stage whose `after` names no stage (or an
  // id out of range); frame() and step() stop on that error (an assert, with the same message).
  Status check_graph();

  // Scenes: switching destroys every entity (entities with a Persistent component stay) and
  // runs the next scene's setup, at the start of the next frame.
  void add_scene(std::string name, std::function<void(Engine&)> setup);
  bool switch_scene(std::string_view name);  // false: no such scene
  const std::string& scene() const;

  // Runs one frame: fixed simulation steps for `delta_ns` of game time (0 to
  // max_steps_per_frame of them), then presentation.
  void frame(std::int64_t delta_ns);
  // Exactly one simulation step and one presentation (tests and load tests): a frame of one step.
  void step();
  // Between frames.
  void set_mode(jobs::Mode mode);
  jobs::Mode mode() const { return jobs_->mode(); }

  GameClock& game_clock();
  std::uint64_t tick() const;
  std::uint64_t frame_number() const;
  // The last frame that finished: during a frame (from a stage or hook), the one before it.
  const FrameStats& last_frame() const;
  // The job graph of the last frame (EngineConfig::record_job_graph), or null.
  const jobs::JobGraph* last_job_graph() const;
  // The planner's decisions of the last frame (dynamic mode; empty otherwise).
  std::span<const Decision> last_decisions() const;
  // Cost estimate (ms) per stage that the allocator works from.
  double stage_estimate_ms(StageId id) const;
  Phase stage_phase(StageId id) const;

  // Called at the start of every frame, before its simulation steps, in the order added.
  void add_frame_hook(std::function<void(Engine&)> hook);
  // Called at the start of every simulation step, before its stages, in the order added (input
  // polling is one: see gameplay/input.h). A frame that runs no step calls none.
  void add_step_hook(std::function<void(Engine&)> hook);

  void request_quit();
  bool quit_requested() const;

 private:
  friend class StageContext;
  struct Impl;  // the frame graph, timings, scenes: core/engine/src/engine_impl.h
  Plugin& adopt(std::unique_ptr<Plugin> plugin);

  std::unique_ptr<Impl> impl_;
  // Cached from impl_ for the inline accessors.
  World* world_;
  jobs::JobSystem* jobs_;
};

// Entities with this component survive scene switches.
struct Persistent {
  std::uint8_t unused = 0;
};

// --- templates ---------------------------------------------------------------------------------

namespace detail {
// The StageContext whose parallel_for chunk the calling thread is running, if any.
const StageContext*& current_chunk();

// A thread entering a stage or a chunk may be in the middle of another stage's work (helping
// while it waits): this keeps that work's recording state and puts it back on leaving, also
// when the stage or chunk throws.
class RecordingGuard {
 public:
  RecordingGuard(CommandBuffer& cmd, const StageContext* inner)
      : cmd_(cmd), mark_(cmd.mark()), chunk_(current_chunk()), outer_(chunk_) {
    chunk_ = inner;
  }
  ~RecordingGuard() {
    cmd_.restore(mark_);
    chunk_ = outer_;
  }
  RecordingGuard(const RecordingGuard&) = delete;
  RecordingGuard& operator=(const RecordingGuard&) = delete;

 private:
  CommandBuffer& cmd_;
  CommandBuffer::Mark mark_;
  const StageContext*& chunk_;
  const StageContext* outer_;
};
}  // namespace detail

template <class F>
void StageContext::parallel_for(std::uint32_t n, const F& fn) {
  if (detail::current_chunk() == this || std::this_thread::get_id() != root_thread_) {
    // Called from inside one of this stage's own chunks (or from a job the stage submitted
    // itself): run inline, under the caller's origin, so commands stay in item order and the
    // stage's bookkeeping is touched by its root thread only.
    if (n > 0) fn(0u, n);
    return;
  }
  const std::uint32_t call = calls_++;
  SPINDLE_ASSERTF(call + 1 < kMaxSegments, "stage '%s': at most %u parallel_for calls per run",
                  name_, kMaxSegments - 1);
  if (n == 0) return;
  const std::uint32_t chunks = split_ < n ? split_ : n;
  const std::size_t grain = (static_cast<std::size_t>(n) + chunks - 1) / chunks;
  // Serial code between calls k-1 and k records under segment k with the chunk flag clear,
  // chunks of call k under segment k with the flag set: commands sort in program order, chunk
  // items in item order, whatever the split.
  const std::uint64_t base = serial_origin(call) | (std::uint64_t{1} << 32);
  auto body = [this, base, &fn](std::size_t b, std::size_t e) {
    CommandBuffer& cmd = world_->commands().local(*jobs_);
    const detail::RecordingGuard guard(cmd, this);
    cmd.set_origin(base | b);
    fn(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e));
  };
  CommandBuffer& cmd = world_->commands().local(*jobs_);
  if (chunks <= 1) {
    body(0, n);
  } else {
    jobs_->parallel_for_range(0, n, grain, body, jobs::JobDesc{name_, tag_, priority_});
  }
  cmd.set_origin(serial_origin(call + 1));
}

template <class... Ts, class F>
StageId Engine::add_system(const char* name, F fn, Phase phase, std::vector<StageRef> after,
                           Access extra) {
  (world().register_component<std::remove_const_t<Ts>>(), ...);
  // Every pair of the system's storages: queries then know when they share dense order.
  const TypeId ids[] = {type_id<std::remove_const_t<Ts>>()...};
  for (std::size_t a = 0; a < sizeof...(Ts); ++a)
    for (std::size_t b = a + 1; b < sizeof...(Ts); ++b) world_->track_order(ids[a], ids[b]);
  Access access = std::move(extra);
  ((std::is_const_v<Ts> ? access.reads : access.writes)
       .push_back(type_id<std::remove_const_t<Ts>>()),
   ...);
  StageDesc desc;
  desc.name = name;
  desc.phase = phase;
  desc.access = std::move(access);
  desc.after = std::move(after);
  desc.run = [fn = std::move(fn)](StageContext& ctx) {
    const Query<Ts...> query = ctx.world().template query<Ts...>();
    ctx.parallel_for(query.size(), [&](std::uint32_t b, std::uint32_t e) {
      query.each_range(b, e,
                       [&](Entity entity, Ts&... components) { fn(ctx, entity, components...); });
    });
  };
  return add_stage(std::move(desc));
}

}  // namespace spindle::core
