#include <spindle/engine/engine.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include <spindle/base/budget.h>
#include <spindle/base/profiler.h>

#include "engine_impl.h"

namespace spindle::core {

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

CommandBuffer& StageContext::commands() const {
  return world_->commands().local(*jobs_);
}

// --- Engine: set-up and queries ----------------------------------------------------------------

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

// The arena `name` of the engine's budget, or the caller's current one.
BudgetArena* arena_for(const EngineConfig& c, const char* name) {
  BudgetArena* a = c.memory != nullptr ? c.memory->arena(name) : nullptr;
  return a != nullptr ? a : current_budget_arena();
}

std::unique_ptr<jobs::JobSystem> make_jobs(const EngineConfig& c) {
  BudgetScope scope(arena_for(c, "jobs"));
  return std::make_unique<jobs::JobSystem>(job_config(c));
}

World make_world(const EngineConfig& c) {
  BudgetScope scope(arena_for(c, "ecs"));
  return World(c.entity_capacity);
}

}  // namespace

bool unpins_when_cores_busy(const EngineConfig& config) {
  const std::uint32_t cores = std::max(1u, std::thread::hardware_concurrency());  // as the probe
  return config.pin_workers && config.unpin_when_cores_busy &&
         (config.unpin_when_busy_max_cores == 0 || cores <= config.unpin_when_busy_max_cores);
}

Engine::Impl::Impl(Engine& owner_engine, const EngineConfig& engine_config)
    : owner(owner_engine),
      config(engine_config),
      jobs(make_jobs(engine_config)),
      world(make_world(engine_config)),
      game_clock(engine_config.fixed_step_ns),
      fixed(engine_config.fixed_step_ns, engine_config.max_steps_per_frame),
      ask_cores_probe(unpins_when_cores_busy(engine_config)) {
  if (!jobs::mode_available(config.mode)) {
    SPINDLE_LOG_WARNING(Core, "engine: mode %s is not available in this build; using single",
                        jobs::to_string(config.mode));
  }
  // Per participant, not per thread of the current mode: set_mode() may start the workers later.
  const std::uint32_t participants = jobs->participant_count();
  world.commands().resize(participants);
  // A full world is the "ecs" arena's panic mode: the spawn is refused.
  if (config.memory != nullptr) world.set_panic_arena(config.memory->arena("ecs"));
  busy_before.assign(participants + 1, 0);  // + the slot of outside threads
  tags_before.assign(jobs::kMaxTags, jobs::TagStats{});
  stats.worker_busy_ns.assign(participants, 0);
  completed.worker_busy_ns.assign(participants, 0);
  stages.reserve(kMaxStages);
  crash_section = add_crash_section("engine", &Impl::write_crash_section, this);
}

Engine::Impl::~Impl() {
  remove_crash_section(crash_section);
}

// Inside a signal handler: reads plain fields and atomics, writes with CrashWriter only.
void Engine::Impl::write_crash_section(void* self, CrashWriter& out) {
  const Impl& e = *static_cast<const Impl*>(self);
  out.text("frame: ");
  out.number(e.frame_number);
  out.text(", simulation steps: ");
  out.number(e.tick);
  out.text(", job mode: ");
  out.text(jobs::to_string(e.jobs->mode()));
  out.text(", workers: ");
  out.number(e.jobs->worker_count());
  out.text("\nentities: ");
  out.number(e.world.entity_count());
  out.text(", stages: ");
  out.number(e.stages.size());
  const jobs::Stats js = e.jobs->stats();
  out.text("\njob system: ");
  out.number(e.config.jobs_per_worker);
  out.text(" job slots per participant, jobs run inline for lack of room ");
  out.number(js.inline_overflows);
  out.text(", exceptions dropped ");
  out.number(js.exceptions_dropped);
  out.text("\nlast stages started, oldest first (step, name, state):\n");
  const std::uint32_t next = e.recent_next.load(std::memory_order_acquire);
  const std::uint32_t first = next > kRecentStages ? next - kRecentStages : 0;
  for (std::uint32_t i = first; i < next; ++i) {
    const RecentStage& r = e.recent_stages[i % kRecentStages];
    const char* name = r.name.load(std::memory_order_acquire);
    if (name == nullptr) continue;
    out.text("  ");
    out.number(r.tick.load(std::memory_order_relaxed));
    out.text(" ");
    out.text(name);
    out.text(r.finished.load(std::memory_order_acquire) ? " finished\n" : " RUNNING\n");
  }
  if (next == 0) out.text("  (none yet)\n");
}

