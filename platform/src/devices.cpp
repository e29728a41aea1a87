#include "spindle/platform/devices.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include <SDL.h>

#include <spindle/base/file.h>
#include <spindle/base/log.h>
#include <spindle/engine/engine.h>
#include <spindle/platform/window.h>

#include "sdl_video.h"

namespace spindle::platform {

// Bit 0: down now. Bit 1: went down since the last poll (a press released before the poll
// still counts for one frame).
constexpr std::uint8_t kDown = 1, kLatched = 2;

struct Devices::Pad {
  SDL_GameController* controller = nullptr;  // null for a scripted pad (inject())
  bool scripted = false;
  bool live() const { return controller != nullptr || scripted; }
  SDL_JoystickID id = -1;
  std::array<std::uint8_t, SDL_CONTROLLER_BUTTON_MAX> buttons{};
  std::array<std::int16_t, SDL_CONTROLLER_AXIS_MAX> axes{};
  std::array<StickValue, 2> filtered{};  // DeviceConfig::stick_filter's output, per step
};

namespace {

static_assert(SDL_NUM_SCANCODES <= 512, "keys_ holds every scancode");

// Appends rather than `"'" + s + "'"`: GCC 12 misreads that concatenation (-Wrestrict).
std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

float unit(std::int16_t raw) {
  return std::max(-1.0f, static_cast<float>(raw) / 32767.0f);
}

// Past the dead zone, rescaled so the output spans 0..1 again.
float rescale(float magnitude, float dead) {
  if (magnitude <= dead) return 0.0f;
  return std::min(1.0f, (magnitude - dead) / (1.0f - dead));
}

}  // namespace

core::Result<std::unique_ptr<Devices>> Devices::open(const DeviceConfig& config) {
  const auto in_unit = [](float v) { return v >= 0.0f && v < 1.0f; };
  if (!in_unit(config.stick_dead_zone) || !in_unit(config.trigger_dead_zone) ||
      !in_unit(config.stick_filter) || !(config.axis_press > 0.0f && config.axis_press <= 1.0f)) {
    return core::Status::error(
        "devices: dead zones and stick_filter must be in [0, 1) and axis_press in (0, 1] (got "
        "stick " +
        std::to_string(config.stick_dead_zone) + ", trigger " +
        std::to_string(config.trigger_dead_zone) + ", filter " +
        std::to_string(config.stick_filter) + ", press " + std::to_string(config.axis_press) + ")");
  }
  if (core::Status s = detail::acquire_video_or_headless(config.driver, true, "devices"); !s)
    return core::Status::error("devices: " + s.message());
  std::unique_ptr<Devices> d(new Devices());
  d->video_ = true;
  d->config_ = config;
  d->pads_ = std::make_unique<Pad[]>(kMaxPlayers);
  d->bindings_.reserve(64);
  // Controllers already plugged in arrive as CONTROLLERDEVICEADDED events on the first poll.
  return d;
}

Devices::~Devices() {
  if (self_ != nullptr) *self_ = nullptr;
  if (engine_ != nullptr) core::set_input_source(*engine_, nullptr);
  if (pads_ != nullptr) {
    for (int p = 0; p < kMaxPlayers; ++p)
      if (pads_[p].controller != nullptr) SDL_GameControllerClose(pads_[p].controller);
  }
  if (video_) detail::release_video();
}

void Devices::attach(core::Engine& engine) {
  engine_ = &engine;
  core::set_input_source(engine, this);
  if (self_ == nullptr) {
    self_ = std::make_shared<Devices*>(this);
    engine.add_frame_hook([self = self_](core::Engine&) {
      if (*self != nullptr) (*self)->pump();
    });
  }
}

void Devices::pump() {
  SDL_Event e;
  while (SDL_PollEvent(&e) != 0) handle(&e);
}

void Devices::watch(Window& window) {
  window_ = &window;
}

core::Result<Devices::Binding> Devices::parse_control(core::ActionId action,
                                                      std::string_view control) const {
  const auto bad = [control](const std::string& why) {
    return core::Status::error("devices: control " + quoted(control) + ": " + why +
                               " (key:NAME, mouse:N, button:NAME or axis:NAME+ / axis:NAME-, "
                               "the last two optionally @PLAYER)");
  };
  const std::size_t colon = control.find(':');
  if (colon == std::string_view::npos) return bad("no kind before ':'");
  const std::string_view kind = control.substr(0, colon);
  std::string_view rest = control.substr(colon + 1);
  int player = kAnyPlayer;
  if (kind == "button" || kind == "axis") {
    if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
      const std::string_view digits = rest.substr(at + 1);
      if (digits.size() != 1 || digits[0] < '0' || digits[0] >= '0' + kMaxPlayers)
        return bad("player must be 0.." + std::to_string(kMaxPlayers - 1));
      player = digits[0] - '0';
      rest = rest.substr(0, at);
    }
  }
  // The calls' own errors, said of the whole control as the file has it.
  const auto named = [control](core::Result<Binding> r) -> core::Result<Binding> {
    if (r) return r;
    constexpr std::string_view prefix = "devices: ";
    std::string why = r.message();
    if (why.starts_with(prefix)) why.erase(0, prefix.size());
    return core::Status::error("devices: control " + quoted(control) + ": " + why);
  };
  if (kind == "key") return named(key_binding(action, rest));
  if (kind == "button") return named(button_binding(action, rest, player));
  if (kind == "mouse") {
    if (rest.size() != 1 || rest[0] < '1' || rest[0] > '0' + kMouseButtons)
      return bad("mouse buttons are 1..5");
    return named(mouse_binding(action, rest[0] - '0'));
  }
  if (kind == "axis") {
    if (rest.empty() || (rest.back() != '+' && rest.back() != '-'))
      return bad("an axis ends in + or -");
    const float direction = rest.back() == '+' ? 1.0f : -1.0f;
    return named(axis_binding(action, rest.substr(0, rest.size() - 1), direction, player));
  }
  return bad("unknown kind " + quoted(kind));
}

