// open_sdl_device() in the handheld profile, which has no SDL: an error that says so. The plugin
// logs it and plays to the null device; a tiny target's own sound chip would be another
// OutputDevice reading the ring.
#include <spindle/audio/device.h>

namespace spindle::audio {

core::Result<std::unique_ptr<OutputDevice>> open_sdl_device(AudioRing&, const DeviceConfig&) {
  return core::Status::error(
      "audio: the handheld profile has no SDL output (use Output::WavFile, Output::Null or a "
      "device of the target's own)");
}

}  // namespace spindle::audio
