#include <spindle/base/config.h>
#include <spindle/base/file.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <ini.h>

#include <spindle/base/assert.h>
#include <spindle/base/log.h>

namespace spindle::core {
namespace {

constexpr std::string_view kCommandLine = "command line";
constexpr std::size_t kMaxQuoted = 48;  // longer values are cut in messages

// A value as shown in a message: quoted, non-printable bytes escaped, long ones cut.
std::string quote(std::string_view value) {
  std::string out = "'";
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (i == kMaxQuoted) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\x%02x", c);
      out += esc;
    }
  }
  out += "'";
  return out;
}

std::string location(std::string_view origin, int line) {
  std::string out(origin);
  if (line > 0) {
    out += ':';
    out += std::to_string(line);  // appended separately: g++ 12 -O3 misfires -Wrestrict on "a" + b
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string_view line_text(std::string_view text, int line) {
  std::size_t pos = 0;
  for (int i = 1; i < line && pos < text.size(); ++i) {
    std::size_t nl = text.find('\n', pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  std::size_t nl = text.find('\n', pos);
  return text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
}

}  // namespace

// inih drives this through C callbacks: a line reader that counts lines (so every handler call
// knows its line) and a handler that fills a temporary map.
struct SettingsParser {
  const Settings* settings = nullptr;
  std::string_view text;
  std::string_view origin;
  std::size_t pos = 0;
  int line = 0;  // the line the reader handed out last
  bool line_indented = false;
  Settings::Map values;
  int error_line = 0;  // first error found by the reader or the handler
  std::string error;

  void fail(int at, std::string message) {
    if (error_line != 0 && error_line <= at) return;
    error_line = at;
    error = location(origin, at) + ": " + message;
  }

  static char* read_line(char* out, int size, void* stream) {
    auto& p = *static_cast<SettingsParser*>(stream);
    if (p.pos >= p.text.size()) return nullptr;
    std::size_t nl = p.text.find('\n', p.pos);
    std::size_t end = nl == std::string_view::npos ? p.text.size() : nl + 1;
    std::string_view raw = p.text.substr(p.pos, end - p.pos);
    p.pos = end;
    ++p.line;
    // The line end goes (inih strips trailing whitespace anyway), so "\n" and "\r\n" files
    // share one limit; the buffer also holds the terminating NUL.
    if (raw.ends_with('\n')) raw.remove_suffix(1);
    if (raw.ends_with('\r')) raw.remove_suffix(1);
    const std::size_t limit =
        std::min(Settings::kMaxLineChars, static_cast<std::size_t>(std::max(size, 1) - 1));
    if (raw.size() > limit) {
      p.fail(p.line, "line is longer than " + std::to_string(limit) + " characters");
      return nullptr;  // inih stops; the error above is reported
    }
    if (raw.find('\0') != std::string_view::npos) {
      // inih sees C strings; a NUL would silently cut the line.
      p.fail(p.line, "unexpected NUL byte (binary data in a text file?)");
      raw = raw.substr(0, raw.find('\0'));
    }
    p.line_indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    std::memcpy(out, raw.data(), raw.size());
    out[raw.size()] = '\0';
    return out;
  }

  static int handle(void* user, const char* section, const char* name, const char* value) {
    auto& p = *static_cast<SettingsParser*>(user);
    std::string key = section[0] != '\0' ? std::string(section) + "." + name : std::string(name);
    if (name[0] == '\0') {
      p.fail(p.line, "missing key name before '='");
      return 0;
    }
    auto it = p.values.find(key);
    if (it != p.values.end()) {
      if (!p.line_indented) {
        p.fail(p.line, key + ": set twice (first on line " + std::to_string(it->second.line) + ")");
        return 0;
      }
      // An indented line continues the previous value (inih's multi-line values).
      it->second.value += "\n";
      it->second.value += value;
    } else {
      it = p.values.emplace(key, Settings::Entry{value, location(p.origin, p.line), p.line}).first;
    }
    if (std::string problem = p.settings->check_value(key, it->second.value); !problem.empty()) {
      p.fail(p.line, key + ": " + problem);
      return 0;
    }
    return 1;
  }
};

// --- definitions -------------------------------------------------------------------------------

void Settings::define_string(std::string_view key, std::string_view fallback) {
  Definition d;
  d.type = Type::String;
  d.fallback = std::string(fallback);
  definitions_[std::string(key)] = std::move(d);
}

void Settings::define_int(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max) {
  SPINDLE_ASSERT(min <= fallback && fallback <= max, "a setting's default lies in its range");
  Definition d;
  d.type = Type::Int;
  d.fallback = std::to_string(fallback);
  d.int_min = min;
  d.int_max = max;
  definitions_[std::string(key)] = std::move(d);
}

void Settings::define_float(std::string_view key, double fallback, double min, double max) {
  SPINDLE_ASSERT(min <= fallback && fallback <= max, "a setting's default lies in its range");
  Definition d;
  d.type = Type::Float;
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", fallback);
  d.fallback = text;
  d.float_min = min;
  d.float_max = max;
  definitions_[std::string(key)] = std::move(d);
}

void Settings::define_bool(std::string_view key, bool fallback) {
  Definition d;
  d.type = Type::Bool;
  d.fallback = fallback ? "true" : "false";
  definitions_[std::string(key)] = std::move(d);
}

std::string Settings::check_value(std::string_view key, std::string_view value) const {
  auto it = definitions_.find(key);
  if (it == definitions_.end()) return {};
  const Definition& d = it->second;
  switch (d.type) {
    case Type::String:
      return {};
    case Type::Int: {
      auto r = parse_int(value, d.int_min, d.int_max);
      return r ? std::string() : r.message();
    }
    case Type::Float: {
      auto r = parse_float(value, d.float_min, d.float_max);
      return r ? std::string() : r.message();
    }
    case Type::Bool: {
      auto r = parse_bool(value);
      return r ? std::string() : r.message();
    }
  }
  return {};
}

const Settings::Definition& Settings::definition(std::string_view key, Type type) const {
  auto it = definitions_.find(key);
  SPINDLE_ASSERT(it != definitions_.end(), "a setting read without a default is defined first");
  SPINDLE_ASSERT(it->second.type == type, "a setting is read with the type it was defined with");
  return it->second;
}

// --- loading -----------------------------------------------------------------------------------

Status Settings::load_file(const std::string& path) {
  Result<std::string> text = read_file_capped(path, kMaxFileBytes, "a settings file");
  if (!text) return text.status();
  return load_string(text.value(), path);
}

Status Settings::load_string(std::string_view text, std::string_view origin) {
  SettingsParser parser;
  parser.settings = this;
  parser.text = text;
  parser.origin = origin;
  int result =
      ini_parse_stream(&SettingsParser::read_line, &parser, &SettingsParser::handle, &parser);
  if (result < 0) return Status::error(std::string(origin) + ": parser out of memory");
  if (result > 0 && (parser.error_line == 0 || result < parser.error_line)) {
    // inih's own error: a line that is neither "[section]", "key = value" nor a comment.
    std::string_view raw = line_text(text, result);
    std::size_t first = raw.find_first_not_of(" \t\r");
    bool section = first != std::string_view::npos && raw[first] == '[';
    parser.fail(result,
                section ? "section header without closing ']': " + quote(raw)
                        : "expected 'key = value', '[section]' or a comment, got " + quote(raw));
  }
  if (parser.error_line != 0) return Status::error(std::move(parser.error));

  // Overrides given earlier outrank the file; they were checked when they were given.
  Map values = parser.values;
  for (const auto& [key, value] : overrides_) {
    values[key] = Entry{value, std::string(kCommandLine), 0};
  }
  values_.swap(values);
  file_values_.swap(parser.values);
  return {};
}

Status Settings::apply_override(std::string_view assignment) {
  std::size_t eq = assignment.find('=');
  std::string_view key = assignment.substr(0, eq);
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.remove_suffix(1);
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.front())))
    key.remove_prefix(1);
  if (eq == std::string_view::npos || key.empty()) {
    return Status::error(std::string(kCommandLine) + ": expected section.key=value, got " +
                         quote(assignment));
  }
  std::string_view value = assignment.substr(eq + 1);
  if (std::string problem = check_value(key, value); !problem.empty()) {
    return Status::error(std::string(kCommandLine) + ": " + std::string(key) + ": " + problem);
  }
  std::string k(key);
  values_[k] = Entry{std::string(value), std::string(kCommandLine), 0};
  for (auto& [ok, ov] : overrides_) {
    if (ok == k) {
      ov = std::string(value);
      return {};
    }
  }
  overrides_.emplace_back(std::move(k), std::string(value));
  return {};
}

