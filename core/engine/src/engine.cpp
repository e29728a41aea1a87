#include <spindle/engine/engine.h>

#include <algorithm>
#include <cmath>

#include <spindle/base/profiler.h>

namespace spindle::core {

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::Input:
      return "input";
    case Phase::Gameplay:
      return "gameplay";
    case Phase::Physics:
      return "physics";
    case Phase::Transforms:
      return "transforms";
    case Phase::Animation:
      return "animation";
    case Phase::RenderPrep:
      return "render_prep";
    case Phase::Render:
      return "render";
    case Phase::Audio:
      return "audio";
  }
  return "?";
}

bool Access::conflicts(const Access& other) const {
  auto touches = [](const std::vector<TypeId>& set, TypeId t) {
    return std::find(set.begin(), set.end(), t) != set.end();
  };
  for (TypeId w : writes) {
    if (touches(other.writes, w) || touches(other.reads, w)) return true;
  }
  for (TypeId w : other.writes) {
    if (touches(reads, w)) return true;
  }
  return false;
}

// --- StageContext ------------------------------------------------------------------------------

namespace detail {
const StageContext*& current_chunk() {
  thread_local const StageContext* chunk = nullptr;
  return chunk;
}
}  // namespace detail

void StageContext::chunk_done(std::uint64_t begin_ns) const {
  const std::uint64_t d = monotonic_ns() - begin_ns;
  Engine::Stage& s = *engine_->stages_[stage_];
  s.cpu_ns.fetch_add(d, std::memory_order_relaxed);
  s.jobs.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t slot = world_->commands().slot(*jobs_);
  if (slot < engine_->worker_clocks_.size())
    engine_->worker_clocks_[slot].busy_ns.fetch_add(d, std::memory_order_relaxed);
}

CommandBuffer& StageContext::commands() const {
  return world_->commands().local(*jobs_);
}

// --- Engine ------------------------------------------------------------------------------------

namespace {
jobs::Config job_config(const EngineConfig& c) {
  jobs::Config j;
  j.workers = c.workers;
  j.mode = jobs::mode_available(c.mode) ? c.mode : jobs::Mode::Single;
  j.pin_workers = c.pin_workers;
  j.pin_main_thread = c.pin_workers;
  j.jobs_per_worker = c.jobs_per_worker;
  j.log = &job_log_adapter;
  if (c.profile) j.hooks = profiler::job_hooks();
  return j;
}
}  // namespace

Engine::Engine(const EngineConfig& config)
    : config_(config),
      jobs_(std::make_unique<jobs::JobSystem>(job_config(config))),
      world_(config.entity_capacity),
      game_clock_(config.fixed_step_ns),
      fixed_(config.fixed_step_ns, config.max_steps_per_frame) {
  if (!jobs::mode_available(config.mode)) {
    SPINDLE_LOG_WARNING(Core, "engine: mode %s is not available in this build; using single",
                        jobs::to_string(config.mode));
  }
  // Per participant, not per thread of the current mode: set_mode() may start the workers later.
  const std::uint32_t participants = jobs_->participant_count();
  world_.commands().resize(participants);
  // One clock per participant, then one per external command-buffer slot (oneTBB's threads).
  worker_clocks_ = std::vector<WorkerClock>(participants + CommandBuffers::kExternalSlots);
  stats_.worker_busy_ns.assign(participants, 0);
  stages_.reserve(kMaxStages);
}

Engine::~Engine() = default;

StageId Engine::add_stage(StageDesc desc) {
  SPINDLE_ASSERTF(stages_.size() < kMaxStages, "at most %u stages", kMaxStages);
  SPINDLE_ASSERT(desc.run != nullptr, "a stage has a run function");
  auto stage = std::make_unique<Stage>();
  stage->desc = std::move(desc);
  const auto id = static_cast<StageId>(stages_.size());
  // Tag 0 is the job system's default; stage i books its jobs under tag i + 1.
  stage->tag = static_cast<std::uint16_t>(std::min<std::uint32_t>(id + 1, jobs::kMaxTags - 1));
  stages_.push_back(std::move(stage));
  graph_dirty_ = true;
  return id;
}

const char* Engine::stage_name(StageId id) const {
  return stages_[id]->desc.name;
}
double Engine::stage_estimate_ms(StageId id) const {
  return stages_[id]->ema_ms;
}
Phase Engine::stage_phase(StageId id) const {
  return stages_[id]->desc.phase;
}