core::Result<Devices::Binding> Devices::key_binding(core::ActionId action,
                                                    std::string_view key) const {
  const SDL_Scancode code = SDL_GetScancodeFromName(std::string(key).c_str());
  if (code == SDL_SCANCODE_UNKNOWN)
    return core::Status::error("devices: no key named " + quoted(key) +
                               " (SDL key names: "
                               "\"A\", \"Space\", \"Left\", \"Return\", \"Left Shift\"...)");
  return Binding{action, Kind::Key, code, kAnyPlayer, 1.0f};
}

core::Result<Devices::Binding> Devices::mouse_binding(core::ActionId action, int button) const {
  if (button < 1 || button > kMouseButtons)
    return core::Status::error("devices: mouse button " + std::to_string(button) +
                               " is outside 1..5");
  return Binding{action, Kind::Mouse, button, kAnyPlayer, 1.0f};
}

core::Result<Devices::Binding> Devices::button_binding(core::ActionId action,
                                                       std::string_view button, int player) const {
  const SDL_GameControllerButton b =
      SDL_GameControllerGetButtonFromString(std::string(button).c_str());
  if (b == SDL_CONTROLLER_BUTTON_INVALID)
    return core::Status::error("devices: no controller button named " + quoted(button) +
                               " (\"a\", \"b\", \"x\", \"y\", \"start\", \"dpup\"...)");
  if (player != kAnyPlayer && (player < 0 || player >= kMaxPlayers))
    return core::Status::error("devices: player " + std::to_string(player) + " is outside 0.." +
                               std::to_string(kMaxPlayers - 1));
  return Binding{action, Kind::Button, b, player, 1.0f};
}

core::Result<Devices::Binding> Devices::axis_binding(core::ActionId action, std::string_view axis,
                                                     float direction, int player) const {
  const SDL_GameControllerAxis a = SDL_GameControllerGetAxisFromString(std::string(axis).c_str());
  if (a == SDL_CONTROLLER_AXIS_INVALID)
    return core::Status::error("devices: no controller axis named " + quoted(axis) +
                               " (\"leftx\", \"lefty\", \"rightx\", \"righty\", "
                               "\"lefttrigger\", \"righttrigger\")");
  if (direction != 1.0f && direction != -1.0f)
    return core::Status::error("devices: axis " + quoted(axis) + " direction must be +1 or -1");
  if (player != kAnyPlayer && (player < 0 || player >= kMaxPlayers))
    return core::Status::error("devices: player " + std::to_string(player) + " is outside 0.." +
                               std::to_string(kMaxPlayers - 1));
  return Binding{action, Kind::Axis, a, player, direction};
}

