// A sample's last frame compared with a checked-in golden PNG: `--screenshot FILE` writes the
// renderer's image, `--golden FILE` compares it within a tolerance (and fails the run beyond it).
// SPINDLE_UPDATE_GOLDEN=1 in the environment rewrites the golden instead of comparing.
//
//   samples::GoldenArgs golden;                       // filled by take_golden_args() from argv
//   ...
//   if (!samples::check_golden(renderer.image(), golden, "swarm")) return 1;
//
// The tolerance: at most `max_share` of the pixels differ (by any amount). The renderer is
// bit-identical across modes and worker counts, so a golden made in one mode holds in all; the
// slack is for a compiler or CPU that rounds differently.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <spindle/render/image.h>

namespace samples {

struct GoldenArgs {
  std::string screenshot;  // write the last frame here ("" none)
  std::string golden;      // compare the last frame with this PNG ("" none)
  double max_share = 0.01;
};

// Takes --screenshot FILE and --golden FILE out of argv (the rest stays, in order); returns the
// new argc.
inline int take_golden_args(int argc, char** argv, GoldenArgs& out) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--screenshot") == 0 && i + 1 < argc) {
      out.screenshot = argv[++i];
    } else if (std::strcmp(argv[i], "--golden") == 0 && i + 1 < argc) {
      out.golden = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  return kept;
}

// False (after a message on stderr naming the file and what differs) when a comparison fails or
// a file cannot be written or read.
inline bool check_golden(const spindle::render::Image& image, const GoldenArgs& args,
                         const char* who) {
  namespace render = spindle::render;
  if (!args.screenshot.empty()) {
    if (const auto s = render::write_png(image, args.screenshot); !s) {
      std::fprintf(stderr, "%s: --screenshot: %s\n", who, s.c_str());
      return false;
    }
  }
  if (args.golden.empty()) return true;
  const char* update = std::getenv("SPINDLE_UPDATE_GOLDEN");
  if (update != nullptr && std::strcmp(update, "1") == 0) {
    if (const auto s = render::write_png(image, args.golden); !s) {
      std::fprintf(stderr, "%s: --golden: %s\n", who, s.c_str());
      return false;
    }
    std::printf("%s: golden image rewritten: %s\n", who, args.golden.c_str());
    return true;
  }
  const auto golden = render::load_png(args.golden);
  if (!golden) {
    std::fprintf(stderr, "%s: --golden: %s (SPINDLE_UPDATE_GOLDEN=1 writes it)\n", who,
                 golden.status().c_str());
    return false;
  }
  const auto diff = render::diff_images(golden.value(), image);
  if (!diff) {
    std::fprintf(stderr, "%s: --golden %s: %s\n", who, args.golden.c_str(), diff.status().c_str());
    return false;
  }
  const double pixels = static_cast<double>(image.width()) * image.height();
  const double share = static_cast<double>(diff.value().pixels_differing) / pixels;
  std::printf("%s: golden %s: %zu pixels differ (%.3f%%), largest channel difference %d\n", who,
              args.golden.c_str(), diff.value().pixels_differing, 100.0 * share,
              diff.value().max_channel_difference);
  if (share > args.max_share) {
    std::fprintf(stderr,
                 "%s: the last frame differs from %s beyond the tolerance (%.1f%% of pixels)\n",
                 who, args.golden.c_str(), 100.0 * args.max_share);
    return false;
  }
  return true;
}

}  // namespace samples