int Engine::find_stage(std::string_view name) const {
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    if (name == stages_[i]->desc.name) return static_cast<int>(i);
  }
  return -1;
}

std::span<const StageId> Engine::stage_order() {
  if (graph_dirty_) build_graph();
  return order_;
}

bool Engine::depends_on(StageId later, StageId earlier) {
  if (graph_dirty_) build_graph();
  return (stages_[earlier]->reach >> later) & 1u;
}

std::vector<std::pair<StageId, StageId>> Engine::implicit_orders() {
  if (graph_dirty_) build_graph();
  // declared[i], bit j: stage i comes after stage j through a chain of `after` names.
  const std::size_t n = stages_.size();
  std::vector<std::uint64_t> declared(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (const std::string& name : stages_[i]->desc.after)
      if (const int j = find_stage(name); j >= 0) declared[i] |= std::uint64_t{1} << j;
  for (bool grew = true; grew;) {  // transitive closure; at most kMaxStages rounds
    grew = false;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t all = declared[i];
      for (std::size_t j = 0; j < n; ++j)
        if (declared[i] >> j & 1) all |= declared[j];
      grew |= all != declared[i];
      declared[i] = all;
    }
  }
  std::vector<std::pair<StageId, StageId>> out;
  for (std::size_t a = 0; a < order_.size(); ++a) {
    for (std::size_t b = a + 1; b < order_.size(); ++b) {
      const StageId ia = order_[a], ib = order_[b];
      const Stage& sa = *stages_[ia];
      const Stage& sb = *stages_[ib];
      if (sa.desc.simulation != sb.desc.simulation || sa.desc.phase != sb.desc.phase) continue;
      if (!sa.desc.access.conflicts(sb.desc.access)) continue;
      if ((declared[ib] >> ia & 1) || (declared[ia] >> ib & 1)) continue;
      out.emplace_back(ia, ib);
    }
  }
  return out;
}

void Engine::build_graph() {
  const auto n = static_cast<StageId>(stages_.size());
  order_.resize(n);
  for (StageId i = 0; i < n; ++i) order_[i] = i;
  // Simulation before presentation, then phase, then registration.
  std::stable_sort(order_.begin(), order_.end(), [&](StageId a, StageId b) {
    const StageDesc& da = stages_[a]->desc;
    const StageDesc& db = stages_[b]->desc;
    if (da.simulation != db.simulation) return da.simulation;
    return da.phase < db.phase;
  });
  for (StageId i = 0; i < n; ++i) {
    Stage& s = *stages_[i];
    s.successors.clear();
    s.successors.reserve(n);
    s.predecessors = 0;
    s.reach = 0;
    s.reached = 0;
  }
  for (StageId k = 0; k < n; ++k) stages_[order_[k]]->ordinal = k;
  for (StageId b = 0; b < n; ++b) {
    for (StageId a = 0; a < b; ++a) {
      Stage& sa = *stages_[order_[a]];
      Stage& sb = *stages_[order_[b]];
      if (sa.desc.simulation != sb.desc.simulation) continue;  // separate graphs
      const bool named = std::find(sb.desc.after.begin(), sb.desc.after.end(), sa.desc.name) !=
                         sb.desc.after.end();
      if (named || sa.desc.access.conflicts(sb.desc.access)) {
        sa.successors.push_back(order_[b]);
        ++sb.predecessors;
      }
    }
  }
  for (StageId b = 0; b < n; ++b) {
    const Stage& sb = *stages_[order_[b]];
    for (const std::string& name : sb.desc.after) {
      const int a = find_stage(name);
      if (a < 0) {
        SPINDLE_LOG_WARNING(Core, "engine: stage '%s' runs after unknown stage '%s'", sb.desc.name,
                            name.c_str());
      } else if (stages_[a]->ordinal > sb.ordinal) {
        SPINDLE_LOG_WARNING(Core,
                            "engine: stage '%s' asks to run after '%s', which comes later (a later "
                            "phase, or registered later in the same phase); the order (phase, "
                            "registration) wins: register '%s' first",
                            sb.desc.name, name.c_str(), name.c_str());
      }
    }
  }
  // Reachability, in reverse order so successors are complete.
  for (StageId k = n; k-- > 0;) {
    Stage& s = *stages_[order_[k]];
    for (StageId succ : s.successors) s.reach |= (std::uint64_t{1} << succ) | stages_[succ]->reach;
  }
  for (StageId i = 0; i < n; ++i) {
    for (StageId j = 0; j < n; ++j) {
      if ((stages_[i]->reach >> j) & 1u) stages_[j]->reached |= std::uint64_t{1} << i;
    }
  }
  sim_order_.clear();
  present_order_.clear();
  for (StageId id : order_)
    (stages_[id]->desc.simulation ? sim_order_ : present_order_).push_back(id);
  launch_scratch_.clear();
  launch_scratch_.reserve(n);
  decisions_.assign(n, Decision{});
  decided_frame_.assign(n, 0);
  stats_.stages.assign(n, StageTiming{});
  graph_dirty_ = false;

  for (const auto& [a, b] : implicit_orders()) {
    SPINDLE_LOG_WARNING(Core,
                        "engine: stages '%s' and '%s' conflict and have no declared order; they "
                        "run in registration order (add `after` to make it explicit)",
                        stages_[a]->desc.name, stages_[b]->desc.name);
  }
}