core::Status Devices::add(core::Result<Binding> binding) {
  if (!binding) return binding.status();
  bindings_.push_back(binding.value());
  return {};
}

core::Status Devices::bind(core::ActionId action, std::string_view control) {
  return add(parse_control(action, control));
}

core::Status Devices::bind_key(core::ActionId action, std::string_view key) {
  return add(key_binding(action, key));
}

core::Status Devices::bind_mouse_button(core::ActionId action, int button) {
  return add(mouse_binding(action, button));
}

core::Status Devices::bind_button(core::ActionId action, std::string_view button, int player) {
  return add(button_binding(action, button, player));
}

core::Status Devices::bind_axis(core::ActionId action, std::string_view axis, float direction,
                                int player) {
  return add(axis_binding(action, axis, direction, player));
}

core::Status Devices::inject(std::string_view control, float value) {
  if (!(value >= -1.0f && value <= 1.0f))
    return core::Status::error("devices: inject " + quoted(control) + ": value " +
                               std::to_string(value) + " is outside -1..1");
  const core::Result<Binding> parsed = parse_control(core::ActionId{}, control);
  if (!parsed) return parsed.status();
  const Binding& b = parsed.value();
  const bool down = value > 0.0f;
  SDL_Event e{};
  switch (b.kind) {
    case Kind::Key:
      e.type = down ? SDL_KEYDOWN : SDL_KEYUP;
      e.key.state = down ? SDL_PRESSED : SDL_RELEASED;
      e.key.keysym.scancode = static_cast<SDL_Scancode>(b.code);
      break;
    case Kind::Mouse:
      e.type = down ? SDL_MOUSEBUTTONDOWN : SDL_MOUSEBUTTONUP;
      e.button.state = down ? SDL_PRESSED : SDL_RELEASED;
      e.button.button = static_cast<std::uint8_t>(b.code);
      e.button.x = mouse_x_;
      e.button.y = mouse_y_;
      break;
    case Kind::Button:
    case Kind::Axis: {
      // Player 0 unless the control names one. A player without a controller gets a scripted
      // one, which stays connected (players(), connected()) until the Devices goes.
      const int player = b.player == kAnyPlayer ? 0 : b.player;
      Pad& pad = pads_[player];
      if (!pad.live()) {
        pad = Pad{};
        pad.scripted = true;
        pad.id = -2 - player;  // SDL's instance ids are never negative
      }
      if (b.kind == Kind::Button) {
        e.type = down ? SDL_CONTROLLERBUTTONDOWN : SDL_CONTROLLERBUTTONUP;
        e.cbutton.which = pad.id;
        e.cbutton.button = static_cast<std::uint8_t>(b.code);
        e.cbutton.state = down ? SDL_PRESSED : SDL_RELEASED;
      } else {
        e.type = SDL_CONTROLLERAXISMOTION;
        e.caxis.which = pad.id;
        e.caxis.axis = static_cast<std::uint8_t>(b.code);
        const float pushed = std::clamp(value * b.direction, -1.0f, 1.0f);
        e.caxis.value = static_cast<std::int16_t>(std::lround(pushed * 32767.0f));
      }
      break;
    }
  }
  handle(&e);
  return {};
}

void Devices::unbind(core::ActionId action) {
  std::erase_if(bindings_, [action](const Binding& b) { return b.action == action; });
}

