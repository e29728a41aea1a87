#include <spindle/ecs/world.h>

#include <algorithm>

#include <spindle/base/budget.h>
#include <spindle/base/log.h>

namespace spindle::core {

World::World(std::uint32_t capacity) : entities_(capacity) {
  registered_.reserve(kMaxTypes);
}

World::~World() = default;

Entity World::create() {
  const Entity e = entities_.create();
  if (!e.is_null())
    emit_lifecycle(e, true);
  else if (panic_arena_ != nullptr)
    panic_arena_->panic("a spawn found every entity slot in use");
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
    if (EventQueue<EntityCreated>* q = events_.find<EntityCreated>())
      q->emit(EntityCreated{entity});
  } else {
    if (EventQueue<EntityDestroyed>* q = events_.find<EntityDestroyed>())
      q->emit(EntityDestroyed{entity});
  }
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
          if (command_stats_.create_failed++ == 0 && panic_arena_ == nullptr)
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
        EventQueueBase* q = events_.find(r.type);
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
  ordinal = 0;
  for (const HashedResource& r : hashed_resources_) {
    h.add(0xE0000000u + ordinal++);
    const void* value = resources_.get(r.id);
    h.add(value != nullptr ? r.hash(value) : std::uint64_t{0x0123456789abcdefull});
  }
  return h.value();
}

}  // namespace spindle::core
