// integer_in(min, max): a CLI11 validator for the comparison benchmarks' integer flags. It refuses
// "--voices --csv" (CLI11 2.1 would take the flag as the value), non-integers and values out of
// range, with a message saying what was expected. (The load test has its own, which also names
// the flag a value was mistaken for.)
#pragma once

#include <charconv>
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

}  // namespace spindle::bench