std::string Devices::control_text(std::size_t index) const {
  const Binding& b = bindings_.at(index);
  std::string out;
  switch (b.kind) {
    case Kind::Key:
      out = "key:";
      out += SDL_GetScancodeName(static_cast<SDL_Scancode>(b.code));
      break;
    case Kind::Mouse:
      out = "mouse:" + std::to_string(b.code);
      break;
    case Kind::Button:
      out = "button:";
      out += SDL_GameControllerGetStringForButton(static_cast<SDL_GameControllerButton>(b.code));
      break;
    case Kind::Axis:
      out = "axis:";
      out += SDL_GameControllerGetStringForAxis(static_cast<SDL_GameControllerAxis>(b.code));
      out.push_back(b.direction > 0 ? '+' : '-');
      break;
  }
  if (b.player != kAnyPlayer) {
    out.push_back('@');
    out += std::to_string(b.player);
  }
  return out;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool starts_with_kind(std::string_view s) {
  for (const std::string_view kind : {"key:", "mouse:", "button:", "axis:"})
    if (s.starts_with(kind)) return true;
  return false;
}

// A map line's controls. Commas separate them, but a key may be named "," itself, so a comma
// separates only where the next control's kind follows it (or the line ends).
std::vector<std::string_view> split_controls(std::string_view list) {
  std::vector<std::string_view> out;
  list = trim(list);
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] != ',') continue;
    const std::string_view token = trim(list.substr(start, i - start));
    const std::string_view after = trim(list.substr(i + 1));
    if (token == "key:" || !(after.empty() || starts_with_kind(after))) continue;
    out.push_back(token);
    start = i + 1;
  }
  if (const std::string_view last = trim(list.substr(start)); !last.empty()) out.push_back(last);
  return out;
}

}  // namespace

core::Status Devices::parse_map(std::string_view text, std::string_view source,
                                const core::Input& input) {
  const auto fail = [source](std::size_t line, const std::string& why) {
    return core::Status::error(std::string(source) + ":" + std::to_string(line) + ": " + why);
  };
  if (text.size() > kMaxMapBytes) {
    return core::Status::error(std::string(source) + ": " + std::to_string(text.size()) +
                               " bytes, over the limit of " + std::to_string(kMaxMapBytes) +
                               " for an input map");
  }
  // The file's bindings go into bindings_ alone while it is read, so bind() checks them; the
  // game's are put back, less the actions the file names, only once every line was good.
  std::vector<Binding> kept = std::move(bindings_);
  bindings_.clear();
  std::vector<std::pair<core::ActionId, std::size_t>> named;  // action, line
  std::size_t line_number = 0;
  core::Status status;
  for (std::size_t pos = 0; pos <= text.size() && status;) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    for (const char c : line) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 && c != '\t') {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", byte);
        status = fail(line_number, std::string("a control character (byte ") + hex + ")");
        break;
      }
    }
    if (!status) break;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      status = fail(line_number, "expected 'action = control, control...', found no '='");
      break;
    }
    const std::string_view name = trim(line.substr(0, eq));
    if (name.empty()) {
      status = fail(line_number, "no action name before '='");
      break;
    }
    const core::ActionId action = input.find_action(name);
    if (action.is_none()) {
      status = fail(line_number, "the game declares no action " + quoted(name));
      break;
    }
    if (input.derived(action)) {
      status = fail(line_number,
                    quoted(name) + " is a chord or a sequence: it follows its parts, bind those");
      break;
    }
    for (const auto& [other, first_line] : named) {
      if (other == action) {
        status = fail(line_number,
                      quoted(name) + " is mapped already on line " + std::to_string(first_line));
        break;
      }
    }
    if (!status) break;
    named.emplace_back(action, line_number);
    for (const std::string_view control : split_controls(line.substr(eq + 1))) {
      if (core::Status s = bind(action, control); !s) {
        std::string why = s.message();
        constexpr std::string_view prefix = "devices: ";
        if (why.starts_with(prefix)) why.erase(0, prefix.size());
        status = fail(line_number, why);
        break;
      }
    }
  }
  if (!status) {
    bindings_ = std::move(kept);
    return status;
  }
  std::erase_if(kept, [&named](const Binding& b) {
    return std::any_of(named.begin(), named.end(),
                       [&b](const auto& n) { return n.first == b.action; });
  });
  kept.insert(kept.end(), bindings_.begin(), bindings_.end());
  bindings_ = std::move(kept);
  return {};
}

core::Status Devices::load_map(const std::string& path, const core::Input& input) {
  const core::Result<std::string> text = core::read_file_capped(path, kMaxMapBytes, "an input map");
  if (!text) return text.status();
  return parse_map(text.value(), path, input);
}