Status Settings::apply_command_line(int argc, const char* const* argv) {
  std::vector<std::string_view> assignments;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i] != nullptr ? argv[i] : "";
    if (arg == "--set") {
      if (i + 1 >= argc || argv[i + 1] == nullptr) {
        return Status::error(std::string(kCommandLine) + ": --set needs section.key=value");
      }
      assignments.push_back(argv[++i]);
    } else if (arg.starts_with("--set=")) {
      assignments.push_back(arg.substr(6));
    }
  }
  // All or nothing: check every assignment on a copy first.
  Settings trial = *this;
  for (std::string_view a : assignments) {
    if (Status s = trial.apply_override(a); !s) return s;
  }
  *this = std::move(trial);
  return {};
}

void Settings::clear_overrides() {
  // An override may have replaced a file value: that value comes back, not nothing.
  values_ = file_values_;
  overrides_.clear();
}

// --- reading -----------------------------------------------------------------------------------

const Settings::Entry* Settings::find(std::string_view key) const {
  auto it = values_.find(key);
  return it != values_.end() ? &it->second : nullptr;
}

bool Settings::has(std::string_view key) const {
  return find(key) != nullptr;
}

std::string Settings::origin(std::string_view key) const {
  const Entry* e = find(key);
  return e != nullptr ? e->origin : std::string();
}