Engine::Engine(const EngineConfig& config)
    : impl_(std::make_unique<Impl>(*this, config)),
      world_(&impl_->world),
      jobs_(impl_->jobs.get()) {}

Engine::~Engine() = default;

const EngineConfig& Engine::config() const {
  return impl_->config;
}

Plugin& Engine::adopt(std::unique_ptr<Plugin> plugin) {
  Plugin& ref = *plugin;
  impl_->plugins.push_back(std::move(plugin));
  ref.build(*this);
  return ref;
}

Plugin* Engine::find_plugin(std::string_view name) const {
  for (const std::unique_ptr<Plugin>& p : impl_->plugins)
    if (name == p->name()) return p.get();
  return nullptr;
}

StageId Engine::add_stage(StageDesc desc) {
  auto& stages = impl_->stages;
  SPINDLE_ASSERTF(stages.size() < kMaxStages, "at most %u stages", kMaxStages);
  SPINDLE_ASSERT(desc.run != nullptr, "a stage has a run function");
  auto stage = std::make_unique<Impl::Stage>();
  stage->desc = std::move(desc);
  const auto id = static_cast<StageId>(stages.size());
  // Tag 0 is the job system's default; stage i books its jobs under tag i + 1.
  stage->tag = static_cast<std::uint16_t>(std::min<std::uint32_t>(id + 1, jobs::kMaxTags - 1));
  stages.push_back(std::move(stage));
  impl_->graph_dirty = true;
  return id;
}

std::uint32_t Engine::stage_count() const {
  return static_cast<std::uint32_t>(impl_->stages.size());
}
const char* Engine::stage_name(StageId id) const {
  return impl_->stages[id]->desc.name;
}
double Engine::stage_estimate_ms(StageId id) const {
  return impl_->stages[id]->ema_ms;
}
Phase Engine::stage_phase(StageId id) const {
  return impl_->stages[id]->desc.phase;
}
const std::string& Engine::scene() const {
  return impl_->scene;
}
GameClock& Engine::game_clock() {
  return impl_->game_clock;
}
std::uint64_t Engine::tick() const {
  return impl_->tick;
}
std::uint64_t Engine::frame_number() const {
  return impl_->frame_number;
}
const FrameStats& Engine::last_frame() const {
  return impl_->completed;
}
const jobs::JobGraph* Engine::last_job_graph() const {
  return impl_->graph_valid ? &impl_->graph : nullptr;
}
std::span<const Decision> Engine::last_decisions() const {
  return {impl_->decisions.data(), impl_->decisions_used};
}
void Engine::request_quit() {
  impl_->quit = true;
}
bool Engine::quit_requested() const {
  return impl_->quit;
}
void Engine::add_frame_hook(std::function<void(Engine&)> hook) {
  impl_->frame_hooks.push_back(std::move(hook));
}

void Engine::add_step_hook(std::function<void(Engine&)> hook) {
  impl_->step_hooks.push_back(std::move(hook));
}

int Engine::Impl::find_stage(std::string_view name) const {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (name == stages[i]->desc.name) return static_cast<int>(i);
  }
  return -1;
}
int Engine::find_stage(std::string_view name) const {
  return impl_->find_stage(name);
}

Status Engine::check_graph() {
  if (impl_->graph_dirty) impl_->build_graph();
  return impl_->graph_status;
}

std::span<const StageId> Engine::stage_order() {
  if (impl_->graph_dirty) impl_->build_graph();
  return impl_->order;
}

bool Engine::depends_on(StageId later, StageId earlier) {
  if (impl_->graph_dirty) impl_->build_graph();
  return (impl_->stages[earlier]->reach >> later) & 1u;
}