void Engine::add_scene(std::string name, std::function<void(Engine&)> setup) {
  for (Scene& s : scenes_) {
    if (s.name == name) {
      s.setup = std::move(setup);
      return;
    }
  }
  scenes_.push_back(Scene{std::move(name), std::move(setup)});
}

bool Engine::switch_scene(std::string_view name) {
  for (std::size_t i = 0; i < scenes_.size(); ++i) {
    if (scenes_[i].name == name) {
      pending_scene_ = static_cast<int>(i);
      return true;
    }
  }
  SPINDLE_LOG_ERROR(Core, "engine: no scene named '%.*s'", static_cast<int>(name.size()),
                    name.data());
  return false;
}

void Engine::apply_scene_switch() {
  if (pending_scene_ < 0) return;
  const Scene& next = scenes_[static_cast<std::size_t>(pending_scene_)];
  pending_scene_ = -1;
  world_.apply_commands();
  const ComponentStorage<Persistent>* keep = world_.storage<Persistent>();
  for (std::uint32_t i = 0; i < world_.capacity(); ++i) {
    const Entity e = world_.entity_at(i);
    if (!e.is_null() && (keep == nullptr || !keep->has(i))) world_.destroy(e);
  }
  scene_ = next.name;
  // A copy: the setup may add scenes (and so move the one running).
  const std::function<void(Engine&)> setup = next.setup;
  if (setup) setup(*this);
}

void Engine::set_mode(jobs::Mode mode) {
  if (!jobs::mode_available(mode)) {
    SPINDLE_LOG_ERROR(Core, "engine: mode %s is not available in this build",
                      jobs::to_string(mode));
    return;
  }
  jobs_->set_mode(mode);
}

