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
  now_[a.value()] = down ? 1 : 0;
  return true;
}

void Input::clear() {
  release_all();
  std::fill(before_.begin(), before_.end(), std::uint8_t{0});
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
  });
}

}  // namespace spindle::core
