#include <spindle/gameplay/input.h>

#include <algorithm>

#include <spindle/base/log.h>
#include <spindle/engine/engine.h>

namespace spindle::core {

Input::Input(std::uint32_t capacity) : capacity_(std::min(capacity, kMaxCapacity)) {
  if (capacity > kMaxCapacity) {
    SPINDLE_LOG_WARNING(Core, "input: capacity %u cut to the most an ActionId can name, %u",
                        capacity, kMaxCapacity);
  }
  names_.reserve(capacity_);
  now_.assign(capacity_, 0);
  before_.assign(capacity_, 0);
  enabled_.assign(capacity_, 1);
  kinds_.assign(capacity_, Kind::Plain);
  derived_.reserve(capacity_);
}

Status Input::check_new_name(std::string_view name) const {
  if (name.empty()) return Status::error("input: an action needs a name");
  if (const ActionId existing = find_action(name); !existing.is_none()) {
    return Status::error("input: action '" + std::string(name) + "' is declared already (id " +
                         std::to_string(existing.value()) + ")");
  }
  if (names_.size() >= capacity_) {
    return Status::error("input: no room for action '" + std::string(name) + "': all " +
                         std::to_string(capacity_) +
                         " actions are declared (the capacity is fixed when the Input is made: "
                         "use_input(engine, capacity))");
  }
  return {};
}

Result<ActionId> Input::add_action(std::string_view name) {
  if (Status s = check_new_name(name); !s) {
    SPINDLE_LOG_ERROR(Core, "%s", s.c_str());
    return s;
  }
  names_.emplace_back(name);
  return ActionId{static_cast<std::uint16_t>(names_.size() - 1)};
}

Result<ActionId> Input::add_chord(std::string_view name, std::initializer_list<ActionId> parts) {
  return add_derived(name, parts, Kind::Chord, 0);
}

Result<ActionId> Input::add_sequence(std::string_view name, std::initializer_list<ActionId> parts,
                                     std::uint32_t window_steps) {
  if (window_steps == 0) {
    Status s = Status::error("input: sequence '" + std::string(name) +
                             "' needs a window of at least one step");
    SPINDLE_LOG_ERROR(Core, "%s", s.c_str());
    return s;
  }
  return add_derived(name, parts, Kind::Sequence, window_steps);
}

Result<ActionId> Input::add_derived(std::string_view name, std::initializer_list<ActionId> parts,
                                    Kind kind, std::uint32_t window) {
  const char* what = kind == Kind::Chord ? "chord" : "sequence";
  Status s = check_new_name(name);
  if (s && (parts.size() == 0 || parts.size() > kMaxParts)) {
    s = Status::error("input: " + std::string(what) + " '" + std::string(name) + "' has " +
                      std::to_string(parts.size()) + " parts (1 to " + std::to_string(kMaxParts) +
                      ")");
  }
  std::size_t k = 0;
  for (const ActionId part : parts) {
    if (s && !knows(part)) {
      s = Status::error("input: " + std::string(what) + " '" + std::string(name) + "': part " +
                        std::to_string(k + 1) + " is not an action declared before it");
    }
    ++k;
  }
  if (!s) {
    SPINDLE_LOG_ERROR(Core, "%s", s.c_str());
    return s;
  }
  names_.emplace_back(name);
  const ActionId id{static_cast<std::uint16_t>(names_.size() - 1)};
  kinds_[id.value()] = kind;
  Derived d{.id = id,
            .kind = kind,
            .count = static_cast<std::uint8_t>(parts.size()),
            .window = window,
            .parts = {}};
  std::copy(parts.begin(), parts.end(), d.parts.begin());
  derived_.push_back(d);
  return id;
}

void Input::set_enabled(ActionId a, bool enabled) {
  if (!knows(a)) {
    unknown(a);
    return;
  }
  enabled_[a.value()] = enabled ? 1 : 0;
}

void Input::resolve() {
  ++polls_;
  for (Derived& d : derived_) {
    bool down = false;
    if (d.kind == Kind::Chord) {
      down = true;
      for (std::uint8_t k = 0; k < d.count; ++k) down = down && held(d.parts[k]);
    } else {
      if (d.progress > 0 && polls_ - d.last > d.window) d.progress = 0;  // too slow
      if (pressed(d.parts[d.progress])) {
        d.last = polls_;
        if (++d.progress == d.count) {
          down = true;
          d.progress = 0;
        }
      } else if (d.progress > 0) {
        // Another part pressed out of order starts again (from it, if it is the first).
        for (std::uint8_t k = 0; k < d.count; ++k) {
          if (k != d.progress && d.parts[k] != d.parts[d.progress] && pressed(d.parts[k])) {
            d.progress = d.parts[k] == d.parts[0] ? 1 : 0;
            d.last = polls_;
            break;
          }
        }
      }
    }
    now_[d.id.value()] = down ? 1 : 0;
  }
}

ActionId Input::find_action(std::string_view name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) return ActionId::none();
  return ActionId{static_cast<std::uint16_t>(it - names_.begin())};
}

