// spindle_bench_audio: the audio anchor's workload (workload.h) mixed by Spindle's Mixer,
// SDL2_mixer and OpenAL Soft in one run, one mixing thread each, rounds interleaved (spindle,
// sdl_mixer, openal_soft, spindle, ...) so the noise of a shared machine hits all alike. Reports
// the median over rounds of CPU ns per voice per output frame and voices per core in real time;
// refuses to report a library that mixed silence or fewer voices than asked. See README.md for the
// flags.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../cli_integer.h"

#include "workload.h"

namespace {

using namespace audio_bench;

// Below this the output counts as silence (the quietest case, 3D with 64 voices, is far above).
constexpr double kSilenceRms = 1e-3;

struct Options {
  std::uint32_t voices = 1000;
  std::string which = "pan";
  double seconds = 2.0;
  std::uint32_t rounds = 5;
  std::string only;
  std::string resampler = "linear";
  bool csv = false;
  double realtime = 0;  // seconds of the real-time run (0: the comparison)
  std::string driver = "disk";
};

struct Series {
  std::unique_ptr<Contender> contender;
  std::vector<double> ns;  // per voice per frame, one per round
  double median = 0;
  double rms = 0;  // of the last round's last block
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double voices_per_core(double ns_per_voice_frame) {
  return 1e9 / (ns_per_voice_frame * kOutputRate);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "spindle_bench_audio: the audio anchor's voices mixed by Spindle, SDL2_mixer and OpenAL "
      "Soft, one thread each, rounds interleaved; CPU ns per voice per 48 kHz stereo frame"};
  app.add_option("--voices", o.voices, "voices N, all playing and mixed")
      ->check(spindle::bench::integer_in(1, 65536));
  app.add_option("--case", o.which, "volume | pan | 3d (distance, pitch, doppler)")
      ->check(CLI::IsMember({"volume", "pan", "3d"}));
  app.add_option("--seconds", o.seconds, "audio seconds per library per round")
      ->check(CLI::Range(0.01, 600.0));
  app.add_option("--rounds", o.rounds, "rounds (the median is reported)")
      ->check(spindle::bench::integer_in(1, 1000));
  app.add_option("--only", o.only, "run one library")
      ->check(CLI::IsMember({"spindle", "sdl_mixer", "openal_soft"}));
  app.add_option("--resampler", o.resampler, "Spindle's resampler (and OpenAL Soft's)")
      ->check(CLI::IsMember({"linear", "cubic"}));
  app.add_flag("--csv", o.csv, "CSV: library,case,voices,ns_per_voice_frame,voices_per_core");
  app.add_option("--realtime", o.realtime,
                 "instead: play the 3d case's voices for this many wall-clock seconds through the "
                 "engine and a real-time SDL device, and count underruns (exit 3 if any)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--driver", o.driver, "SDL audio driver for --realtime (default: disk)");
  if (const auto code = spindle::bench::parse_or_exit_code(app, argc, argv, "spindle_bench_audio"))
    return *code;
  Case which{};
  parse_case(o.which, which);
  const bool cubic = o.resampler == "cubic";
  // Readable notes go to stderr with --csv, so stdout is the CSV alone.
  std::ostream& info = o.csv ? std::cerr : std::cout;
  const Workload w = make_workload(which, o.voices);
  if (o.realtime > 0)
    return run_realtime(make_workload(Case::Spatial, o.voices), o.realtime, o.driver);

  std::vector<Series> series;
  auto add = [&](const char* name, auto make) {
    if (!o.only.empty() && o.only != name) return true;
    std::string error;
    std::unique_ptr<Contender> c = make(error);
    if (!c) {
      std::cerr << "spindle_bench_audio: " << error << "\n";
      return false;
    }
    series.push_back({std::move(c), {}, 0, 0});
    return true;
  };
  if (!add("spindle", [&](std::string& e) { return make_spindle(w, cubic, e); }) ||
      !add("sdl_mixer", [&](std::string& e) { return make_sdl_mixer(w, e); }) ||
      !add("openal_soft", [&](std::string& e) { return make_openal_soft(w, cubic, e); }))
    return 1;

  const auto frames = static_cast<std::uint64_t>(o.seconds * kOutputRate + 0.5);
  info << "audio: " << o.voices << " voices, case " << o.which << ", " << o.seconds
       << " s of 48 kHz stereo float per library per round, " << o.rounds
       << " rounds interleaved, one mixing thread each, resampler " << o.resampler << "\n";
  for (const Series& s : series)
    if (const std::string note = s.contender->note(); !note.empty()) info << note << "\n";

  // One untimed warm-up round (caches, first allocations), then the timed rounds.
  for (std::uint32_t round = 0; round <= o.rounds; ++round)
    for (Series& s : series) {
      const RoundResult r =
          s.contender->run(round == 0 ? std::min<std::uint64_t>(frames, 12000) : frames);
      std::string error = r.error;
      if (error.empty() && (r.frames == 0 || !(r.rms > kSilenceRms)))
        error = std::string(s.contender->name()) + ": silent output (RMS " + std::to_string(r.rms) +
                "): nothing to measure";
      if (!error.empty()) {
        std::cerr << "spindle_bench_audio: " << error << "\n";
        return 1;
      }
      s.rms = r.rms;
      if (round > 0)
        s.ns.push_back(static_cast<double>(r.cpu_ns) /
                       (static_cast<double>(o.voices) * static_cast<double>(r.frames)));
    }
  for (Series& s : series) s.median = median_of(s.ns);

  if (o.csv) {
    std::cout << "library,case,voices,ns_per_voice_frame,voices_per_core\n";
    for (const Series& s : series)
      std::printf("%s,%s,%u,%.4f,%.0f\n", s.contender->name(), o.which.c_str(), o.voices, s.median,
                  voices_per_core(s.median));
    return 0;
  }
  std::printf("\n%-12s %15s %12s %16s %20s %8s\n", "library", "ns/voice/frame", "voices/core",
              "CPU s / audio s", "rounds min..max ns", "out RMS");
  for (const Series& s : series) {
    const auto [lo, hi] = std::minmax_element(s.ns.begin(), s.ns.end());
    std::printf("%-12s %15.3f %12.0f %16.4f %9.3f..%-9.3f %8.3f\n", s.contender->name(), s.median,
                voices_per_core(s.median), s.median * o.voices * kOutputRate * 1e-9, *lo, *hi,
                s.rms);
  }
  if (series.size() > 1 && o.only.empty()) {
    const Series* best = nullptr;
    for (std::size_t k = 1; k < series.size(); ++k)
      if (!best || series[k].median < best->median) best = &series[k];
    for (std::size_t k = 1; k < series.size(); ++k)
      std::printf("%s / spindle: %.2fx the CPU per voice\n", series[k].contender->name(),
                  series[k].median / series[0].median);
    std::printf("spindle vs best of the others (%s): %.2fx the voices per core\n",
                best->contender->name(), best->median / series[0].median);
  }
  return 0;
}
