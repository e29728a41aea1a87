// The corpus replay: in builds without libFuzzer (gcc, every preset but `fuzz`), a fuzz target
// links this main instead, and CTest runs it over the target's corpus folder, so every seed and
// every input a fuzzer once found runs through the target's checks in every build.
//
//   spindle_fuzz_png tests/fuzz/corpus/png [more files or folders]
//
// Exits 0 when every input passed (a failed check aborts), 1 when no input was found or one could
// not be read (CMake listed only seeds that existed, so a missing one is lost coverage).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool unreadable = false;

int run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", path.c_str());
    unreadable = true;
    return 0;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, as libFuzzer passes it: ASan sees a read past its end.
  std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
  std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(), exact.size());
  LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) inputs += run_file(f);
    } else {
      inputs += run_file(arg);
    }
  }
  if (inputs == 0) {
    std::fprintf(stderr, "no inputs found in the arguments\n");
    return 1;
  }
  if (unreadable) {
    std::fprintf(stderr, "some inputs could not be read (above)\n");
    return 1;
  }
  std::printf("%d inputs passed\n", inputs);
  return 0;
}
