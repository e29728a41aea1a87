// integer_in(min, max): a CLI11 validator for the comparison benchmarks' integer flags. It refuses
// "--voices --csv" (CLI11 2.1 would take the flag as the value), non-integers and values out of
// range, with a message saying what was expected. (The load test has its own, which also names
// the flag a value was mistaken for.) parse_or_exit_code(): the comparison benchmarks' shared
// way to parse, print --help, and turn a bad command line into a message and exit code 2.
#pragma once

#include <charconv>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace spindle::bench {

inline CLI::Validator integer_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        long long v = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || stop != end || v < min || v > max)
          return "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                 ", got '" + text + "'";
        return std::string();
      },
      "");
}

// Parses argv into `app`: nothing on success, else the code main() returns (0 after --help, 2
// after a message naming the program and the bad flag).
inline std::optional<int> parse_or_exit_code(CLI::App& app, int argc, char** argv,
                                             const char* program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << program << ": " << e.what() << "\n(run with --help for the flags)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace spindle::bench