core::Result<std::string> Devices::map_text(const core::Input& input) const {
  std::string out = "# Spindle input map: action = control, control...\n";
  for (std::uint32_t a = 0; a < input.action_count(); ++a) {
    const core::ActionId id(static_cast<std::uint16_t>(a));
    std::string controls;
    for (std::size_t k = 0; k < bindings_.size(); ++k) {
      if (bindings_[k].action != id) continue;
      if (!controls.empty()) controls += ", ";
      controls += control_text(k);
    }
    if (controls.empty()) continue;
    // A key whose name ends in a comma ("Keypad ,", ",") last on its line: a comma at the end of
    // a line separates, so one more keeps the name whole (split_controls()).
    if (controls.back() == ',') controls += ',';
    const std::string_view name = input.action_name(id);
    if (name.find_first_of("=\n\r") != std::string_view::npos || trim(name) != name ||
        name.front() == '#') {
      return core::Status::error("devices: action " + quoted(name) +
                                 " cannot be written to an input map (an '=', a line break, "
                                 "spaces around it or a leading '#')");
    }
    out.append(name);
    out += " = ";
    out += controls;
    out += '\n';
  }
  return out;
}

core::Status Devices::save_map(const std::string& path, const core::Input& input) const {
  const core::Result<std::string> text = map_text(input);
  if (!text) return text.status();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return core::Status::error(path + ": cannot write the input map");
  const bool ok =
      std::fwrite(text.value().data(), 1, text.value().size(), file) == text.value().size();
  if (std::fclose(file) != 0 || !ok)
    return core::Status::error(path + ": writing the input map failed");
  return {};
}

bool Devices::key_down(std::string_view key) const {
  const SDL_Scancode code = SDL_GetScancodeFromName(std::string(key).c_str());
  return code != SDL_SCANCODE_UNKNOWN && (keys_[code] & kDown) != 0;
}

bool Devices::mouse_down(int button) const {
  return button >= 1 && button <= kMouseButtons && (mouse_[button] & kDown) != 0;
}

core::Status Devices::set_relative_mouse(bool on) {
  if (SDL_SetRelativeMouseMode(on ? SDL_TRUE : SDL_FALSE) != 0)
    return core::Status::error(std::string("devices: relative mouse mode: ") + SDL_GetError());
  return {};
}

bool Devices::connected(int player) const {
  return player >= 0 && player < kMaxPlayers && pads_[player].live();
}

int Devices::players() const {
  int n = 0;
  for (int p = 0; p < kMaxPlayers; ++p) n += pads_[p].live() ? 1 : 0;
  return n;
}

float Devices::axis_value(int player, int axis) const {
  const Pad& pad = pads_[player];
  if (!pad.live()) return 0.0f;
  const bool trigger =
      axis == SDL_CONTROLLER_AXIS_TRIGGERLEFT || axis == SDL_CONTROLLER_AXIS_TRIGGERRIGHT;
  if (trigger) return rescale(unit(pad.axes[axis]), config_.trigger_dead_zone);
  // A stick axis through the stick's radial dead zone (the pair decides, not the axis alone).
  const bool left = axis == SDL_CONTROLLER_AXIS_LEFTX || axis == SDL_CONTROLLER_AXIS_LEFTY;
  const StickValue s = stick(player, left ? Stick::Left : Stick::Right);
  return axis == SDL_CONTROLLER_AXIS_LEFTX || axis == SDL_CONTROLLER_AXIS_RIGHTX ? s.x : s.y;
}

StickValue Devices::stick(int player, Stick which) const {
  if (!connected(player)) return {};
  if (config_.stick_filter > 0.0f) return pads_[player].filtered[which == Stick::Left ? 0 : 1];
  return raw_stick(player, which);
}

StickValue Devices::raw_stick(int player, Stick which) const {
  if (!connected(player)) return {};
  const Pad& pad = pads_[player];
  const int ax = which == Stick::Left ? SDL_CONTROLLER_AXIS_LEFTX : SDL_CONTROLLER_AXIS_RIGHTX;
  const int ay = which == Stick::Left ? SDL_CONTROLLER_AXIS_LEFTY : SDL_CONTROLLER_AXIS_RIGHTY;
  const float x = unit(pad.axes[ax]), y = unit(pad.axes[ay]);
  const float magnitude = std::sqrt(x * x + y * y);
  const float scaled = rescale(magnitude, config_.stick_dead_zone);
  if (scaled == 0.0f) return {};
  return {x / magnitude * scaled, y / magnitude * scaled};
}

