#include <spindle/gameplay/input.h>

namespace spindle::core {

const char* to_string(Action action) {
  static const char* const names[] = {"up",   "down",  "left",    "right", "fire",
                                      "jump", "pause", "confirm", "cancel"};
  const auto i = static_cast<std::size_t>(action);
  return i < kActionCount ? names[i] : "?";
}

namespace {
// Which source the engine's frame hook polls; a resource so that each engine has its own.
struct InputFeed {
  InputSource* source = nullptr;
};
}  // namespace

void set_input_source(Engine& engine, InputSource* source) {
  World& world = engine.world();
  if (world.resource<Input>() == nullptr) world.set_resource<Input>();
  if (InputFeed* feed = world.resource<InputFeed>()) {
    feed->source = source;
    return;
  }
  world.set_resource<InputFeed>().source = source;
  engine.add_frame_hook([](Engine& e) {
    Input* input = e.world().resource<Input>();
    const InputFeed* feed = e.world().resource<InputFeed>();
    if (input == nullptr || feed == nullptr) return;
    input->begin_frame();
    if (feed->source != nullptr) feed->source->poll(*input, e.frame_number());
  });
}

}  // namespace spindle::core