bool Engine::run_after(std::string_view stage, StageRef earlier) {
  const int id = impl_->find_stage(stage);
  if (id < 0) return false;
  impl_->stages[static_cast<std::size_t>(id)]->desc.after.push_back(std::move(earlier));
  impl_->graph_dirty = true;
  return true;
}

std::vector<std::pair<StageId, StageId>> Engine::implicit_orders() {
  Impl& m = *impl_;
  if (m.graph_dirty) m.build_graph();
  // declared[i], bit j: stage i comes after stage j through a chain of `after` entries.
  const std::size_t n = m.stages.size();
  std::vector<std::uint64_t> declared(n, 0);
  (void)m.resolve_after(declared);  // unknown entries were reported by build_graph()
  for (bool grew = true; grew;) {   // transitive closure; at most kMaxStages rounds
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
  for (std::size_t a = 0; a < m.order.size(); ++a) {
    for (std::size_t b = a + 1; b < m.order.size(); ++b) {
      const StageId ia = m.order[a], ib = m.order[b];
      const StageDesc& da = m.stages[ia]->desc;
      const StageDesc& db = m.stages[ib]->desc;
      if (da.simulation != db.simulation || da.phase != db.phase) continue;
      if (!da.access.conflicts(db.access)) continue;
      if ((declared[ib] >> ia & 1) || (declared[ia] >> ib & 1)) continue;
      out.emplace_back(ia, ib);
    }
  }
  return out;
}

// --- the graph ---------------------------------------------------------------------------------

// after_bits[i], bit j: stage i names stage j in `after`. An error names the first entry that is
// no stage; the entries that are stages are still set.
Status Engine::Impl::resolve_after(std::vector<std::uint64_t>& after_bits) const {
  Status status;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    for (const StageRef& ref : stages[i]->desc.after) {
      const int j = ref.by_id() ? (ref.id() < stages.size() ? static_cast<int>(ref.id()) : -1)
                                : find_stage(ref.name());
      if (j >= 0) {
        after_bits[i] |= std::uint64_t{1} << j;
      } else if (status.ok()) {
        status = Status::error(
            ref.by_id() ? "stage '" + std::string(stages[i]->desc.name) + "' runs after stage id " +
                              std::to_string(ref.id()) + ", and there are only " +
                              std::to_string(stages.size()) + " stages"
                        : "stage '" + std::string(stages[i]->desc.name) + "' runs after '" +
                              ref.name() + "', and no stage has that name");
      }
    }
  }
  return status;
}

void Engine::Impl::build_graph() {
  const auto n = static_cast<StageId>(stages.size());
  order.resize(n);
  for (StageId i = 0; i < n; ++i) order[i] = i;
  // Simulation before presentation, then phase, then registration.
  std::stable_sort(order.begin(), order.end(), [&](StageId a, StageId b) {
    const StageDesc& da = stages[a]->desc;
    const StageDesc& db = stages[b]->desc;
    if (da.simulation != db.simulation) return da.simulation;
    return da.phase < db.phase;
  });
  std::vector<std::uint64_t> after_bits(n, 0);
  graph_status = resolve_after(after_bits);
  if (!graph_status.ok()) SPINDLE_LOG_ERROR(Core, "engine: %s", graph_status.message().c_str());
  for (StageId i = 0; i < n; ++i) {
    Stage& s = *stages[i];
    s.successors.clear();
    s.successors.reserve(n);
    s.predecessor_ids.clear();
    s.predecessor_ids.reserve(n);
    s.predecessors = 0;
    s.reach = 0;
  }
  for (StageId k = 0; k < n; ++k) stages[order[k]]->ordinal = k;
  for (StageId b = 0; b < n; ++b) {
    for (StageId a = 0; a < b; ++a) {
      Stage& sa = *stages[order[a]];
      Stage& sb = *stages[order[b]];
      if (sa.desc.simulation != sb.desc.simulation) continue;  // separate graphs
      const bool named = (after_bits[order[b]] >> order[a]) & 1u;
      if (named || sa.desc.access.conflicts(sb.desc.access)) {
        sa.successors.push_back(order[b]);
        sb.predecessor_ids.push_back(order[a]);
        ++sb.predecessors;
      }
    }
  }
  for (StageId b = 0; b < n; ++b) {
    for (StageId a = 0; a < n; ++a) {
      if (!((after_bits[b] >> a) & 1u) || stages[a]->ordinal < stages[b]->ordinal) continue;
      const char* name = stages[a]->desc.name;
      SPINDLE_LOG_WARNING(Core,
                          "engine: stage '%s' asks to run after '%s', which comes later (a later "
                          "phase, or registered later in the same phase); the order (phase, "
                          "registration) wins: register '%s' first",
                          stages[b]->desc.name, name, name);
    }
  }
  // Reachability, in reverse order so successors are complete.
  for (StageId k = n; k-- > 0;) {
    Stage& s = *stages[order[k]];
    for (StageId succ : s.successors) s.reach |= (std::uint64_t{1} << succ) | stages[succ]->reach;
  }
  build_group(sim, true);
  build_group(present_group, false);
  decisions.assign(n, Decision{});
  decided_frame.assign(n, 0);
  stats.stages.assign(n, StageTiming{});
  completed.stages.resize(n);  // a new stage reads as not run until a frame with it finishes
  graph_dirty = false;

  for (const auto& [a, b] : owner.implicit_orders()) {
    SPINDLE_LOG_WARNING(Core,
                        "engine: stages '%s' and '%s' conflict and have no declared order; they "
                        "run in registration order (add `after` to make it explicit)",
                        stages[a]->desc.name, stages[b]->desc.name);
  }
}

