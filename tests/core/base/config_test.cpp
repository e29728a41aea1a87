#include <spindle/base/config.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "special_files.h"
#include "test_support.h"

namespace spindle::core {
namespace {

const char* const kValid =
    "; engine settings\n"
    "[video]\n"
    "width = 1920\n"
    "height=1080\n"
    "vsync = off\n"
    "\n"
    "[audio]\n"
    "volume = 0.75 ; inline comment\n"
    "device = default output\n"
    "# another comment\n"
    "[game]\n"
    "start_scene = menu\n";

void define_all(Settings& s) {
  s.define_int("video.width", 1280, 320, 7680);
  s.define_int("video.height", 720, 240, 4320);
  s.define_bool("video.vsync", true);
  s.define_float("audio.volume", 1.0, 0.0, 1.0);
  s.define_string("game.start_scene", "intro");
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  auto path = test::temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Settings, LoadsTypedValues) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "settings.ini").ok());
  EXPECT_EQ(s.get_int("video.width"), 1920);
  EXPECT_EQ(s.get_int("video.height"), 1080);
  EXPECT_FALSE(s.get_bool("video.vsync"));
  EXPECT_DOUBLE_EQ(s.get_float("audio.volume"), 0.75);
  EXPECT_EQ(s.get_string("game.start_scene"), "menu");
  EXPECT_EQ(s.get_string("audio.device", "none"), "default output");  // undefined key
  EXPECT_EQ(s.origin("video.width"), "settings.ini:3");
  EXPECT_EQ(s.origin("audio.volume"), "settings.ini:8");
  EXPECT_TRUE(s.has("audio.device"));
  EXPECT_FALSE(s.has("audio.missing"));
  EXPECT_EQ(s.keys().size(), 6u);
}

TEST(Settings, DefaultsApplyWhenUnset) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string("[video]\nwidth=800\n", "a.ini").ok());
  EXPECT_EQ(s.get_int("video.width"), 800);
  EXPECT_EQ(s.get_int("video.height"), 720);
  EXPECT_TRUE(s.get_bool("video.vsync"));
  EXPECT_DOUBLE_EQ(s.get_float("audio.volume"), 1.0);
  EXPECT_EQ(s.get_string("game.start_scene"), "intro");
  EXPECT_EQ(s.origin("video.height"), "");
}

TEST(Settings, BadValueNamesFileLineKeyAndValue) {
  Settings s;
  define_all(s);
  Status st = s.load_string("[video]\nheight = 720\nwidth=abc\n", "settings.ini");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "settings.ini:3: video.width: expected an integer, got 'abc'");

  st = s.load_string("[video]\nwidth = 100\n", "settings.ini");
  EXPECT_EQ(st.message(), "settings.ini:2: video.width: '100' is out of range [320, 7680]");
  st = s.load_string("[audio]\nvolume = loud\n", "settings.ini");
  EXPECT_EQ(st.message(), "settings.ini:2: audio.volume: expected a number, got 'loud'");
  st = s.load_string("[video]\nvsync = maybe\n", "settings.ini");
  EXPECT_EQ(st.message(),
            "settings.ini:2: video.vsync: expected true/false (or yes/no, on/off, 1/0), got "
            "'maybe'");
}

TEST(Settings, SyntaxErrorsNameTheirLine) {
  Settings s;
  Status st = s.load_string("[video]\nwidth = 1\n[audio\nvolume = 1\n", "x.ini");
  EXPECT_EQ(st.message(), "x.ini:3: section header without closing ']': '[audio'");
  st = s.load_string("a = 1\njust some words\n", "x.ini");
  EXPECT_EQ(st.message(),
            "x.ini:2: expected 'key = value', '[section]' or a comment, got 'just some words'");
  st = s.load_string("[s]\n= value\n", "x.ini");
  EXPECT_EQ(st.message(), "x.ini:2: missing key name before '='");
  st = s.load_string("[s]\na = 1\nb = 2\na = 3\n", "x.ini");
  EXPECT_EQ(st.message(), "x.ini:4: s.a: set twice (first on line 2)");
  st = s.load_string("[s]\nlong = " + std::string(400, 'v') + "\n", "x.ini");
  EXPECT_TRUE(st.message().starts_with("x.ini:2: line is longer than ") &&
              st.message().ends_with(" characters"))
      << st.message();
  st = s.load_string(std::string("[s]\nk = a\0b\n", 11), "x.ini");
  EXPECT_EQ(st.message(), "x.ini:2: unexpected NUL byte (binary data in a text file?)");
}