void Engine::decide(std::span<const StageId> group) {
  const jobs::Mode mode = jobs_->mode();
  const std::uint32_t workers = jobs_->worker_count();
  for (StageId id : group) {
    Stage& s = *stages_[id];
    s.critical = false;
    s.launch_rank = 0;
    s.workers = static_cast<std::uint16_t>(workers);
    switch (mode) {
      case jobs::Mode::Single:
        s.split = 1;
        break;
      case jobs::Mode::Static:
        s.split = workers;
        break;
      case jobs::Mode::Tbb:
        s.split = workers * config_.oversplit;
        break;
      case jobs::Mode::Dynamic:
        break;
    }
  }
  run_inline_ = false;
  if (mode != jobs::Mode::Dynamic) return;

  // A cheap group runs inline (once every stage has been measured).
  double total_ms = 0;
  bool measured = true;
  for (StageId id : group) {
    total_ms += stages_[id]->ema_ms;
    measured = measured && stages_[id]->measured;
  }
  run_inline_ = measured && total_ms * 1000.0 < config_.inline_below_us;

  // Shares: each stage against the stages that may run beside it.
  for (StageId id : group) {
    Stage& s = *stages_[id];
    const std::uint64_t related = s.reach | s.reached | (std::uint64_t{1} << id);
    double concurrent = s.ema_ms;
    for (StageId other : group) {
      if (!((related >> other) & 1u)) concurrent += stages_[other]->ema_ms;
    }
    double share = concurrent > 0 ? s.ema_ms / concurrent : 1.0;
    if (!std::isfinite(share)) share = 1.0;
    long w = std::clamp<long>(std::lround(workers * share), 1, static_cast<long>(workers));
    const auto most = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(w) * config_.oversplit);
    // Measured stages: no chunk planned below min_chunk_us.
    const double by_cost = config_.min_chunk_us > 0 ? s.ema_ms * 1000.0 / config_.min_chunk_us
                                                    : static_cast<double>(most);
    s.split = !s.measured
                  ? most
                  : static_cast<std::uint32_t>(std::clamp<double>(std::floor(by_cost), 1.0, most));
    if (run_inline_) s.split = 1;
    w = std::min<long>(w,
                       static_cast<long>(s.split));  // a stage cannot use more workers than chunks
    s.workers = static_cast<std::uint16_t>(w);
  }
  // Critical path: the chain with the largest summed estimate. chain_ms = own estimate plus the
  // longest chain among successors (the group is in topological order, so walk it backwards).
  double best = -1;
  StageId start = group.front();
  for (std::size_t k = group.size(); k-- > 0;) {
    Stage& s = *stages_[group[k]];
    double tail = 0;
    for (StageId succ : s.successors) tail = std::max(tail, stages_[succ]->chain_ms);
    s.chain_ms = s.ema_ms + tail;
    if (s.predecessors == 0 && s.chain_ms > best) {
      best = s.chain_ms;
      start = group[k];
    }
  }
  for (StageId cur = start;;) {
    Stage& s = *stages_[cur];
    s.critical = true;
    if (s.successors.empty()) break;
    StageId next = s.successors.front();
    for (StageId succ : s.successors) {
      if (stages_[succ]->chain_ms > stages_[next]->chain_ms) next = succ;
    }
    cur = next;
  }
  // Launch order: longest first.
  launch_scratch_.assign(group.begin(), group.end());
  // Insertion sort: stable, allocation-free (std::stable_sort takes a heap buffer), and the
  // group has at most kMaxStages entries.
  for (std::size_t i = 1; i < launch_scratch_.size(); ++i) {
    const StageId v = launch_scratch_[i];
    std::size_t j = i;
    for (; j > 0 && stages_[launch_scratch_[j - 1]]->ema_ms < stages_[v]->ema_ms; --j)
      launch_scratch_[j] = launch_scratch_[j - 1];
    launch_scratch_[j] = v;
  }
  for (std::size_t r = 0; r < launch_scratch_.size(); ++r)
    stages_[launch_scratch_[r]]->launch_rank = static_cast<std::uint16_t>(r);
  // Successors are released most costly first, too.
  for (StageId id : group) {
    std::vector<StageId>& succ = stages_[id]->successors;
    for (std::size_t i = 1; i < succ.size(); ++i) {
      const StageId v = succ[i];
      std::size_t j = i;
      for (; j > 0 && stages_[succ[j - 1]]->ema_ms < stages_[v]->ema_ms; --j) succ[j] = succ[j - 1];
      succ[j] = v;
    }
  }
  // Record the first decision of each stage in this frame (later simulation steps of the same
  // frame repeat it with the same estimates).
  for (StageId id : group) {
    const Stage& s = *stages_[id];
    if (decisions_used_ >= decisions_.size() || decided_frame_[id] == frame_number_ + 1) continue;
    decided_frame_[id] = frame_number_ + 1;
    decisions_[decisions_used_++] =
        Decision{id, s.workers, s.split, s.launch_rank, s.critical, s.ema_ms};
  }
}