float Devices::trigger(int player, Trigger which) const {
  if (!connected(player)) return 0.0f;
  return axis_value(player, which == Trigger::Left ? SDL_CONTROLLER_AXIS_TRIGGERLEFT
                                                   : SDL_CONTROLLER_AXIS_TRIGGERRIGHT);
}

bool Devices::button_down(int player, std::string_view button) const {
  const SDL_GameControllerButton b =
      SDL_GameControllerGetButtonFromString(std::string(button).c_str());
  return connected(player) && b != SDL_CONTROLLER_BUTTON_INVALID &&
         (pads_[player].buttons[b] & kDown) != 0;
}

void Devices::release_everything() {
  for (auto& k : keys_) k &= static_cast<std::uint8_t>(~kDown);
  for (auto& m : mouse_) m &= static_cast<std::uint8_t>(~kDown);
  for (int p = 0; p < kMaxPlayers; ++p)
    for (auto& b : pads_[p].buttons) b &= static_cast<std::uint8_t>(~kDown);
}

void Devices::handle(const void* sdl_event) {
  const SDL_Event& e = *static_cast<const SDL_Event*>(sdl_event);
  ++events_;
  const auto press = [](std::uint8_t& state, bool down) {
    state = down ? static_cast<std::uint8_t>(kDown | kLatched)
                 : static_cast<std::uint8_t>(state & ~kDown);
  };
  const auto pad_of = [this](SDL_JoystickID id) -> Pad* {
    for (int p = 0; p < kMaxPlayers; ++p)
      if (pads_[p].live() && pads_[p].id == id) return &pads_[p];
    return nullptr;
  };
  switch (e.type) {
    case SDL_QUIT:
      quit_seen_ = true;
      if (engine_ != nullptr) engine_->request_quit();
      break;
    case SDL_WINDOWEVENT:
      if (window_ != nullptr && e.window.windowID == window_->sdl_id()) {
        // The player closed the game's window (SDL sends SDL_QUIT too only when the hint
        // SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE holds and it was the last window).
        if (e.window.event == SDL_WINDOWEVENT_CLOSE) {
          quit_seen_ = true;
          if (engine_ != nullptr) engine_->request_quit();
        }
        if (e.window.event == SDL_WINDOWEVENT_FOCUS_GAINED) window_->on_focus(true);
        if (e.window.event == SDL_WINDOWEVENT_FOCUS_LOST) {
          window_->on_focus(false);
          release_everything();  // keys released while away would otherwise stay down
        }
      }
      break;
    case SDL_KEYDOWN:
    case SDL_KEYUP:
      if (e.key.keysym.scancode > SDL_SCANCODE_UNKNOWN && e.key.keysym.scancode < SDL_NUM_SCANCODES)
        press(keys_[e.key.keysym.scancode], e.type == SDL_KEYDOWN);
      break;
    case SDL_MOUSEMOTION:
      mouse_x_ = e.motion.x, mouse_y_ = e.motion.y;
      pending_dx_ += e.motion.xrel, pending_dy_ += e.motion.yrel;
      break;
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
      if (e.button.button >= 1 && e.button.button <= kMouseButtons)
        press(mouse_[e.button.button], e.type == SDL_MOUSEBUTTONDOWN);
      mouse_x_ = e.button.x, mouse_y_ = e.button.y;
      break;
    case SDL_MOUSEWHEEL:
      pending_wheel_ += e.wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e.wheel.y : e.wheel.y;
      break;
    case SDL_CONTROLLERDEVICEADDED: {
      // `which` is a device index here; the controller's instance id names it from now on.
      const SDL_JoystickID id = SDL_JoystickGetDeviceInstanceID(e.cdevice.which);
      if (pad_of(id) != nullptr) break;  // already open (an added event seen twice)
      int slot = -1;
      for (int p = 0; p < kMaxPlayers && slot < 0; ++p)
        if (!pads_[p].live()) slot = p;
      if (slot < 0) {
        SPINDLE_LOG_WARNING(Core,
                            "devices: a controller arrived with %d players connected; "
                            "ignored",
                            kMaxPlayers);
        break;
      }
      SDL_GameController* c = SDL_GameControllerOpen(e.cdevice.which);
      if (c == nullptr) {
        SPINDLE_LOG_WARNING(Core, "devices: a controller could not be opened: %s", SDL_GetError());
        break;
      }
      pads_[slot] = Pad{};
      pads_[slot].controller = c;
      pads_[slot].id = id;
      SPINDLE_LOG_INFO(Core, "devices: player %d: controller '%s'", slot,
                       SDL_GameControllerName(c) != nullptr ? SDL_GameControllerName(c) : "?");
      break;
    }
    case SDL_CONTROLLERDEVICEREMOVED:
      if (Pad* pad = pad_of(e.cdevice.which)) {
        if (pad->controller != nullptr) SDL_GameControllerClose(pad->controller);
        *pad = Pad{};
      }
      break;
    case SDL_CONTROLLERBUTTONDOWN:
    case SDL_CONTROLLERBUTTONUP:
      if (Pad* pad = pad_of(e.cbutton.which);
          pad != nullptr && e.cbutton.button < SDL_CONTROLLER_BUTTON_MAX)
        press(pad->buttons[e.cbutton.button], e.type == SDL_CONTROLLERBUTTONDOWN);
      break;
    case SDL_CONTROLLERAXISMOTION:
      if (Pad* pad = pad_of(e.caxis.which);
          pad != nullptr && e.caxis.axis < SDL_CONTROLLER_AXIS_MAX)
        pad->axes[e.caxis.axis] = e.caxis.value;
      break;
    default:
      break;
  }
}

