// --record FILE and --replay FILE for the samples a player drives: what each simulation step's
// input was is saved to a file, and played back instead of the player, to the same world hash in
// every mode and worker count (tests/samples/replay_agrees.cmake runs every sample that way).
//
//   samples::ReplayArgs replay_args;
//   argc = samples::take_replay_args(argc, argv, replay_args);  // before the sample's own flags
//   ...
//   samples::InputSession session;                               // outlives the run
//   if (!session.start(engine, pilot_or_devices, replay_args, "swarm")) return 2;
//   if (frames == 0) frames = session.replay_steps();            // a replay's own length
//   ... platform::run(...) ...
//   if (!session.finish("swarm")) return 1;                      // writes --record's file
//
// Only the engine's input actions are recorded (InputRecorder): analogue values a sample reads
// from the devices directly (the cursor, sticks) are not, so a sample turns them off when it
// records or replays. Without either flag the source is the engine's input as it is, with no
// recorder in between (a recording grows as the input changes). hello/hello.cpp keeps its own
// copy of this: the package test builds it outside the tree, where only the engine's headers are.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/input_record.h>

namespace samples {

struct ReplayArgs {
  std::string record;  // save the input here ("" none)
  std::string replay;  // play this file instead of the player ("" none)
};

// Takes --record FILE and --replay FILE out of argv (the rest stays, in order); returns the new
// argc.
inline int take_replay_args(int argc, char** argv, ReplayArgs& out) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--record") == 0 && i + 1 < argc) {
      out.record = argv[++i];
    } else if (std::strcmp(argv[i], "--replay") == 0 && i + 1 < argc) {
      out.replay = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  return kept;
}

class InputSession {
 public:
  // Makes `source` (a scripted pilot, the devices; may be null) the engine's input, through a
  // recorder with --record; with --replay the file plays instead. False after a message on
  // stderr when both are given or the file cannot be loaded (it names the file and line).
  bool start(spindle::core::Engine& engine, spindle::core::InputSource* source,
             const ReplayArgs& args, const char* who) {
    args_ = args;
    if (!args.record.empty() && !args.replay.empty()) {
      std::fprintf(stderr, "%s: --record and --replay exclude each other\n", who);
      return false;
    }
    if (!args.replay.empty()) {
      auto loaded = spindle::core::InputReplay::load(args.replay, engine);
      if (!loaded) {
        std::fprintf(stderr, "%s: --replay: %s\n", who, loaded.status().c_str());
        return false;
      }
      replay_.emplace(std::move(loaded).value());
      spindle::core::set_input_source(engine, &*replay_);
    } else if (!args.record.empty()) {
      recorder_.emplace(engine, source);
      spindle::core::set_input_source(engine, &*recorder_);
    } else {
      spindle::core::set_input_source(engine, source);
    }
    return true;
  }
  bool replaying() const { return replay_.has_value(); }
  bool recording() const { return recorder_.has_value(); }
  // The steps the replayed file holds (0 when not replaying).
  std::uint64_t replay_steps() const { return replay_ ? replay_->steps() : 0; }
  // Saves the recording with --record; false after a message on stderr naming the file.
  bool finish(const char* who) const {
    if (!recorder_) return true;
    if (spindle::core::Status s = recorder_->save(args_.record); !s) {
      std::fprintf(stderr, "%s: --record: %s\n", who, s.c_str());
      return false;
    }
    return true;
  }

 private:
  ReplayArgs args_;
  std::optional<spindle::core::InputRecorder> recorder_;
  std::optional<spindle::core::InputReplay> replay_;
};

}  // namespace samples