TEST(Settings, FirstErrorWins) {
  Settings s;
  define_all(s);
  Status st = s.load_string("[video]\nwidth = x\n[broken\n", "x.ini");
  EXPECT_EQ(st.message(), "x.ini:2: video.width: expected an integer, got 'x'");
  st = s.load_string("[broken\n[video]\nwidth = x\n", "x.ini");
  EXPECT_EQ(st.message(), "x.ini:1: section header without closing ']': '[broken'");
}

TEST(Settings, MultiLineValuesContinueIndented) {
  Settings s;
  ASSERT_TRUE(s.load_string("[help]\ntext = first\n  second\n", "x.ini").ok());
  EXPECT_EQ(s.get_string("help.text", ""), "first\nsecond");
}

TEST(Settings, KeysBeforeAnySectionAndWindowsLineEnds) {
  Settings s;
  ASSERT_TRUE(s.load_string("name = spindle\r\n[a]\r\nb = 2\r\n", "x.ini").ok());
  EXPECT_EQ(s.get_string("name", ""), "spindle");
  EXPECT_EQ(s.get_int("a.b", 0), 2);
}

TEST(Settings, FailedLoadLeavesPreviousSettingsUntouched) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "good.ini").ok());
  std::vector<std::string> keys = s.keys();
  EXPECT_FALSE(s.load_string("[video]\nwidth = 2000\nheight = tall\n", "bad.ini").ok());
  EXPECT_EQ(s.keys(), keys);
  EXPECT_EQ(s.get_int("video.width"), 1920);  // not the 2000 parsed before the error
  EXPECT_EQ(s.origin("video.width"), "good.ini:3");
  EXPECT_FALSE(s.load_file("/nonexistent-dir/settings.ini").ok());
  EXPECT_EQ(s.get_int("video.width"), 1920);
}

TEST(Settings, SuccessfulLoadReplacesPreviousFile) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "a.ini").ok());
  ASSERT_TRUE(s.load_string("[video]\nheight = 600\n", "b.ini").ok());
  EXPECT_EQ(s.get_int("video.width"), 1280);  // back to the default
  EXPECT_EQ(s.get_int("video.height"), 600);
  EXPECT_FALSE(s.has("audio.device"));
}

TEST(Settings, LoadFileReportsPathAndLine) {
  Settings s;
  define_all(s);
  auto path = write_file("settings.ini", "[video]\nheight = 720\nwidth=abc\n");
  Status st = s.load_file(path.string());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), path.string() + ":3: video.width: expected an integer, got 'abc'");
  Status missing = s.load_file("/nonexistent-dir/settings.ini");
  EXPECT_TRUE(missing.message().starts_with("/nonexistent-dir/settings.ini: cannot open"))
      << missing.message();
  auto good = write_file("good.ini", kValid);
  ASSERT_TRUE(s.load_file(good.string()).ok());
  EXPECT_EQ(s.get_int("video.width"), 1920);
}

// Everything a Settings holds: key, value, origin.
using Snapshot = std::vector<std::tuple<std::string, std::string, std::string>>;
Snapshot snapshot(const Settings& s) {
  Snapshot out;
  for (const std::string& key : s.keys())
    out.emplace_back(key, s.get_string(key, ""), s.origin(key));
  return out;
}

constexpr std::size_t kFileLimit = Settings::kMaxFileBytes;
constexpr std::size_t kLineLimit = Settings::kMaxLineChars;
static_assert(kFileLimit == 1 << 20, "the limit documented in config.h");

