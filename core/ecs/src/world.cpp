#include <spindle/ecs/world.h>

#include <spindle/base/log.h>
#include <spindle/jobs/job_system.h>

namespace spindle::core {

namespace detail {
TypeId next_type_id() {
  static std::atomic<std::uint32_t> next{0};
  const std::uint32_t id = next.fetch_add(1, std::memory_order_relaxed);
  SPINDLE_ASSERTF(id < kMaxTypes, "at most %u component, event and resource types",
                  static_cast<unsigned>(kMaxTypes));
  return static_cast<TypeId>(id);
}
}  // namespace detail

namespace {
std::atomic<std::uint64_t> g_buffers_generation{1};
thread_local std::uint64_t t_slot_generation = 0;
thread_local std::uint32_t t_slot = 0;
}  // namespace

CommandBuffers::CommandBuffers(std::uint32_t participants) {
  resize(participants);
}

void CommandBuffers::resize(std::uint32_t participants) {
  if (participants == 0) participants = 1;
  if (participants == participants_) return;
  participants_ = participants;
  generation_ = g_buffers_generation.fetch_add(1, std::memory_order_relaxed);
  next_external_.store(0, std::memory_order_relaxed);
  buffers_.clear();
  buffers_.reserve(participants + kExternalSlots);
  for (std::uint32_t i = 0; i < participants; ++i) buffers_.emplace_back();
  // External slots start small: only the tbb reference mode uses them.
  for (std::uint32_t i = 0; i < kExternalSlots; ++i) buffers_.emplace_back(64, 1024);
}

std::uint32_t CommandBuffers::slot(const jobs::JobSystem& jobs) {
  const std::uint32_t worker = jobs.current_worker();
  if (worker < participants_) return worker;
  if (t_slot_generation != generation_) {
    const std::uint32_t n = next_external_.fetch_add(1, std::memory_order_relaxed);
    SPINDLE_ASSERTF(n < kExternalSlots, "at most %u non-participant threads record commands",
                    static_cast<unsigned>(kExternalSlots));
    t_slot = participants_ + n;
    t_slot_generation = generation_;
  }
  return t_slot;
}

World::World(std::uint32_t capacity) : entities_(capacity) {
  registered_.reserve(kMaxTypes);
}

World::~World() = default;

Entity World::create() {
  const Entity e = entities_.create();
  if (!e.is_null()) emit_lifecycle(e, true);
  return e;
}

bool World::destroy(Entity entity) {
  if (!alive(entity)) return false;
  for (ComponentStorageBase* s : registered_) s->remove(entity.index);
  entities_.destroy(entity);
  emit_lifecycle(entity, false);
  return true;
}

void World::clear() {
  for (std::uint32_t i = 0; i < entities_.capacity(); ++i) {
    const Entity e = entities_.at(i);
    if (!e.is_null()) destroy(e);
  }
}

void World::emit_lifecycle(Entity entity, bool created) {
  if (created) {
    if (auto* q = static_cast<EventQueue<EntityCreated>*>(events_[type_id<EntityCreated>()].get()))
      q->emit(EntityCreated{entity});
  } else {
    if (auto* q =
            static_cast<EventQueue<EntityDestroyed>*>(events_[type_id<EntityDestroyed>()].get()))
      q->emit(EntityDestroyed{entity});
  }
}

void World::begin_event_frame() {
  for (EventQueueBase* q : event_list_) q->begin_frame();
  events_in_step_ = false;  // also after a step whose stage threw
}

void World::begin_event_step() {
  for (EventQueueBase* q : event_list_) q->deliver();
  events_in_step_ = true;
}

void World::end_event_step() {
  events_in_step_ = false;
}

void World::flush_events() {
  begin_event_frame();
  begin_event_step();
  end_event_step();
}

void World::apply_commands() {
  // Every record with the buffer that holds its payload, sorted by (origin, sequence).
  auto& merged = commands_.merged_;
  merged.clear();
  for (const CommandBuffer& b : commands_.buffers_) {
    for (const CommandBuffer::Record& r : b.records()) merged.push_back({&r, &b});
  }
  if (merged.empty()) return;
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    if (a.record->origin != b.record->origin) return a.record->origin < b.record->origin;
    return a.record->sequence < b.record->sequence;
  });

  Entity created = Entity::null();
  for (const auto& [record, buffer] : merged) {
    const CommandBuffer::Record& r = *record;
    const CommandBuffer& owner = *buffer;
    switch (r.op) {
      case CommandBuffer::Op::Create:
        created = create();
        if (created.is_null()) {
          if (command_stats_.create_failed++ == 0)
            SPINDLE_LOG_WARNING(Core, "world: spawn refused, all %u entity slots in use",
                                capacity());
        } else {
          ++command_stats_.applied;
        }
        break;
      case CommandBuffer::Op::Destroy:
        if (destroy(r.entity)) {
          ++command_stats_.applied;
        } else {
          ++command_stats_.stale;
        }
        break;
      case CommandBuffer::Op::Add:
      case CommandBuffer::Op::AddToCreated: {
        const Entity target = r.op == CommandBuffer::Op::Add ? r.entity : created;
        ComponentStorageBase* s = storages_[r.type].get();
        if (s == nullptr) {
          // A type never registered cannot be built from bytes here; register it first.
          SPINDLE_LOG_ERROR(Core, "world: command adds component type %u that was never registered",
                            static_cast<unsigned>(r.type));
          ++command_stats_.stale;
        } else if (alive(target)) {
          s->add_bytes(target.index, owner.payload(r), r.size);
          ++command_stats_.applied;
        } else {
          ++command_stats_.stale;
        }
        break;
      }
      case CommandBuffer::Op::Remove: {
        ComponentStorageBase* s = storages_[r.type].get();
        if (s != nullptr && alive(r.entity)) {
          s->remove(r.entity.index);
          ++command_stats_.applied;
        } else {
          ++command_stats_.stale;
        }
        break;
      }
      case CommandBuffer::Op::Emit: {
        EventQueueBase* q = events_[r.type].get();
        if (q != nullptr) {
          q->push_bytes(owner.payload(r), r.size);
          ++command_stats_.applied;
        } else {
          SPINDLE_LOG_ERROR(Core,
                            "world: event type %u emitted but never declared with events<T>()",
                            static_cast<unsigned>(r.type));
          ++command_stats_.stale;
        }
        break;
      }
    }
  }
  for (CommandBuffer& b : commands_.buffers_) b.clear();
}

