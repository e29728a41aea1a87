// Paths that are not regular files, for the hostile-input tests of every loader that takes a path:
// a character device, a directory and a FIFO, each with the words core::read_file_capped() uses
// for it ("a FIFO"). And a watchdog: opening a FIFO for reading blocks until a writer comes, so
// returns_promptly() plays that writer after a few seconds. A loader that hangs then fails its
// test instead of stalling the suite.
//
//   for (const test::SpecialFile& f : test::special_files("sound")) {
//     auto r = test::returns_promptly(f, [&] { return audio::load_sound(f.path); });
//     EXPECT_EQ(r.message(), f.path + ": not a regular file (" + f.kind + ")");
//   }
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

namespace spindle::test {

struct SpecialFile {
  std::string path;
  std::string kind;  // "a character device", "a directory", "a FIFO"
  bool fifo = false;
};

// A directory and a FIFO made fresh under the test temp folder (named after `stem` and the
// process), and /dev/zero.
inline std::vector<SpecialFile> special_files(const std::string& stem) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("spindle_special_" + stem + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "a_directory.png");
  const std::filesystem::path fifo = dir / "a_fifo.wav";
  std::filesystem::remove(fifo);
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << fifo;
  return {{"/dev/zero", "a character device"},
          {(dir / "a_directory.png").string(), "a directory"},
          {fifo.string(), "a FIFO", true}};
}

// Calls `load` on another thread and returns what it returns. When it has not returned after
// `seconds`, the test fails and, for a FIFO, a writer opens and closes it, so a reader blocked
// in open() or read() sees the end of the file and the call returns.
template <class F>
auto returns_promptly(const SpecialFile& file, F load, int seconds = 5) {
  auto result = std::async(std::launch::async, load);
  if (result.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    ADD_FAILURE() << file.path << ": the loader did not return within " << seconds << " s";
    if (file.fifo) {
      // Not O_NONBLOCK: that fails while no reader has the FIFO open yet; this open waits for the
      // reader the loader has (or is about to have) and releases it.
      const int fd = ::open(file.path.c_str(), O_WRONLY);
      if (fd >= 0) ::close(fd);
    }
  }
  return result.get();
}

}  // namespace spindle::test