// kValid, padded with comment lines to exactly `size` bytes.
std::string valid_file_of_size(std::size_t size) {
  std::string text = kValid;
  // append(n, c) rather than a temporary string + "\n": gcc 12 at -O2 (the tsan preset) warns
  // falsely about the temporary's bounds (-Warray-bounds), which -Werror turns into an error.
  while (size - text.size() > 100) text.append(99, ';').push_back('\n');
  if (size > text.size()) text.append(size - text.size() - 1, ';').push_back('\n');
  return text;
}

// What is not a settings file is refused by what it is, before a byte is read: /dev/zero and
// /dev/urandom used to be read until memory ran out, and a FIFO blocked the caller forever.
TEST(Settings, LoadFileRefusesWhatIsNotARegularFile) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "good.ini").ok());
  ASSERT_TRUE(s.apply_override("video.height=900").ok());
  const Snapshot before = snapshot(s);
  std::vector<spindle::test::SpecialFile> cases = spindle::test::special_files("settings");
  cases.push_back({"/dev/urandom", "a character device"});
  for (const spindle::test::SpecialFile& f : cases) {
    const Status st = spindle::test::returns_promptly(f, [&] { return s.load_file(f.path); });
    EXPECT_EQ(st.message(), f.path + ": not a regular file (" + f.kind + ")");
    EXPECT_EQ(snapshot(s), before) << f.path;
  }
  EXPECT_EQ(s.get_int("video.height"), 900);
  EXPECT_EQ(s.origin("video.width"), "good.ini:3");
}

// Settings files hold a few dozen keys; one over the limit is a wrong path, not settings.
TEST(Settings, LoadFileRefusesFilesOverTheSizeLimit) {
  Settings s;
  define_all(s);
  const auto at_limit = write_file("at_limit.ini", valid_file_of_size(kFileLimit));
  ASSERT_EQ(std::filesystem::file_size(at_limit), kFileLimit);
  ASSERT_TRUE(s.load_file(at_limit.string()).ok());
  EXPECT_EQ(s.get_int("video.width"), 1920);
  const Snapshot before = snapshot(s);

  const auto over = write_file("over.ini", valid_file_of_size(kFileLimit) + "\n");
  const Status st = s.load_file(over.string());
  EXPECT_EQ(st.message(), over.string() + ": " + std::to_string(kFileLimit + 1) +
                              " bytes, over the limit of " + std::to_string(kFileLimit) +
                              " for a settings file");
  EXPECT_EQ(snapshot(s), before);
}

// The line limit is in characters, not counting the line end, whichever line end it is.
TEST(Settings, LinesUpToTheLimitLoadWithEveryLineEnd) {
  const std::string longest = "k = " + std::string(kLineLimit - 4, 'v');
  for (const std::string end : {"\n", "\r\n", ""}) {
    Settings s;
    ASSERT_TRUE(s.load_string("[s]\n" + longest + end, "x.ini").ok()) << end.size();
    EXPECT_EQ(s.get_string("s.k", "").size(), kLineLimit - 4);
    const Status st = s.load_string("[s]\n" + longest + "v" + end + "n = 1\n", "x.ini");
    std::string expected = "x.ini:2: line is longer than ";
    expected.append(std::to_string(kLineLimit)).append(" characters");
    EXPECT_EQ(st.message(), expected) << end.size();
  }
}

TEST(Settings, CommandLineOverridesApplyAfterTheFileAndSurviveReloads) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "settings.ini").ok());
  const char* argv[] = {
      "game",  "--fullscreen",         "--set", "video.width=2560", "--set=audio.volume=0.5",
      "--set", "new.key = with spaces"};
  ASSERT_TRUE(s.apply_command_line(7, argv).ok());
  EXPECT_EQ(s.get_int("video.width"), 2560);
  EXPECT_DOUBLE_EQ(s.get_float("audio.volume"), 0.5);
  EXPECT_EQ(s.get_string("new.key", ""), " with spaces");
  EXPECT_EQ(s.origin("video.width"), "command line");

  ASSERT_TRUE(s.load_string("[video]\nwidth = 1024\nheight = 768\n", "other.ini").ok());
  EXPECT_EQ(s.get_int("video.width"), 2560);  // the override still wins
  EXPECT_EQ(s.get_int("video.height"), 768);

  s.clear_overrides();
  EXPECT_FALSE(s.has("new.key"));
  ASSERT_TRUE(s.load_string("[video]\nwidth = 1024\n", "other.ini").ok());
  EXPECT_EQ(s.get_int("video.width"), 1024);
}

