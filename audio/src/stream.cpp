// StreamDecoder for WAV (our chunk walk, then pieces of 'data' read with pread and converted like
// decode_wav) and Ogg Vorbis (our page walk over the whole file, then stb_vorbis on the same
// FILE*, which it reads and seeks itself).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "ogg_format.h"
#include "spindle/audio/sound.h"
#include "spindle/base/file.h"
#include "wav_format.h"

namespace spindle::audio {
namespace {

using FilePtr = core::FilePtr;

// The file as a ByteSource for the chunk and page walks and the WAV reads; pread leaves the
// FILE*'s own position alone, so stb can take the same handle afterwards.
class FileSource final : public detail::ByteSource {
 public:
  FileSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  std::uint64_t size() const override { return size_; }
  std::size_t read(std::uint64_t offset, std::span<std::uint8_t> out) override {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n =
          ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

 private:
  int fd_;
  std::uint64_t size_;
};

class WavStream final : public StreamDecoder {
 public:
  WavStream(FilePtr file, std::uint64_t size, detail::WavLayout layout, std::string name)
      : file_(std::move(file)),
        source_(fileno(file_.get()), size),
        layout_(layout),
        name_(std::move(name)),
        buffer_(kChunkFrames * layout.block_align) {}

  std::uint32_t channels() const override { return layout_.channels; }
  std::uint32_t sample_rate() const override { return layout_.sample_rate; }
  std::uint64_t frames() const override { return layout_.frames; }
  const std::string& error() const override { return error_; }
  const std::string& name() const override { return name_; }

  std::uint32_t read(float* out, std::uint32_t frames) override {
    if (!error_.empty() || pos_ >= layout_.frames) return 0;
    const auto want =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(frames, layout_.frames - pos_));
    std::uint32_t done = 0;
    while (done < want) {
      const std::uint32_t n = std::min(kChunkFrames, want - done);
      const std::uint64_t at = layout_.data_offset + pos_ * layout_.block_align;
      const std::size_t bytes = std::size_t{n} * layout_.block_align;
      const std::size_t got = source_.read(at, std::span(buffer_.data(), bytes));
      const std::size_t whole = got / layout_.block_align;
      const std::size_t converted = detail::convert_wav_samples(
          buffer_.data(), whole, layout_, out + std::size_t{done} * layout_.channels);
      const auto good = static_cast<std::uint32_t>(converted / layout_.channels);
      done += good;
      pos_ += good;
      if (converted != whole * layout_.channels) {
        error_ = name_ + ": sample " + std::to_string(pos_ * layout_.channels) +
                 " is not finite (at byte " + std::to_string(at + converted * (layout_.bits / 8)) +
                 ")";
        break;
      }
      if (got < bytes) {
        // The header was checked against the size at open: the file has shrunk since.
        error_ = name_ + ": truncated 'data' chunk: the file ends at byte " +
                 std::to_string(at + got) + ", the chunk runs to byte " +
                 std::to_string(layout_.data_offset + layout_.frames * layout_.block_align);
        break;
      }
    }
    return done;
  }

  bool seek(std::uint64_t frame) override {
    if (!error_.empty()) return false;
    if (frame >= layout_.frames) {
      error_ = name_ + ": seek to frame " + std::to_string(frame) + " past the end (" +
               std::to_string(layout_.frames) + " frames)";
      return false;
    }
    pos_ = frame;
    return true;
  }

 private:
  // Frames converted per pread: 64 KiB at most (16-byte frames), allocated once at open so
  // read() itself never allocates.
  static constexpr std::uint32_t kChunkFrames = 4096;

  FilePtr file_;
  FileSource source_;
  detail::WavLayout layout_;
  std::string name_;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t pos_ = 0;
  std::string error_;
};

class OggStream final : public StreamDecoder {
 public:
  OggStream(FilePtr file, detail::Vorbis vorbis, std::uint64_t frames, std::string name)
      : file_(std::move(file)),
        owner_(std::move(vorbis)),
        vorbis_(owner_.get()),
        frames_(frames),
        name_(std::move(name)) {
    const stb_vorbis_info info = stb_vorbis_get_info(vorbis_);
    channels_ = static_cast<std::uint32_t>(info.channels);
    rate_ = info.sample_rate;
  }

  std::uint32_t channels() const override { return channels_; }
  std::uint32_t sample_rate() const override { return rate_; }
  std::uint64_t frames() const override { return frames_; }
  const std::string& error() const override { return error_; }
  const std::string& name() const override { return name_; }