bool Devices::active(const Binding& b) const {
  const auto on = [](std::uint8_t s) { return s != 0; };  // down now, or pressed since the poll
  switch (b.kind) {
    case Kind::Key:
      return on(keys_[b.code]);
    case Kind::Mouse:
      return on(mouse_[b.code]);
    case Kind::Button:
      for (int p = 0; p < kMaxPlayers; ++p) {
        if ((b.player == kAnyPlayer || b.player == p) && pads_[p].live() &&
            on(pads_[p].buttons[b.code]))
          return true;
      }
      return false;
    case Kind::Axis:
      for (int p = 0; p < kMaxPlayers; ++p) {
        if ((b.player == kAnyPlayer || b.player == p) &&
            axis_value(p, b.code) * b.direction >= config_.axis_press)
          return true;
      }
      return false;
  }
  return false;
}

void Devices::poll(core::Input& input, std::uint64_t /*step*/) {
  pump();
  // What moved since the step before is this step's.
  mouse_dx_ = std::exchange(pending_dx_, 0);
  mouse_dy_ = std::exchange(pending_dy_, 0);
  wheel_ = std::exchange(pending_wheel_, 0);
  if (config_.stick_filter > 0.0f) {
    const float keep = config_.stick_filter;
    for (int p = 0; p < kMaxPlayers; ++p) {
      if (!connected(p)) continue;
      for (const Stick which : {Stick::Left, Stick::Right}) {
        StickValue& f = pads_[p].filtered[which == Stick::Left ? 0 : 1];
        const StickValue now = raw_stick(p, which);
        f = {keep * f.x + (1.0f - keep) * now.x, keep * f.y + (1.0f - keep) * now.y};
      }
    }
  }
  if (action_held_.size() < input.capacity()) action_held_.assign(input.capacity(), 0);
  for (const Binding& b : bindings_) {
    if (input.knows(b.action)) action_held_[b.action.value()] |= active(b) ? 1 : 2;
  }
  // Every bound action gets its state (1: some binding active; 2: bound, none active).
  for (std::uint32_t a = 0; a < input.action_count(); ++a) {
    if (action_held_[a] != 0)
      input.set(core::ActionId(static_cast<std::uint16_t>(a)), (action_held_[a] & 1) != 0);
    action_held_[a] = 0;
  }
  // Latches have been seen by this step's actions: from now on only what is down counts.
  for (auto& k : keys_) k &= kDown;
  for (auto& m : mouse_) m &= kDown;
  for (int p = 0; p < kMaxPlayers; ++p)
    for (auto& b : pads_[p].buttons) b &= kDown;
}

}  // namespace spindle::platform