TEST(Settings, ClearingOverridesBringsBackTheFileValuesTheyReplaced) {
  Settings s;
  ASSERT_TRUE(s.load_string("[a]\nkey = 1\n", "file.ini").ok());
  ASSERT_TRUE(s.apply_override("a.key=2").ok());
  ASSERT_TRUE(s.apply_override("a.extra=3").ok());
  EXPECT_EQ(s.get_int("a.key", 0), 2);

  s.clear_overrides();
  EXPECT_EQ(s.get_int("a.key", 0), 1);
  EXPECT_EQ(s.origin("a.key"), "file.ini:2");
  EXPECT_FALSE(s.has("a.extra"));  // only the override had it
}

TEST(Settings, BadOverridesAreAllOrNothing) {
  Settings s;
  define_all(s);
  const char* argv[] = {"game", "--set", "video.width=3000", "--set", "video.height=abc"};
  Status st = s.apply_command_line(5, argv);
  EXPECT_EQ(st.message(), "command line: video.height: expected an integer, got 'abc'");
  EXPECT_EQ(s.get_int("video.width"), 1280);  // the good first one was not applied either

  const char* dangling[] = {"game", "--set"};
  EXPECT_FALSE(s.apply_command_line(2, dangling).ok());
  EXPECT_EQ(s.apply_override("novalue").message(),
            "command line: expected section.key=value, got 'novalue'");
  EXPECT_FALSE(s.apply_override("=5").ok());
  EXPECT_TRUE(s.apply_override("video.width=4000").ok());
  EXPECT_EQ(s.get_int("video.width"), 4000);
}

TEST(Settings, AdHocGettersUseFallbackAndRange) {
  test::ScopedLogCapture capture;
  Settings s;
  ASSERT_TRUE(s.load_string("[x]\nn = 50\nbad = abc\nf = 2.5\nb = yes\n", "x.ini").ok());
  EXPECT_EQ(s.get_int("x.n", 7), 50);
  EXPECT_EQ(s.get_int("x.n", 7, 0, 10), 7);  // out of range
  EXPECT_EQ(s.get_int("x.bad", 7), 7);
  EXPECT_EQ(s.get_int("x.missing", 7), 7);
  EXPECT_DOUBLE_EQ(s.get_float("x.f", 1.0), 2.5);
  EXPECT_DOUBLE_EQ(s.get_float("x.f", 1.0, 0.0, 1.0), 1.0);
  EXPECT_TRUE(s.get_bool("x.b", false));
  EXPECT_FALSE(s.get_bool("x.bad", false));
  ASSERT_EQ(capture.count(LogLevel::Warning), 4u);  // unset keys are not warned about
  EXPECT_NE(capture.lines()[1].message.find("x.ini:3: x.bad: expected an integer, got 'abc'"),
            std::string::npos)
      << capture.lines()[1].message;
}

TEST(Settings, Parsers) {
  EXPECT_EQ(Settings::parse_int("+42", 0, 100).value(), 42);
  EXPECT_EQ(Settings::parse_int("-5", -10, 0).value(), -5);
  EXPECT_FALSE(Settings::parse_int("", 0, 1).ok());
  EXPECT_FALSE(Settings::parse_int("4 2", 0, 100).ok());
  EXPECT_FALSE(Settings::parse_int("0x10", 0, 100).ok());
  EXPECT_EQ(Settings::parse_int("99999999999999999999", 0, 1).message(),
            "'99999999999999999999' is out of range [0, 1]");
  EXPECT_DOUBLE_EQ(Settings::parse_float("1e-3", 0, 1).value(), 0.001);
  EXPECT_FALSE(Settings::parse_float("nan", -1, 1).ok());
  EXPECT_FALSE(Settings::parse_float("inf", -1e300, 1e300).ok());
  EXPECT_FALSE(Settings::parse_float("1.5x", 0, 2).ok());
  EXPECT_TRUE(Settings::parse_bool("ON").value());
  EXPECT_FALSE(Settings::parse_bool("0").value());
  EXPECT_EQ(Settings::parse_int(std::string("\x01\xff", 2), 0, 1).message(),
            "expected an integer, got '\\x01\\xff'");
}

