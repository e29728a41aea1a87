// Fuzz target `png`: render::decode_png. A refusal names the file; an accepted image has a size
// within kMaxImageSide and pixels for all of it, and written back as a PNG it decodes to the same
// pixels.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <spindle/render/image.h>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  spindle::fuzz::quiet_logs();
  auto r = spindle::render::decode_png({data, size}, "fuzz.png");
  spindle::fuzz::outcome(r.ok(), r.ok() ? "" : r.message());
  if (!r) {
    SPINDLE_FUZZ_CHECK(starts_with(r.message(), "fuzz.png: "), r.message());
    return 0;
  }
  const spindle::render::Image& image = r.value();
  SPINDLE_FUZZ_CHECK(image.width() > 0 && image.height() > 0, "an empty image was accepted");
  SPINDLE_FUZZ_CHECK(image.width() <= spindle::render::kMaxImageSide &&
                         image.height() <= spindle::render::kMaxImageSide,
                     std::to_string(image.width()) + "x" + std::to_string(image.height()));
  std::uint64_t sum = 0;  // every pixel readable (ASan checks the reads)
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) sum += image.at(x, y);
  (void)sum;
  if (static_cast<std::int64_t>(image.width()) * image.height() > 256 * 256) return 0;
  const std::string path = "/tmp/spindle_fuzz_png_" + std::to_string(::getpid()) + ".png";
  const spindle::core::Status written = spindle::render::write_png(image, path);
  SPINDLE_FUZZ_CHECK(written, written.message());
  auto back = spindle::render::load_png(path);
  std::remove(path.c_str());
  SPINDLE_FUZZ_CHECK(back.ok(), back.status().message());
  SPINDLE_FUZZ_CHECK(back.value().same_pixels(image), "written and read back, the pixels differ");
  return 0;
}
