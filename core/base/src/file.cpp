#include "spindle/base/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace spindle::core {

namespace {

// For "not a regular file (a directory)".
const char* file_kind(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::fifo:
      return "a FIFO";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "neither a file nor a directory";
  }
}

}  // namespace

Result<std::string> read_file_capped(const std::string& path, std::size_t max_bytes,
                                     std::string_view what) {
  namespace fs = std::filesystem;
  const std::string too_big =
      " over the limit of " + std::to_string(max_bytes) + " for " + std::string(what);
  // Looked at before opening: opening a FIFO waits for a writer, and a device never ends.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!ec && fs::exists(status)) {
    if (!fs::is_regular_file(status))
      return Status::error(path + ": not a regular file (" + file_kind(status.type()) + ")");
    if (const std::uintmax_t size = fs::file_size(path, ec); !ec && size > max_bytes)
      return Status::error(path + ": " + std::to_string(size) + " bytes," + too_big);
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return Status::error(path + ": cannot open: " + std::strerror(errno));
  // Never more than the limit, whatever the size said.
  std::string text;
  char chunk[4096];
  std::size_t n = 0;
  while (text.size() <= max_bytes && (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    text.append(chunk, n);
  const bool read_error = std::ferror(file) != 0;
  std::fclose(file);
  if (read_error) return Status::error(path + ": read error");
  if (text.size() > max_bytes) return Status::error(path + ": grew while read," + too_big);
  return text;
}

}  // namespace spindle::core