std::string_view Input::action_name(ActionId action) const {
  return knows(action) ? std::string_view(names_[action.value()]) : std::string_view();
}

void Input::begin_frame() {
  std::copy(now_.begin(), now_.end(), before_.begin());
}

void Input::release_all() {
  std::fill(now_.begin(), now_.end(), std::uint8_t{0});
}

bool Input::set(ActionId a, bool down) {
  if (!knows(a)) return unknown(a);
  if (kinds_[a.value()] != Kind::Plain) return false;  // worked out by resolve()
  now_[a.value()] = down ? 1 : 0;
  return true;
}

void Input::clear() {
  release_all();
  std::fill(before_.begin(), before_.end(), std::uint8_t{0});
  for (Derived& d : derived_) d.progress = 0;
}

bool Input::unknown(ActionId a) const {
  // Counted always, logged once: a stale id in a system would otherwise log every entity.
  if (unknown_ids_.fetch_add(1, std::memory_order_relaxed) == 0) {
    SPINDLE_LOG_WARNING(Core,
                        "input: action id %u was not declared on this Input (%u actions); it "
                        "reads as not held (further unknown ids are only counted: unknown_ids())",
                        static_cast<unsigned>(a.value()), action_count());
  }
  return false;
}

void ScriptedInput::poll(Input& input, std::uint64_t step) {
  input.release_all();
  for (const Span& s : spans_) {
    if (step >= s.from && step <= s.to) input.set(s.action, true);
  }
}

namespace {
// Which source the engine's step hook polls; a resource so that each engine has its own.
struct InputFeed {
  InputSource* source = nullptr;
};
}  // namespace

Input& use_input(Engine& engine) {
  World& world = engine.world();
  if (Input* input = world.resource<Input>()) return *input;
  return world.set_resource<Input>();
}

Input& use_input(Engine& engine, std::uint32_t capacity) {
  World& world = engine.world();
  Input* input = world.resource<Input>();
  if (input == nullptr) return world.set_resource<Input>(capacity);
  if (capacity > input->capacity()) {
    SPINDLE_LOG_WARNING(Core,
                        "use_input: the Input exists already with room for %u actions, not %u "
                        "(ask for the capacity on the first call, before set_input_source)",
                        input->capacity(), capacity);
  }
  return *input;
}

void set_input_source(Engine& engine, InputSource* source) {
  use_input(engine);
  World& world = engine.world();
  if (InputFeed* feed = world.resource<InputFeed>()) {
    feed->source = source;
    return;
  }
  world.set_resource<InputFeed>().source = source;
  engine.add_step_hook([](Engine& e) {
    Input* input = e.world().resource<Input>();
    const InputFeed* feed = e.world().resource<InputFeed>();
    if (input == nullptr || feed == nullptr) return;
    input->begin_frame();
    if (feed->source != nullptr) {
      feed->source->poll(*input, e.tick());
    } else {
      input->release_all();  // no source: nothing is held (what was held reads as released)
    }
    input->resolve();
  });
}

}  // namespace spindle::core