std::vector<std::string> Settings::keys() const {
  std::vector<std::string> out;
  out.reserve(values_.size());
  for (const auto& [key, entry] : values_) out.push_back(key);
  return out;
}

std::string Settings::get_string(std::string_view key) const {
  const Definition& d = definition(key, Type::String);
  const Entry* e = find(key);
  return e != nullptr ? e->value : d.fallback;
}

std::int64_t Settings::get_int(std::string_view key) const {
  const Definition& d = definition(key, Type::Int);
  const Entry* e = find(key);
  return parse_int(e != nullptr ? e->value : d.fallback, d.int_min, d.int_max)
      .value_or(std::strtoll(d.fallback.c_str(), nullptr, 10));
}

double Settings::get_float(std::string_view key) const {
  const Definition& d = definition(key, Type::Float);
  const Entry* e = find(key);
  return parse_float(e != nullptr ? e->value : d.fallback, d.float_min, d.float_max)
      .value_or(std::strtod(d.fallback.c_str(), nullptr));
}

bool Settings::get_bool(std::string_view key) const {
  const Definition& d = definition(key, Type::Bool);
  const Entry* e = find(key);
  return parse_bool(e != nullptr ? e->value : d.fallback).value_or(d.fallback == "true");
}

namespace {

// Shared by the ad hoc getters: the parsed value, or the fallback with a warning naming where
// the bad value came from.
template <class T, class Parse>
T value_or_warn(const std::string* value, const std::string* origin, std::string_view key,
                T fallback, Parse&& parse) {
  if (value == nullptr) return fallback;
  auto r = parse(*value);
  if (r) return r.value();
  SPINDLE_LOG_WARNING(Config, "%s: %.*s: %s (using the default)", origin->c_str(),
                      static_cast<int>(key.size()), key.data(), r.message().c_str());
  return fallback;
}

}  // namespace

std::string Settings::get_string(std::string_view key, std::string_view fallback) const {
  const Entry* e = find(key);
  return e != nullptr ? e->value : std::string(fallback);
}

std::int64_t Settings::get_int(std::string_view key, std::int64_t fallback, std::int64_t min,
                               std::int64_t max) const {
  const Entry* e = find(key);
  return value_or_warn(e ? &e->value : nullptr, e ? &e->origin : nullptr, key, fallback,
                       [&](const std::string& v) { return parse_int(v, min, max); });
}

double Settings::get_float(std::string_view key, double fallback, double min, double max) const {
  const Entry* e = find(key);
  return value_or_warn(e ? &e->value : nullptr, e ? &e->origin : nullptr, key, fallback,
                       [&](const std::string& v) { return parse_float(v, min, max); });
}

bool Settings::get_bool(std::string_view key, bool fallback) const {
  const Entry* e = find(key);
  return value_or_warn(e ? &e->value : nullptr, e ? &e->origin : nullptr, key, fallback,
                       [](const std::string& v) { return parse_bool(v); });
}

// --- parsers -----------------------------------------------------------------------------------

Result<std::int64_t> Settings::parse_int(std::string_view text, std::int64_t min,
                                         std::int64_t max) {
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    return Status::error("expected an integer, got " + quote(text));
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) {
    return Status::error(quote(text) + " is out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return value;
}

Result<double> Settings::parse_float(std::string_view text, double min, double max) {
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range) || std::isnan(value)) {
    return Status::error("expected a number, got " + quote(text));
  }
  if (ec == std::errc::result_out_of_range || !std::isfinite(value) || value < min || value > max) {
    char range[96];
    std::snprintf(range, sizeof(range), " is out of range [%g, %g]", min, max);
    return Status::error(quote(text) + range);
  }
  return value;
}

Result<bool> Settings::parse_bool(std::string_view text) {
  for (const char* yes : {"true", "yes", "on", "1"}) {
    if (iequals(text, yes)) return true;
  }
  for (const char* no : {"false", "no", "off", "0"}) {
    if (iequals(text, no)) return false;
  }
  return Status::error("expected true/false (or yes/no, on/off, 1/0), got " + quote(text));
}

}  // namespace spindle::core