TEST(SettingsDeathTest, ReadingAnUndefinedKeyWithoutDefaultAsserts) {
  SPINDLE_DEATH_TEST_STYLE();
  Settings s;
  s.define_int("a.b", 1);
  EXPECT_DEATH((void)s.get_int("a.c"), "defined first");
  EXPECT_DEATH((void)s.get_bool("a.b"), "type it was defined with");
}

// --- fuzzing ----------------------------------------------------------------------------------

// "origin:line: something", line >= 1.
bool located(const std::string& message, const std::string& origin) {
  if (!message.starts_with(origin + ":")) return false;
  std::size_t pos = origin.size() + 1;
  std::size_t digits = 0;
  while (pos + digits < message.size() &&
         std::isdigit(static_cast<unsigned char>(message[pos + digits])))
    ++digits;
  if (digits == 0 || message[pos] == '0') return false;
  return message.compare(pos + digits, 2, ": ") == 0 && message.size() > pos + digits + 2;
}

// Loads `text` into settings that hold kValid. Every failure must say where ("origin:line: ...")
// and change nothing; after a success the settings are put back to kValid. Returns success.
bool load_and_check(Settings& s, const std::string& text) {
  const std::vector<std::string> keys_before = s.keys();
  const std::int64_t width_before = s.get_int("video.width");
  Status st = s.load_string(text, "fuzz.ini");
  if (st.ok()) {
    EXPECT_TRUE(s.load_string(kValid, "base.ini").ok());
    return true;
  }
  EXPECT_TRUE(located(st.message(), "fuzz.ini")) << st.message();
  EXPECT_EQ(s.keys(), keys_before);
  EXPECT_EQ(s.get_int("video.width"), width_before);
  return false;
}

std::string mutate(std::string text, std::mt19937& rng) {
  static const char kSpecial[] = "[]=;#:\n\r\t \\\"\0\x7f\xff";
  std::uniform_int_distribution<int> op_dist(0, 5);
  int edits = std::uniform_int_distribution<int>(1, 8)(rng);
  for (int e = 0; e < edits; ++e) {
    std::size_t pos =
        text.empty() ? 0 : std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng);
    char special =
        kSpecial[std::uniform_int_distribution<std::size_t>(0, sizeof(kSpecial) - 2)(rng)];
    switch (op_dist(rng)) {
      case 0:  // flip a byte
        if (!text.empty()) text[pos] = static_cast<char>(rng());
        break;
      case 1:  // insert a byte that means something to INI
        text.insert(pos, 1, special);
        break;
      case 2:  // delete a run
        if (!text.empty()) text.erase(pos, std::uniform_int_distribution<std::size_t>(1, 6)(rng));
        break;
      case 3:  // duplicate a run
        if (!text.empty())
          text.insert(pos,
                      text.substr(pos, std::uniform_int_distribution<std::size_t>(1, 40)(rng)));
        break;
      case 4:  // a very long line
        text.insert(pos,
                    std::string(std::uniform_int_distribution<std::size_t>(100, 400)(rng), 'z'));
        break;
      case 5:  // replace a value's digits
        text.insert(pos, std::to_string(static_cast<std::int64_t>(rng()) * 1000003));
        break;
    }
  }
  return text;
}

