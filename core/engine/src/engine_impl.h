// The Engine's private state: the stages and their graph, per-frame timings, the planner's
// scratch, scenes. Private to core/engine (a game compiles engine.h only).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <spindle/base/crash.h>
#include <spindle/base/time.h>
#include <spindle/engine/engine.h>
#include <spindle/engine/stage_planner.h>
#include <spindle/engine/worker_controller.h>
#include <spindle/jobs/job_graph.h>

namespace spindle::core {

struct Engine::Impl {
  struct Stage {
    StageDesc desc;
    std::uint16_t tag = 0;
    double ema_ms = 0;
    bool measured = false;
    std::vector<StageId> successors;
    std::vector<StageId> predecessor_ids;  // the stages `predecessors` counts
    std::uint32_t predecessors = 0;
    std::uint64_t reach = 0;  // bit j: this stage reaches stage j
    // Per run, written by jobs.
    std::atomic<std::uint32_t> remaining{0};
    std::uint32_t record_id = 0;  // its job's id in the frame's recording (0: not recorded)
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    std::uint32_t split = 1;
    std::uint16_t workers = 1;
    bool critical = false;
    std::uint16_t ordinal = 0;
  };
  // A group of stages run together (the simulation step, or the presentation) with the
  // planner's inputs and outputs for it, sized when the graph is built.
  struct Group {
    std::vector<StageId> ids;  // in stage order (topological)
    std::vector<StagePlanInput> inputs;
    std::vector<StagePlan> plans;
    std::vector<std::uint16_t> launch_order;  // group indices
    bool run_inline = false;
  };
  struct Scene {
    std::string name;
    std::function<void(Engine&)> setup;
  };

  Impl(Engine& owner, const EngineConfig& config);

  void build_graph();
  Status resolve_after(std::vector<std::uint64_t>& after_bits) const;
  void build_group(Group& group, bool simulation);
  void decide(Group& group);
  void run_group(Group& group, std::int64_t dt_ns, float alpha);
  void run_stage(StageId id, std::int64_t dt_ns, float alpha);
  void launch(StageId id);
  void run_frame(std::uint32_t steps, std::int64_t present_dt_ns, float alpha);
  void simulate_step();
  void present(std::int64_t dt_ns, float alpha);
  void begin_frame_stats();
  void end_frame_stats(std::uint64_t begin_ns);
  void note_job_overflows();
  void apply_scene_switch();
  int find_stage(std::string_view name) const;

  Engine& owner;
  EngineConfig config;
  std::unique_ptr<jobs::JobSystem> jobs;
  World world;
  std::vector<std::unique_ptr<Plugin>> plugins;
  std::vector<std::unique_ptr<Stage>> stages;
  std::vector<StageId> order;
  Group sim, present_group;
  bool graph_dirty = true;
  Status graph_status;  // the last build's outcome
  GameClock game_clock;
  FixedStep fixed;
  std::uint64_t tick = 0;
  std::uint64_t frame_number = 0;
  // FrameStats::cpu_ns: every thread's own clock, listed again each frame (a job system or a
  // game may have started threads since), so that a worker still running at the frame's end
  // counts in full (process_cpu_ns() would give it to a later frame).
  ProcessCpuTimer cpu_timer;
  CoresBusyProbe cores_probe;    // dynamic mode: whether other programs keep every core busy
  bool ask_cores_probe = false;  // unpins_when_cores_busy(config)
  // Job-system overflows before this frame, and the warning's throttle.
  std::uint64_t overflows_before = 0;
  std::uint64_t overflow_frames = 0;
  std::uint64_t overflow_logged_ns = 0;
  FrameStats stats;      // the frame in progress (between frames: the last one)
  FrameStats completed;  // the last frame that finished: what last_frame() shows
  // The job system's counters when the frame (busy) or the group run (tags) began: the frame's
  // and each stage's share is the difference.
  std::vector<std::uint64_t> busy_before;
  std::uint64_t wakes_before = 0, wake_ns_before = 0;
  // Dynamic mode: how many workers this frame wakes (EngineConfig::adapt_workers).
  WorkerController controller;
  WorkerChoice choice;
  std::uint32_t active = 1;
  std::vector<jobs::TagStats> tags_before;
  jobs::JobGraph graph;  // the last recorded frame (EngineConfig::record_job_graph)
  bool graph_valid = false;
  std::vector<Decision> decisions;
  std::size_t decisions_used = 0;
  std::vector<std::uint64_t> decided_frame;
  jobs::Counter group_done;
  std::int64_t run_dt_ns = 0;
  float run_alpha = 1;
  std::vector<Scene> scenes;
  std::string scene;
  int pending_scene = -1;
  bool quit = false;
  std::vector<std::function<void(Engine&)>> frame_hooks;
  std::vector<std::function<void(Engine&)>> step_hooks;

  // For crash reports (core/base/crash.h): the last stages started, a ring written by whichever
  // thread runs a stage, and this engine's section of the report.
  static constexpr std::uint32_t kRecentStages = 16;
  struct RecentStage {
    std::atomic<const char*> name{nullptr};
    std::atomic<std::uint64_t> tick{0};
    std::atomic<bool> finished{false};
  };
  RecentStage recent_stages[kRecentStages];
  std::atomic<std::uint32_t> recent_next{0};
  int crash_section = 0;
  static void write_crash_section(void* self, CrashWriter& out);
  ~Impl();
};

}  // namespace spindle::core