// The group's stages in order, and the planner's view of their edges in group indices.
void Engine::Impl::build_group(Group& group, bool simulation) {
  group.ids.clear();
  for (StageId id : order)
    if (stages[id]->desc.simulation == simulation) group.ids.push_back(id);
  const std::size_t n = group.ids.size();
  group.inputs.assign(n, StagePlanInput{});
  group.plans.assign(n, StagePlan{});
  group.launch_order.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Stage& s = *stages[group.ids[i]];
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t bit = std::uint64_t{1} << j;
      if ((s.reach >> group.ids[j]) & 1u) group.inputs[i].reaches |= bit;
      if (std::find(s.successors.begin(), s.successors.end(), group.ids[j]) != s.successors.end())
        group.inputs[i].successors |= bit;
    }
  }
}

// --- scenes ------------------------------------------------------------------------------------

void Engine::add_scene(std::string name, std::function<void(Engine&)> setup) {
  for (Impl::Scene& s : impl_->scenes) {
    if (s.name == name) {
      s.setup = std::move(setup);
      return;
    }
  }
  impl_->scenes.push_back(Impl::Scene{std::move(name), std::move(setup)});
}

bool Engine::switch_scene(std::string_view name) {
  for (std::size_t i = 0; i < impl_->scenes.size(); ++i) {
    if (impl_->scenes[i].name == name) {
      impl_->pending_scene = static_cast<int>(i);
      return true;
    }
  }
  SPINDLE_LOG_ERROR(Core, "engine: no scene named '%.*s'", static_cast<int>(name.size()),
                    name.data());
  return false;
}

void Engine::Impl::apply_scene_switch() {
  if (pending_scene < 0) return;
  const Scene& next = scenes[static_cast<std::size_t>(pending_scene)];
  pending_scene = -1;
  world.apply_commands();
  const ComponentStorage<Persistent>* keep = world.storage<Persistent>();
  for (std::uint32_t i = 0; i < world.capacity(); ++i) {
    const Entity e = world.entity_at(i);
    if (!e.is_null() && (keep == nullptr || !keep->has(i))) world.destroy(e);
  }
  scene = next.name;
  controller.reset();  // another scene: other frame costs
  // A copy: the setup may add scenes (and so move the one running).
  const std::function<void(Engine&)> setup = next.setup;
  if (setup) setup(owner);
}

void Engine::set_mode(jobs::Mode mode) {
  if (!jobs::mode_available(mode)) {
    SPINDLE_LOG_ERROR(Core, "engine: mode %s is not available in this build",
                      jobs::to_string(mode));
    return;
  }
  jobs_->set_mode(mode);
  impl_->controller.reset();  // what a frame costs with k workers was measured in another mode
}

