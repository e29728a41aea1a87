#include "spindle/gameplay/input_record.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <spindle/base/file.h>
#include <spindle/ecs/world.h>
#include <spindle/engine/engine.h>

namespace spindle::core {

namespace {

constexpr std::string_view kMagic = "spindle-input 1";
constexpr std::string_view kNothing = "-";

// Names go on one line separated by spaces: bytes outside '!'..'~', '%' itself and a name that
// is exactly "-" (the "nothing held" mark) are written as %XX.
std::string encode_name(std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u > '~' || c == '%' || name == kNothing) {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool decode_name(std::string_view in, std::string& out) {
  out.clear();
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return !out.empty();
}

// Splits on single spaces (and tolerates several, and a trailing '\r').
std::vector<std::string_view> words(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t start = line.find_first_not_of(' ', at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find(' ', start), line.size());
    out.push_back(line.substr(start, end - start));
    at = end;
  }
  return out;
}

bool parse_count(std::string_view s, std::uint64_t& value) {
  if (s.empty() || s.size() > 19) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

// --- recording -----------------------------------------------------------------------------------

InputRecorder::InputRecorder(Engine& engine, InputSource* source, std::size_t reserve_runs)
    : engine_(&engine), source_(source), start_tick_(engine.tick()) {
  runs_.reserve(reserve_runs);
  held_.reserve(reserve_runs * 2);
  now_.reserve(Input::kDefaultCapacity);
}

void InputRecorder::poll(Input& input, std::uint64_t step_number) {
  if (source_ != nullptr) {
    source_->poll(input, step_number);
  } else {
    input.release_all();
  }
  now_.clear();
  for (std::uint32_t a = 0; a < input.action_count(); ++a) {
    const ActionId id(static_cast<std::uint16_t>(a));
    // Plain actions as the source wrote them (disabled or not): derived ones are worked out again.
    if (!input.derived(id) && input.source_state(id)) now_.push_back(static_cast<std::uint16_t>(a));
  }
  const std::uint64_t step = engine_->tick() - start_tick_;
  if (!runs_.empty()) {
    const Run& last = runs_.back();
    if (std::equal(now_.begin(), now_.end(), held_.begin() + last.held_begin,
                   held_.begin() + last.held_begin + last.held_count))
      return;  // the same actions held: the run goes on
  }
  runs_.push_back(
      {step, static_cast<std::uint32_t>(held_.size()), static_cast<std::uint32_t>(now_.size())});
  held_.insert(held_.end(), now_.begin(), now_.end());
}

std::uint64_t InputRecorder::steps() const {
  return engine_->tick() - start_tick_;
}

std::string InputRecorder::text() const {
  const Input* input = engine_->world().resource<Input>();
  std::string out(kMagic);
  out += "\nactions";
  const std::uint32_t actions = input != nullptr ? input->action_count() : 0;
  for (std::uint32_t a = 0; a < actions; ++a) {
    out += ' ';
    out += encode_name(input->action_name(ActionId(static_cast<std::uint16_t>(a))));
  }
  const std::uint64_t total = steps();
  out += "\nsteps " + std::to_string(total) + "\n";
  // Steps before the first poll (none when the recorder was the source from the start) are
  // recorded as nothing held.
  const std::uint64_t unpolled = runs_.empty() ? total : std::min(runs_[0].first_step, total);
  if (unpolled > 0) out += std::to_string(unpolled) + " -\n";
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    const std::uint64_t begin = std::min(runs_[r].first_step, total);
    const std::uint64_t end =
        r + 1 < runs_.size() ? std::min(runs_[r + 1].first_step, total) : total;
    if (end <= begin) continue;
    out += std::to_string(end - begin);
    if (runs_[r].held_count == 0) out += " -";
    for (std::uint32_t k = 0; k < runs_[r].held_count; ++k) {
      out += ' ';
      out += encode_name(input->action_name(ActionId(held_[runs_[r].held_begin + k])));
    }
    out += '\n';
  }
  return out;
}

Status InputRecorder::save(const std::string& path) const {
  const std::string body = text();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return Status::error(path + ": cannot write the input recording");
  const bool ok = std::fwrite(body.data(), 1, body.size(), file) == body.size();
  if (std::fclose(file) != 0 || !ok)
    return Status::error(path + ": writing the input recording failed");
  return {};
}

// --- replay --------------------------------------------------------------------------------------

Result<InputReplay> InputReplay::parse(std::string_view text, std::string_view name,
                                       Engine& engine) {
  const auto fail = [name](std::size_t line, const std::string& why) {
    return Status::error(std::string(name) + ":" + std::to_string(line) + ": " + why);
  };
  if (text.size() > kMaxBytes) {
    return Status::error(std::string(name) + ": " + std::to_string(text.size()) +
                         " bytes, over the limit of " + std::to_string(kMaxBytes) +
                         " for an input recording");
  }
  const Input& input = use_input(engine);
  InputReplay replay;
  replay.engine_ = &engine;
  replay.start_tick_ = engine.tick();
  std::vector<ActionId> file_actions;  // the file's action index -> the game's id
  std::vector<std::string> file_names;
  std::uint64_t declared_steps = 0, counted = 0;
  std::size_t line_no = 0;
  std::size_t at = 0;
  std::string decoded;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    const std::vector<std::string_view> w = words(line);
    if (line_no == 1) {
      if (w.size() != 2 || w[0] != "spindle-input")
        return fail(1, "not an input recording (expected \"spindle-input 1\")");
      if (w[1] != "1") return fail(1, "version " + std::string(w[1]) + " is not known (1 is)");
      continue;
    }
    if (line_no == 2) {
      if (w.empty() || w[0] != "actions") return fail(2, "expected the \"actions\" line");
      for (std::size_t k = 1; k < w.size(); ++k) {
        if (!decode_name(w[k], decoded))
          return fail(2, "action name '" + std::string(w[k]) + "' is badly encoded");
        const ActionId id = input.find_action(decoded);
        if (id.is_none()) return fail(2, "the game declares no action '" + decoded + "'");
        if (std::find(file_names.begin(), file_names.end(), decoded) != file_names.end())
          return fail(2, "action '" + decoded + "' is listed twice");
        file_names.push_back(decoded);
        file_actions.push_back(id);
      }
      continue;
    }
    if (line_no == 3) {
      if (w.size() != 2 || w[0] != "steps" || !parse_count(w[1], declared_steps))
        return fail(3, "expected \"steps N\"");
      if (declared_steps > kMaxSteps)
        return fail(3, std::to_string(declared_steps) + " steps, over the limit of " +
                           std::to_string(kMaxSteps));
      continue;
    }
    if (w.empty()) {
      if (at >= text.size()) break;  // the file's last newline
      return fail(line_no, "empty line");
    }
    std::uint64_t count = 0;
    if (!parse_count(w[0], count) || count == 0)
      return fail(line_no, "expected a step count (1 or more), got '" + std::string(w[0]) + "'");
    if (count > declared_steps - counted)
      return fail(line_no,
                  "runs past the " + std::to_string(declared_steps) + " steps the file declares");
    if (w.size() < 2) return fail(line_no, "expected the held actions, or - for none");
    const Run run{counted, static_cast<std::uint32_t>(replay.held_.size()), 0};
    if (!(w.size() == 2 && w[1] == kNothing)) {
      for (std::size_t k = 1; k < w.size(); ++k) {
        if (!decode_name(w[k], decoded))
          return fail(line_no, "action name '" + std::string(w[k]) + "' is badly encoded");
        const auto it = std::find(file_names.begin(), file_names.end(), decoded);
        if (it == file_names.end())
          return fail(line_no, "'" + decoded + "' is not in the actions line");
        replay.held_.push_back(file_actions[static_cast<std::size_t>(it - file_names.begin())]);
      }
    }
    replay.runs_.push_back(run);
    replay.runs_.back().held_count =
        static_cast<std::uint32_t>(replay.held_.size()) - replay.runs_.back().held_begin;
    counted += count;
  }
  if (line_no < 3) return fail(line_no + 1, "the header ends early");
  if (counted != declared_steps) {
    return fail(line_no, "the runs end after " + std::to_string(counted) + " of the " +
                             std::to_string(declared_steps) + " steps the file declares");
  }
  replay.steps_ = declared_steps;
  return replay;
}

Result<InputReplay> InputReplay::load(const std::string& path, Engine& engine) {
  Result<std::string> text = read_file_capped(path, kMaxBytes, "an input recording");
  if (!text) return text.status();
  return parse(text.value(), path, engine);
}

void InputReplay::poll(Input& input, std::uint64_t /*step*/) {
  input.release_all();
  const std::uint64_t step = engine_->tick() - start_tick_;
  if (step >= steps_ || runs_.empty()) return;
  // The last run starting at or before `step`.
  const auto it = std::upper_bound(runs_.begin(), runs_.end(), step,
                                   [](std::uint64_t s, const Run& r) { return s < r.first_step; });
  const Run& run = *(it - 1);
  for (std::uint32_t k = 0; k < run.held_count; ++k) input.set(held_[run.held_begin + k], true);
}

bool InputReplay::finished() const {
  return engine_->tick() - start_tick_ >= steps_;
}

}  // namespace spindle::core
