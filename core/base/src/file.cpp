#include "spindle/base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace spindle::core {

namespace {

// For "not a regular file (a directory)".
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "neither a file nor a directory";
}

std::string over_limit(const std::string& path, std::string_view size, std::uint64_t max_bytes,
                       std::string_view what) {
  return path + ": " + std::string(size) + " over the limit of " + std::to_string(max_bytes) +
         " for " + std::string(what);
}

}  // namespace

Result<OpenedFile> open_file_capped(const std::string& path, std::uint64_t max_bytes,
                                    std::string_view what) {
  // Looked at before opening, so that a device is not even opened.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status::error(path + ": not a regular file (" + file_kind(st.st_mode) + ")");
  // Opened without blocking (a FIFO put there meanwhile would wait for a writer), then looked at
  // again, on what was opened.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::error(path + ": cannot open: " + std::strerror(errno));
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::error(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file (" + file_kind(st.st_mode) + ")");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    return Status::error(over_limit(path, std::to_string(size) + " bytes,", max_bytes, what));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int err = errno;
    ::close(fd);
    return Status::error(path + ": cannot open: " + std::strerror(err));
  }
  return OpenedFile{FilePtr(file), size};
}

Result<std::string> read_file_capped(const std::string& path, std::size_t max_bytes,
                                     std::string_view what) {
  Result<OpenedFile> opened = open_file_capped(path, max_bytes, what);
  if (!opened) return opened.status();
  std::FILE* file = opened.value().file.get();
  // Never more than the limit, whatever the size said.
  std::string text;
  text.reserve(static_cast<std::size_t>(opened.value().size));
  char chunk[4096];
  std::size_t n = 0;
  while (text.size() <= max_bytes && (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    text.append(chunk, n);
  if (std::ferror(file) != 0) return Status::error(path + ": read error");
  if (text.size() > max_bytes)
    return Status::error(over_limit(path, "grew while read,", max_bytes, what));
  return text;
}

}  // namespace spindle::core