TEST(SettingsFuzz, RandomAndMutatedInputNeverCrashAndAlwaysLocateErrors) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "base.ini").ok());

  std::mt19937 rng(20240611u);
  int failures = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string input;
    if (i % 4 == 0) {  // pure random bytes
      input.resize(std::uniform_int_distribution<std::size_t>(0, 600)(rng));
      for (char& c : input) c = static_cast<char>(rng());
    } else {
      input = mutate(kValid, rng);
    }
    if (!load_and_check(s, input)) ++failures;
    if (HasFailure()) {
      ADD_FAILURE() << "input #" << i << " (" << input.size() << " bytes)";
      return;
    }
  }
  EXPECT_GT(failures, 500);  // the fuzzer does reach the error paths
}

TEST(SettingsFuzz, EveryTruncationOfAValidFile) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "base.ini").ok());
  const std::string valid = kValid;
  int failures = 0;
  for (std::size_t n = 0; n <= valid.size(); ++n) {
    if (!load_and_check(s, valid.substr(0, n))) ++failures;
    if (HasFailure()) {
      ADD_FAILURE() << "truncated to " << n << " bytes";
      return;
    }
  }
  EXPECT_GT(failures, 0);  // e.g. cut inside "[video]" or inside "width"
}

// load_file on random and mutated files, files a byte either side of the size limit, lines
// either side of the line limit, and paths that are not files at all: every failure names the
// path first and leaves the settings exactly as they were.
TEST(SettingsFuzz, FilesOfEveryKindFailByNameAndChangeNothing) {
  Settings s;
  define_all(s);
  ASSERT_TRUE(s.load_string(kValid, "base.ini").ok());
  ASSERT_TRUE(s.apply_override("audio.volume=0.25").ok());
  const std::filesystem::path file = test::temp_path("fuzz.ini");
  const std::filesystem::path dir = test::temp_path("fuzz.d");
  std::filesystem::create_directories(dir);

  std::mt19937 rng(20240612u);
  std::vector<std::string> paths;
  std::vector<std::string> inputs;
  for (int i = 0; i < 300; ++i) {
    std::string input;
    switch (i % 6) {
      case 0:  // random bytes
        input.resize(std::uniform_int_distribution<std::size_t>(0, 4000)(rng));
        for (char& c : input) c = static_cast<char>(rng());
        break;
      case 1:
      case 2:
        input = mutate(kValid, rng);
        break;
      case 3:  // around the line limit
        input =
            "[s]\nk = " +
            std::string(std::uniform_int_distribution<std::size_t>(kLineLimit - 8, kLineLimit)(rng),
                        'v') +
            (i % 12 == 3 ? "\r\n" : "\n");
        break;
      case 4:  // around the size limit
        input = valid_file_of_size(kFileLimit - 2 + static_cast<std::size_t>(i / 6 % 4));
        break;
      case 5:  // a valid file with a mutated tail
        input = std::string(kValid) + mutate(kValid, rng);
        break;
    }
    inputs.push_back(std::move(input));
  }
  for (const char* special : {"/dev/zero", "/dev/urandom", "/dev/null", "/proc/self/status"})
    paths.emplace_back(special);
  paths.push_back(dir.string());

  int failures = 0, too_big = 0;
  const auto check = [&](const std::string& path, std::size_t index) {
    const Snapshot before = snapshot(s);
    const Status st = s.load_file(path);
    if (st.ok()) {
      EXPECT_TRUE(s.load_string(kValid, "base.ini").ok());
      EXPECT_DOUBLE_EQ(s.get_float("audio.volume"), 0.25) << "the override outlives loads";
      return;
    }
    ++failures;
    too_big += st.message().find("over the limit") != std::string::npos;
    EXPECT_TRUE(st.message().starts_with(path + ": ") || located(st.message(), path))
        << st.message();
    EXPECT_EQ(snapshot(s), before) << "input #" << index;
  };
  for (std::size_t i = 0; i < inputs.size() && !HasFailure(); ++i) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << inputs[i];
    check(file.string(), i);
  }
  for (std::size_t i = 0; i < paths.size() && !HasFailure(); ++i) check(paths[i], i);
  EXPECT_GT(failures, 100);
  EXPECT_EQ(too_big, 12) << "the files over the size limit, and only those";
}

}  // namespace
}  // namespace spindle::core
