// Reading a whole text or data file from outside, safely: what the config loader, input replays
// and other parsers of files a user hands the engine use before they parse.
//
// Usage:
//
//   spindle::core::Result<std::string> text =
//       spindle::core::read_file_capped("run.input", 1 << 20, "an input recording");
//   if (!text) return text.status();  // "run.input: cannot open: No such file or directory"
//
//   // A file read piece by piece (a music stream): the same checks, then the open stream.
//   spindle::core::Result<spindle::core::OpenedFile> music =
//       spindle::core::open_file_capped("music.ogg", 1ull << 31, "a sound stream");
//   std::FILE* f = music.value().file.get();  // closed with music's value
//
// Only regular files are read (a directory, FIFO or device is refused by name before it is
// opened: opening a FIFO would wait for a writer, a device may never end), and never more than
// `max_bytes`, whatever the file's size said (it may grow while read; /proc files say 0). The
// check is made again on the opened file, so a path swapped for a FIFO in between is refused too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "spindle/base/result.h"

namespace spindle::core {

// The whole file, or an error starting with the path: it cannot be opened or read, it is not a
// regular file, or it holds more than `max_bytes` ("N bytes, over the limit of M for <what>").
Result<std::string> read_file_capped(const std::string& path, std::size_t max_bytes,
                                     std::string_view what);

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// A regular file open for reading (binary, blocking reads) and its size when it was opened.
struct OpenedFile {
  FilePtr file;
  std::uint64_t size = 0;
};

// Opens `path` for reading after the same checks as read_file_capped(), with the same messages.
// For files read piece by piece rather than whole.
Result<OpenedFile> open_file_capped(const std::string& path, std::uint64_t max_bytes,
                                    std::string_view what);

}  // namespace spindle::core
