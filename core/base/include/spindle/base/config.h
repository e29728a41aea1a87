// Settings: an INI file (parsed by inih), typed getters, and "--set section.key=value" overrides.
//
// Usage:
//
//   spindle::core::Settings settings;
//   settings.define_int("video.width", 1280, 320, 7680);   // checked when files load
//   settings.define_bool("video.vsync", true);
//   if (auto s = settings.load_file("settings.ini"); !s)
//     SPINDLE_LOG_ERROR(Config, "%s", s.c_str());  // "settings.ini:3: video.width: expected..."
//   if (auto s = settings.apply_command_line(argc, argv); !s) return usage(s.message());
//   int width = static_cast<int>(settings.get_int("video.width"));     // defined: never bad
//   double volume = settings.get_float("audio.volume", 0.8, 0.0, 1.0);  // ad hoc default + range
//
// Keys are "section.key" ("key" before the first [section]). A failed load or override leaves
// every setting as it was: files are parsed into a temporary that replaces the current values
// only on success. Overrides stay in force across later load_file() calls. Errors read
// "where: key: what is wrong", where is "path:line" or "command line". Not thread-safe.
//
// Limits: a line holds at most kMaxLineChars (198) characters, not counting its line end; a
// longer one is an error naming its line, never cut short.
// load_file() reads regular files of at most kMaxFileBytes (1 MiB) and refuses anything else (a
// directory, /dev/zero, a FIFO) by what it is, before reading a byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/result.h>

namespace spindle::core {

class Settings {
 public:
  enum class Type : std::uint8_t { String, Int, Float, Bool };

  // A settings file holds a few dozen keys (video, audio, input, the start scene), a few KB at
  // most: a file over 1 MiB is a wrong path, not settings, and is refused before it is read.
  static constexpr std::size_t kMaxFileBytes = std::size_t{1} << 20;
  // Per line, its line end not counted: inih's line buffer is 200 bytes, room for the line, a
  // '\n' and the NUL.
  static constexpr std::size_t kMaxLineChars = 198;

  // Declares a key's type, default and range; values for it are checked as they load.
  void define_string(std::string_view key, std::string_view fallback);
  void define_int(std::string_view key, std::int64_t fallback,
                  std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                  std::int64_t max = std::numeric_limits<std::int64_t>::max());
  void define_float(std::string_view key, double fallback,
                    double min = -std::numeric_limits<double>::max(),
                    double max = std::numeric_limits<double>::max());
  void define_bool(std::string_view key, bool fallback);

  // Replaces the values from the previous file (overrides are applied again on top). Refuses
  // what is not a regular file of at most kMaxFileBytes: "path: not a regular file (a
  // directory)", "path: 2000000 bytes, over the limit of 1048576 for a settings file".
  Status load_file(const std::string& path);
  // Same, from text; `origin` names it in messages.
  Status load_string(std::string_view text, std::string_view origin = "<string>");
  // "section.key=value".
  Status apply_override(std::string_view assignment);
  // Applies every "--set section.key=value" and "--set=section.key=value" in argv, all or none;
  // other arguments are ignored.
  Status apply_command_line(int argc, const char* const* argv);
  void clear_overrides();

  bool has(std::string_view key) const;
  // "path:line", "command line", or "" when the key is not set.
  std::string origin(std::string_view key) const;
  std::vector<std::string> keys() const;

  // Getters for defined keys: the value, or the defined default when unset.
  std::string get_string(std::string_view key) const;
  std::int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;

  // Getters for any key: `fallback` when unset, unparsable or out of range (the latter two are
  // logged as warnings with the value's origin).
  std::string get_string(std::string_view key, std::string_view fallback) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback,
                       std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  double get_float(std::string_view key, double fallback,
                   double min = -std::numeric_limits<double>::max(),
                   double max = std::numeric_limits<double>::max()) const;
  bool get_bool(std::string_view key, bool fallback) const;

  // Parsers behind the getters; the error text is "expected ..., got '...'" or "... out of range".
  static Result<std::int64_t> parse_int(std::string_view text, std::int64_t min, std::int64_t max);
  static Result<double> parse_float(std::string_view text, double min, double max);
  static Result<bool> parse_bool(std::string_view text);

 private:
  struct Entry {
    std::string value;
    std::string origin;  // "path:line" or "command line"
    int line = 0;        // in its file; 0 for overrides
  };
  struct Definition {
    Type type = Type::String;
    std::string fallback;  // text form, parsed like a loaded value
    std::int64_t int_min = 0, int_max = 0;
    double float_min = 0, float_max = 0;
  };
  using Map = std::map<std::string, Entry, std::less<>>;

  friend struct SettingsParser;
  // Empty when `value` suits the definition of `key` (or `key` has none); else "what is wrong".
  std::string check_value(std::string_view key, std::string_view value) const;
  const Definition& definition(std::string_view key, Type type) const;
  const Entry* find(std::string_view key) const;

  Map values_;       // what the getters read: the file's values with the overrides on top
  Map file_values_;  // the last loaded file alone, so clear_overrides() can bring back its values
  std::vector<std::pair<std::string, std::string>> overrides_;  // key, value; in order given
  std::map<std::string, Definition, std::less<>> definitions_;
};

}  // namespace spindle::core