void World::track_order(TypeId a, TypeId b) {
  const ComponentStorageBase* sa = storages_[a].get();
  const ComponentStorageBase* sb = storages_[b].get();
  if (sa == nullptr || sb == nullptr || sa == sb) return;
  for (const OrderPair& p : order_pairs_) {
    if ((p.a == sa && p.b == sb) || (p.a == sb && p.b == sa)) return;  // tracked already
  }
  order_pairs_.push_back(OrderPair{sa, sb, 0});
  for (ComponentStorageBase* s : registered_) {
    if (s == sa || s == sb) s->changed_at(0);  // compute this pair from the start
  }
}

void World::refresh_order() {
  for (OrderPair& p : order_pairs_) {
    std::uint32_t prefix =
        std::min({p.prefix, p.a->first_changed_slot(), p.b->first_changed_slot()});
    const std::span<const std::uint32_t> da = p.a->entities();
    const std::span<const std::uint32_t> db = p.b->entities();
    const auto n = static_cast<std::uint32_t>(std::min(da.size(), db.size()));
    prefix = std::min(prefix, n);
    while (prefix < n && da[prefix] == db[prefix]) ++prefix;
    p.prefix = prefix;
  }
  for (ComponentStorageBase* s : registered_) s->first_changed_ = ~0u;
}

std::uint64_t World::state_hash() const {
  Hasher h;
  h.add(entities_.size());
  for (std::uint32_t i = 0; i < entities_.capacity(); ++i) {
    const Entity e = entities_.at(i);
    if (e.is_null()) continue;
    h.add(e.bits());
  }
  std::uint32_t ordinal = 0;
  for (const ComponentStorageBase* s : registered_) {
    h.add(0xC0000000u + ordinal++);
    h.add(s->size());
    // Entity-index order, not dense order: the hash depends on the state, not its history.
    for (std::uint32_t i = 0; i < entities_.capacity(); ++i) {
      if (!s->has(i)) continue;
      h.add(i);
      s->hash_slot(s->dense_index(i), h);
    }
  }
  return h.value();
}

}  // namespace spindle::core