void Engine::run_stage(StageId id, std::int64_t dt_ns, float alpha) {
  Stage& s = *stages_[id];
  StageContext ctx;
  ctx.engine_ = this;
  ctx.world_ = &world_;
  ctx.jobs_ = jobs_.get();
  ctx.name_ = s.desc.name;
  ctx.stage_ = id;
  ctx.tag_ = s.tag;
  ctx.ordinal_ = s.ordinal;
  ctx.split_ = s.split;
  ctx.dt_ns_ = dt_ns;
  ctx.tick_ = tick_;
  ctx.alpha_ = alpha;
  ctx.priority_ = s.critical ? jobs::Priority::High : jobs::Priority::Normal;
  ctx.root_thread_ = std::this_thread::get_id();
  // This thread may be inside another stage's wait, helping: keep that stage's recording state.
  CommandBuffer& cmd = world_.commands().local(*jobs_);
  const detail::RecordingGuard guard(cmd, nullptr);
  cmd.set_origin(ctx.serial_origin(0));
  const std::uint64_t begin = monotonic_ns();
  s.begin_ns = begin;
  s.desc.run(ctx);
  const std::uint64_t end = monotonic_ns();
  s.end_ns = end;
  // The stage's own serial time (outside its parallel_for calls) is one more job's worth.
  const std::uint64_t self = (end - begin) - std::min(end - begin, ctx.nested_ns_);
  s.cpu_ns.fetch_add(self, std::memory_order_relaxed);
  s.jobs.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t slot = world_.commands().slot(*jobs_);
  if (slot < worker_clocks_.size())
    worker_clocks_[slot].busy_ns.fetch_add(self, std::memory_order_relaxed);
}

void Engine::launch(StageId id) {
  Stage& s = *stages_[id];
  const jobs::JobDesc desc{s.desc.name, s.tag,
                           s.critical ? jobs::Priority::High : jobs::Priority::Normal};
  jobs_->run(group_done_, desc, [this, id] {
    run_stage(id, run_dt_ns_, run_alpha_);
    // Release successors (sorted most costly first by decide()) in reverse: this thread's deque
    // is last-in first-out, so it runs the most costly one next and thieves take the rest.
    const std::vector<StageId>& succ = stages_[id]->successors;
    for (std::size_t k = succ.size(); k-- > 0;) {
      if (stages_[succ[k]]->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) launch(succ[k]);
    }
  });
}

void Engine::run_group(std::span<const StageId> group, std::int64_t dt_ns, float alpha) {
  if (group.empty()) return;
  world_.refresh_order();  // structural changes happen between groups only
  decide(group);
  const jobs::Mode mode = jobs_->mode();
  for (StageId id : group) {
    Stage& s = *stages_[id];
    s.cpu_ns.store(0, std::memory_order_relaxed);
    s.jobs.store(0, std::memory_order_relaxed);
  }
  if (mode == jobs::Mode::Single || mode == jobs::Mode::Static || run_inline_) {
    for (StageId id : group) {
      // Stages run inline here, not as jobs: give the profiler a zone for each.
      struct Zone {
        bool on;
        ~Zone() {
          if (on) profiler::end_zone();
        }
      } zone{config_.profile};
      if (zone.on) profiler::begin_zone(stages_[id]->desc.name);
      run_stage(id, dt_ns, alpha);
    }
  } else {
    run_dt_ns_ = dt_ns;
    run_alpha_ = alpha;
    for (StageId id : group)
      stages_[id]->remaining.store(stages_[id]->predecessors, std::memory_order_relaxed);
    // Roots, longest first. The submitting thread's own deque is last-in first-out while
    // thieves take from the other end, so push the longest last: this thread starts it at once
    // and a woken worker steals the next longest.
    if (mode == jobs::Mode::Dynamic) {
      for (std::size_t k = launch_scratch_.size(); k-- > 0;) {
        if (stages_[launch_scratch_[k]]->predecessors == 0) launch(launch_scratch_[k]);
      }
    } else {
      for (StageId id : group) {
        if (stages_[id]->predecessors == 0) launch(id);
      }
    }
    jobs_->wait(group_done_);
  }
  for (StageId id : group) {
    Stage& s = *stages_[id];
    StageTiming& t = stats_.stages[id];
    t.wall_ns += s.end_ns - s.begin_ns;
    const std::uint64_t cpu = s.cpu_ns.load(std::memory_order_relaxed);
    t.cpu_ns += cpu;
    t.jobs += s.jobs.load(std::memory_order_relaxed);
    t.runs += 1;
  }
}

void Engine::begin_frame_stats() {
  for (StageTiming& t : stats_.stages) t = StageTiming{};
  for (WorkerClock& w : worker_clocks_) w.busy_ns.store(0, std::memory_order_relaxed);
  stats_.steps = 0;
  decisions_used_ = 0;
  overflows_before_ = jobs_->stats().inline_overflows;
}