// --- running a group of stages -----------------------------------------------------------------

void Engine::Impl::decide(Group& group) {
  const jobs::StagePolicy policy = jobs->stage_policy();
  const std::uint32_t workers = policy.planned ? active : jobs->worker_count();
  group.run_inline = false;
  if (!policy.planned) {
    const std::uint32_t split =
        policy.chunks_per_worker == jobs::kOversplit
            ? workers * config.oversplit
            : std::max<std::uint32_t>(1, workers * policy.chunks_per_worker);
    for (StageId id : group.ids) {
      Stage& s = *stages[id];
      s.critical = false;
      s.workers = static_cast<std::uint16_t>(workers);
      s.split = split;
    }
    return;
  }
  for (std::size_t i = 0; i < group.ids.size(); ++i) {
    const Stage& s = *stages[group.ids[i]];
    group.inputs[i].cost_ms = s.ema_ms;
    group.inputs[i].measured = s.measured;
  }
  StagePlanner planner;
  planner.stages = group.inputs;
  planner.workers = workers;
  planner.oversplit = config.oversplit;
  planner.min_chunk_us = config.min_chunk_us;
  planner.inline_below_us = config.inline_below_us;
  planner.plans = group.plans;
  planner.launch_order = group.launch_order;
  const bool planned = planner.run();
  SPINDLE_ASSERT(planned, "the stage planner accepts the engine's graph and config");
  group.run_inline = planner.run_inline;
  for (std::size_t i = 0; i < group.ids.size(); ++i) {
    Stage& s = *stages[group.ids[i]];
    const StagePlan& plan = group.plans[i];
    s.workers = plan.workers;
    s.split = plan.split;
    s.critical = plan.critical;
  }
  // Successors are released most costly first, too.
  for (StageId id : group.ids) {
    std::vector<StageId>& succ = stages[id]->successors;
    // Insertion sort: stable, allocation-free (std::stable_sort takes a heap buffer).
    for (std::size_t i = 1; i < succ.size(); ++i) {
      const StageId v = succ[i];
      std::size_t j = i;
      for (; j > 0 && stages[succ[j - 1]]->ema_ms < stages[v]->ema_ms; --j) succ[j] = succ[j - 1];
      succ[j] = v;
    }
  }
  // Record the first decision of each stage in this frame (later simulation steps of the same
  // frame repeat it with the same estimates).
  for (std::size_t i = 0; i < group.ids.size(); ++i) {
    const StageId id = group.ids[i];
    const Stage& s = *stages[id];
    if (decisions_used >= decisions.size() || decided_frame[id] == frame_number + 1) continue;
    decided_frame[id] = frame_number + 1;
    decisions[decisions_used++] =
        Decision{id, s.workers, s.split, group.plans[i].launch_rank, s.critical, s.ema_ms};
  }
}

void Engine::Impl::run_stage(StageId id, std::int64_t dt_ns, float alpha) {
  Stage& s = *stages[id];
  StageContext ctx;
  ctx.engine_ = &owner;
  ctx.world_ = &world;
  ctx.jobs_ = jobs.get();
  ctx.name_ = s.desc.name;
  ctx.stage_ = id;
  ctx.tag_ = s.tag;
  ctx.ordinal_ = s.ordinal;
  ctx.split_ = s.split;
  ctx.dt_ns_ = dt_ns;
  ctx.tick_ = tick;
  ctx.alpha_ = alpha;
  ctx.priority_ = s.critical ? jobs::Priority::High : jobs::Priority::Normal;
  ctx.root_thread_ = std::this_thread::get_id();
  // This thread may be inside another stage's wait, helping: keep that stage's recording state.
  CommandBuffer& cmd = world.commands().local(*jobs);
  const detail::RecordingGuard guard(cmd, nullptr);
  cmd.set_origin(ctx.serial_origin(0));
  RecentStage& recent =
      recent_stages[recent_next.fetch_add(1, std::memory_order_relaxed) % kRecentStages];
  recent.finished.store(false, std::memory_order_relaxed);
  recent.tick.store(tick, std::memory_order_relaxed);
  recent.name.store(s.desc.name, std::memory_order_release);
  s.begin_ns = monotonic_ns();
  s.desc.run(ctx);
  s.end_ns = monotonic_ns();
  recent.finished.store(true, std::memory_order_release);
}