  std::uint32_t read(float* out, std::uint32_t frames) override {
    if (!error_.empty() || pos_ >= frames_) return 0;
    const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>(frames, frames_ - pos_));
    std::uint32_t done = 0;
    while (done < want) {
      // stb counts in ints: at most 2^20 frames per call keeps frames * channels in range.
      const std::uint32_t n = std::min(want - done, std::uint32_t{1} << 20);
      const int got = stb_vorbis_get_samples_float_interleaved(vorbis_, static_cast<int>(channels_),
                                                               out + std::size_t{done} * channels_,
                                                               static_cast<int>(n * channels_));
      if (got <= 0) {
        error_ = name_ + ": the stream ends at frame " + std::to_string(pos_) + " of " +
                 std::to_string(frames_) + " (truncated or corrupt: " +
                 detail::vorbis_error_text(stb_vorbis_get_error(vorbis_)) + ")";
        break;
      }
      done += static_cast<std::uint32_t>(got);
      pos_ += static_cast<std::uint32_t>(got);
    }
    return done;
  }

  bool seek(std::uint64_t frame) override {
    if (!error_.empty()) return false;
    if (frame >= frames_) {
      error_ = name_ + ": seek to frame " + std::to_string(frame) + " past the end (" +
               std::to_string(frames_) + " frames)";
      return false;
    }
    if (!stb_vorbis_seek(vorbis_, static_cast<unsigned>(frame))) {
      error_ = name_ + ": cannot seek to frame " + std::to_string(frame) + " (" +
               detail::vorbis_error_text(stb_vorbis_get_error(vorbis_)) + ")";
      return false;
    }
    pos_ = frame;
    return true;
  }

 private:
  FilePtr file_;  // stb reads it; closed after owner_ (declared before it)
  detail::Vorbis owner_;
  stb_vorbis* vorbis_;
  std::uint64_t frames_;
  std::uint32_t channels_ = 0;
  std::uint32_t rate_ = 0;
  std::string name_;
  std::uint64_t pos_ = 0;
  std::string error_;
};

}  // namespace

core::Result<std::unique_ptr<StreamDecoder>> open_stream(const std::string& path) {
  using core::Status;
  // A regular file only (a FIFO would block this call forever, a device never end); no size
  // limit beyond each format's own.
  core::Result<core::OpenedFile> opened =
      core::open_file_capped(path, std::numeric_limits<std::uint64_t>::max(), "a sound stream");
  if (!opened) return opened.status();
  FilePtr file = std::move(opened.value().file);
  const std::uint64_t size = opened.value().size;
  FileSource source(fileno(file.get()), size);
  std::uint8_t magic[12] = {};
  const std::size_t got = source.read(0, magic);

  if (got >= 12 && std::memcmp(magic, "RIFF", 4) == 0 && std::memcmp(magic + 8, "WAVE", 4) == 0) {
    core::Result<detail::WavLayout> layout = detail::parse_wav(source, path);
    if (!layout) return layout.status();
    return std::unique_ptr<StreamDecoder>(
        std::make_unique<WavStream>(std::move(file), size, layout.value(), path));
  }
  if (got >= 4 && std::memcmp(magic, "OggS", 4) == 0) {
    // stb keeps file offsets in 32 bits.
    if (size > static_cast<std::uint64_t>(INT_MAX))
      return Status::error(path + ": " + std::to_string(size) +
                           " bytes is more than stb_vorbis streams (2 GiB)");
    core::Result<detail::OggPages> pages = detail::check_ogg_pages(source, path);
    if (!pages) return pages.status();
    std::FILE* f = file.get();
    core::Result<detail::Vorbis> opened = detail::Vorbis::open(
        [f](const stb_vorbis_alloc* alloc, int* error) {
          std::rewind(f);  // stb starts at the current position; each retry from the top
          return stb_vorbis_open_file(f, 0, error, alloc);
        },
        path);
    if (!opened) return opened.status();
    core::Result<std::uint64_t> length =
        detail::check_vorbis_stream(opened.value().get(), pages.value(), path);
    if (!length) return length.status();
    return std::unique_ptr<StreamDecoder>(std::make_unique<OggStream>(
        std::move(file), std::move(opened).value(), length.value(), path));
  }
  if (size == 0) return Status::error(path + ": empty file");
  return Status::error(path + ": neither a WAV (RIFF/WAVE) nor an Ogg (OggS) file");
}

}  // namespace spindle::audio