void Engine::end_frame_stats(std::uint64_t begin_ns) {
  stats_.frame = frame_number_;
  stats_.frame_ns = monotonic_ns() - begin_ns;
  std::uint64_t busy = 0;
  const std::size_t participants = stats_.worker_busy_ns.size();
  for (std::size_t w = 0; w < participants; ++w) stats_.worker_busy_ns[w] = 0;
  for (std::size_t w = 0; w < worker_clocks_.size(); ++w) {
    const std::uint64_t ns = worker_clocks_[w].busy_ns.load(std::memory_order_relaxed);
    // Threads that are not participants (oneTBB's, in the tbb mode) are booked on participants
    // 1.. in the order they first ran stage work: the pool has that many threads.
    const std::size_t slot =
        w < participants ? w : (participants > 1 ? 1 + (w - participants) % (participants - 1) : 0);
    stats_.worker_busy_ns[slot] += ns;
    busy += ns;
  }
  const std::uint64_t capacity = stats_.frame_ns * jobs_->worker_count();
  stats_.idle_ns = capacity > busy ? capacity - busy : 0;
  note_job_overflows();
  // Cost estimates for the next frame: EMA of CPU time per frame.
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    Stage& s = *stages_[i];
    if (stats_.stages[i].runs == 0) continue;
    // Per run: a frame that catches up several simulation steps must not look several times
    // as costly to decisions made per step.
    const double ms = static_cast<double>(stats_.stages[i].cpu_ns) * 1e-6 / stats_.stages[i].runs;
    s.ema_ms = s.measured ? config_.ema_alpha * ms + (1 - config_.ema_alpha) * s.ema_ms : ms;
    s.measured = true;
  }
  ++frame_number_;
}

void Engine::note_job_overflows() {
  const std::uint64_t total = jobs_->stats().inline_overflows;
  // reset_stats() between frames (the load test does) restarts the count.
  stats_.job_overflows = total >= overflows_before_ ? total - overflows_before_ : total;
  if (stats_.job_overflows == 0) return;
  ++overflow_frames_;
  // Every overflowing frame is counted in FrameStats; the log says so at most once a second.
  const std::uint64_t now = monotonic_ns();
  if (overflow_logged_ns_ != 0 && now - overflow_logged_ns_ < 1'000'000'000) return;
  overflow_logged_ns_ = now;
  SPINDLE_LOG_WARNING(Core,
                      "frame %llu: %llu job(s) ran inline for lack of a job slot (%llu frame(s) "
                      "overflowed so far): raise jobs::Config::jobs_per_worker (now %u)",
                      static_cast<unsigned long long>(frame_number_),
                      static_cast<unsigned long long>(stats_.job_overflows),
                      static_cast<unsigned long long>(overflow_frames_),
                      jobs_->config().jobs_per_worker);
}

void Engine::simulate_step() {
  world_.begin_event_step();
  run_group(sim_order_, config_.fixed_step_ns, 1.0f);
  world_.apply_commands();
  world_.end_event_step();
  ++tick_;
  ++stats_.steps;
}

void Engine::present(std::int64_t dt_ns, float alpha) {
  run_group(present_order_, dt_ns, alpha);
  world_.apply_commands();
}

void Engine::add_frame_hook(std::function<void(Engine&)> hook) {
  frame_hooks_.push_back(std::move(hook));
}

void Engine::frame(std::int64_t delta_ns) {
  const std::int64_t game_dt = game_clock_.advance(delta_ns);
  const std::uint32_t steps = fixed_.add(game_dt);
  run_frame(steps, game_dt, static_cast<float>(fixed_.alpha()));
}

void Engine::step() {
  run_frame(1, config_.fixed_step_ns, 1.0f);
}

// One body for frame() and step(), so that a frame of k steps is k step()s to the simulation.
void Engine::run_frame(std::uint32_t steps, std::int64_t present_dt_ns, float alpha) {
  if (graph_dirty_) build_graph();
  apply_scene_switch();
  if (graph_dirty_) build_graph();  // a scene setup may add stages
  const std::uint64_t begin = monotonic_ns();
  begin_frame_stats();
  for (const std::function<void(Engine&)>& hook : frame_hooks_) hook(*this);
  world_.begin_event_frame();
  for (; steps > 0; --steps) simulate_step();
  present(present_dt_ns, alpha);
  end_frame_stats(begin);
}

}  // namespace spindle::core