void Engine::Impl::launch(StageId id) {
  Stage& s = *stages[id];
  const jobs::JobDesc desc{s.desc.name, s.tag,
                           s.critical ? jobs::Priority::High : jobs::Priority::Normal};
  jobs->run(group_done, desc, [this, id] {
    stages[id]->record_id = jobs->recorded_job();
    run_stage(id, run_dt_ns, run_alpha);
    // Release successors (sorted most costly first by decide()) in reverse: this thread's deque
    // is last-in first-out, so it runs the most costly one next and thieves take the rest. One
    // wake for all of them, after all are out: on a VM a wake costs this thread 30-45 us, and
    // the most costly one, released last, waited for it.
    const std::vector<StageId>& succ = stages[id]->successors;
    const jobs::JobSystem::WakeBatch batch(*jobs);
    for (std::size_t k = succ.size(); k-- > 0;) {
      if (stages[succ[k]]->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      // The recording sees this stage launch the successor; it starts after the others too
      // (they finished before this one: the count above), so a replay on other workers keeps
      // the join.
      if (stages[id]->record_id != 0) {  // recording
        for (StageId p : stages[succ[k]]->predecessor_ids)
          if (p != id) jobs->record_after(stages[p]->record_id);
      }
      launch(succ[k]);
    }
  });
}

void Engine::Impl::run_group(Group& group, std::int64_t dt_ns, float alpha) {
  if (group.ids.empty()) return;
  world.refresh_order();  // structural changes happen between groups only
  decide(group);
  const jobs::StagePolicy policy = jobs->stage_policy();
  for (StageId id : group.ids) tags_before[stages[id]->tag] = jobs->tag_stats(stages[id]->tag);
  if (!policy.concurrent_stages || group.run_inline) {
    // One after another on this thread, each as a job of its own: timed and booked under its tag
    // like a launched stage, and a zone for the profiler.
    for (StageId id : group.ids) {
      const Stage& s = *stages[id];
      jobs->run_here(jobs::JobDesc{s.desc.name, s.tag},
                     [this, id, dt_ns, alpha] { run_stage(id, dt_ns, alpha); });
    }
  } else {
    run_dt_ns = dt_ns;
    run_alpha = alpha;
    for (StageId id : group.ids)
      stages[id]->remaining.store(stages[id]->predecessors, std::memory_order_relaxed);
    {
      // One wake for every root, after all are out (as for successors, launch()), and before
      // the wait, where this thread runs the longest.
      const jobs::JobSystem::WakeBatch batch(*jobs);
      if (policy.longest_first) {
        // Roots, longest first. The submitting thread's own deque is last-in first-out while
        // thieves take from the other end, so push the longest last: this thread starts it at
        // once and a woken worker steals the next longest.
        for (std::size_t k = group.launch_order.size(); k-- > 0;) {
          const StageId id = group.ids[group.launch_order[k]];
          if (stages[id]->predecessors == 0) launch(id);
        }
      } else {
        for (StageId id : group.ids) {
          if (stages[id]->predecessors == 0) launch(id);
        }
      }
    }
    jobs->wait(group_done);
  }
  for (StageId id : group.ids) {
    Stage& s = *stages[id];
    StageTiming& t = stats.stages[id];
    t.wall_ns += s.end_ns - s.begin_ns;
    // Booked by the job system, so every job of the stage counts, nested ones included.
    const jobs::TagStats now = jobs->tag_stats(s.tag);
    const jobs::TagStats& before = tags_before[s.tag];
    t.cpu_ns += now.total_ns >= before.total_ns ? now.total_ns - before.total_ns : now.total_ns;
    t.jobs +=
        static_cast<std::uint32_t>(now.jobs >= before.jobs ? now.jobs - before.jobs : now.jobs);
    t.runs += 1;
  }
}

// --- the frame ---------------------------------------------------------------------------------

void Engine::Impl::begin_frame_stats() {
  for (StageTiming& t : stats.stages) t = StageTiming{};
  wakes_before = wake_ns_before = 0;
  for (std::uint32_t w = 0; w < busy_before.size(); ++w) {
    const jobs::WorkerStats ws = jobs->worker_stats(w);
    busy_before[w] = ws.busy_ns;
    wakes_before += ws.wakes;
    wake_ns_before += ws.wake_ns;
  }
  stats.steps = 0;
  decisions_used = 0;
  overflows_before = jobs->stats().inline_overflows;
}

void Engine::Impl::end_frame_stats(std::uint64_t begin_ns) {
  stats.frame = frame_number;
  stats.frame_ns = monotonic_ns() - begin_ns;
  // The graph ends with the frame's time; reading the threads' CPU clocks is not in it.
  const bool recorded = jobs->recording();
  if (recorded) jobs->stop_recording();
  stats.cpu_ns = cpu_timer.elapsed_ns();
  // Every job's own time, from the job system's counters: stage code, chunks, and the jobs they
  // started (a renderer's batches, a sort's passes), each counted once, where it ran.
  std::uint64_t busy = 0, wakes = 0, wake_ns = 0;
  const std::size_t participants = stats.worker_busy_ns.size();
  for (std::size_t w = 0; w < participants; ++w) stats.worker_busy_ns[w] = 0;
  for (std::size_t w = 0; w < busy_before.size(); ++w) {
    const jobs::WorkerStats ws = jobs->worker_stats(static_cast<std::uint32_t>(w));
    wakes += ws.wakes;
    wake_ns += ws.wake_ns;
    const std::uint64_t now = ws.busy_ns;
    const std::uint64_t ns = now >= busy_before[w] ? now - busy_before[w] : now;
    // Outside threads (the last slot) are shown on participant 0, whose work they took over.
    stats.worker_busy_ns[w < participants ? w : 0] += ns;
    busy += ns;
  }
  stats.work_ns = busy;
  const std::uint64_t capacity = stats.frame_ns * jobs->worker_count();
  stats.idle_ns = capacity > busy ? capacity - busy : 0;
  stats.serial_ns = stats.span_ns = stats.span_handoff_ns = stats.handoff_ns = 0;
  stats.jobs = 0;
  graph_valid = false;
  if (recorded && jobs->end_recording(graph)) {
    graph_valid = true;
    stats.serial_ns = graph.serial_ns();
    stats.span_ns = graph.span_ns;
    stats.span_handoff_ns = graph.span_handoff_ns;
    stats.handoff_ns = graph.handoff_ns;
    stats.jobs = graph.jobs;
  }
  stats.active_workers = active;
  stats.pinned = jobs->pinned();
  stats.cores_busy = controller.cores_busy && jobs->stage_policy().planned && config.adapt_workers;
  if (jobs->stage_policy().planned && config.adapt_workers) {
    // Per step: a frame that caught up three steps is not three times slower to the controller.
    const double steps = std::max<std::uint32_t>(stats.steps, 1);
    const double wake_us = wakes > wakes_before
                               ? static_cast<double>(wake_ns - wake_ns_before) * 1e-3 /
                                     static_cast<double>(wakes - wakes_before)
                               : 0.0;
    controller.observe(choice, static_cast<double>(stats.frame_ns) * 1e-6 / steps,
                       static_cast<double>(stats.work_ns) * 1e-6 / steps, wake_us,
                       static_cast<double>(stats.cpu_ns) * 1e-6 / steps);
  }
  note_job_overflows();
  // Cost estimates for the next frame: EMA of CPU time per frame.
  for (std::size_t i = 0; i < stages.size(); ++i) {
    Stage& s = *stages[i];
    if (stats.stages[i].runs == 0) continue;
    // Per run: a frame that catches up several simulation steps must not look several times
    // as costly to decisions made per step.
    const double ms = static_cast<double>(stats.stages[i].cpu_ns) * 1e-6 / stats.stages[i].runs;
    s.ema_ms = s.measured ? config.ema_alpha * ms + (1 - config.ema_alpha) * s.ema_ms : ms;
    s.measured = true;
  }
  // Copied into vectors of the same sizes: no allocation once the first frame has run.
  completed = stats;
  ++frame_number;
}

void Engine::Impl::note_job_overflows() {
  const std::uint64_t total = jobs->stats().inline_overflows;
  // reset_stats() between frames (the load test does) restarts the count.
  stats.job_overflows = total >= overflows_before ? total - overflows_before : total;
  if (stats.job_overflows == 0) return;
  ++overflow_frames;
  // Every overflowing frame is counted in FrameStats; the log says so at most once a second.
  const std::uint64_t now = monotonic_ns();
  if (overflow_logged_ns != 0 && now - overflow_logged_ns < 1'000'000'000) return;
  overflow_logged_ns = now;
  SPINDLE_LOG_WARNING(Core,
                      "frame %llu: %llu job(s) ran inline for lack of a job slot (%llu frame(s) "
                      "overflowed so far): raise jobs::Config::jobs_per_worker (now %u)",
                      static_cast<unsigned long long>(frame_number),
                      static_cast<unsigned long long>(stats.job_overflows),
                      static_cast<unsigned long long>(overflow_frames),
                      jobs->config().jobs_per_worker);
}

void Engine::Impl::simulate_step() {
  for (const std::function<void(Engine&)>& hook : step_hooks) hook(owner);
  world.begin_event_step();
  run_group(sim, config.fixed_step_ns, 1.0f);
  world.apply_commands();
  world.end_event_step();
  ++tick;
  ++stats.steps;
}

void Engine::Impl::present(std::int64_t dt_ns, float alpha) {
  run_group(present_group, dt_ns, alpha);
  world.apply_commands();
}

void Engine::frame(std::int64_t delta_ns) {
  const std::int64_t game_dt = impl_->game_clock.advance(delta_ns);
  const std::uint32_t steps = impl_->fixed.add(game_dt);
  impl_->run_frame(steps, game_dt, static_cast<float>(impl_->fixed.alpha()));
}

void Engine::step() {
  impl_->run_frame(1, impl_->config.fixed_step_ns, 1.0f);
}

// One body for frame() and step(), so that a frame of k steps is k step()s to the simulation.
void Engine::Impl::run_frame(std::uint32_t steps, std::int64_t present_dt_ns, float alpha) {
  if (graph_dirty || pending_scene >= 0) {
    BudgetScope scope(arena_for(config, "engine"));
    if (graph_dirty) build_graph();
    apply_scene_switch();
    if (graph_dirty) build_graph();  // a scene setup may add stages
  }
  SPINDLE_ASSERTF(graph_status.ok(), "engine: %s", graph_status.message().c_str());
  // How many workers this frame may wake (dynamic mode), before anything is submitted.
  if (jobs->stage_policy().planned && config.adapt_workers) {
    controller.workers = jobs->participant_count();
    controller.may_unpin = config.pin_workers;
    controller.cpu_weight = config.worker_cpu_weight;
    controller.cores_busy = false;
    if (ask_cores_probe) {
      cores_probe.sample(monotonic_ns());
      controller.cores_busy = cores_probe.busy();
    }
    choice = controller.choose();
    active = choice.workers;
    jobs->set_active_workers(active);
    jobs->set_pinned(choice.pinned);
  } else {
    active = jobs->worker_count();
    jobs->set_active_workers(active);
    jobs->set_pinned(true);
  }
  begin_frame_stats();
  cpu_timer.list_threads();
  cpu_timer.start();
  // The recording spans the frame's own time, as frame_ns does: listing the threads takes 3-10 us
  // on a 2-core VM, a serial stretch that every replay of the graph would add to the frame.
  if (config.record_job_graph) jobs->begin_recording();
  const std::uint64_t begin = monotonic_ns();
  for (const std::function<void(Engine&)>& hook : frame_hooks) hook(owner);
  world.begin_event_frame();
  for (; steps > 0; --steps) simulate_step();
  present(present_dt_ns, alpha);
  end_frame_stats(begin);
}

}  // namespace spindle::core
