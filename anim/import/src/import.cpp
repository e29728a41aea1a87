// Entry points: size limits, format checks and running assimp without logging or exceptions.
#include <spindle/anim/import.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <system_error>
#include <thread>

#include <assimp/DefaultIOSystem.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/IOStream.hpp>
#include <assimp/Importer.hpp>

#include "fbx_preflight.h"
#include "gltf_preflight.h"
#include "scene_to_runtime.h"
#include "spindle/base/file.h"

namespace spindle::anim {
namespace {

// Post-processing, chosen so the file's own data reaches the checks unchanged:
// - ValidateDataStructure: assimp's own consistency checks (indices, bone vertex ids, ...).
// - Triangulate: polygons become triangles for the index buffer.
// Deliberately not: LimitBoneWeights (would hide weights that do not sum to one, and we pick the
// largest four ourselves), JoinIdenticalVertices / FindInvalidData / OptimizeGraph (they change
// vertex counts, drop keys or rewrite the hierarchy the skeleton comes from), GenNormals.
constexpr unsigned kPostProcess = aiProcess_ValidateDataStructure | aiProcess_Triangulate;

// Opens files through the default file system but refuses any over the size limit, and refuses
// disk access entirely for memory imports. No logger is ever created, so assimp stays silent.
class LimitedIOSystem final : public Assimp::DefaultIOSystem {
 public:
  LimitedIOSystem(std::uint64_t max_bytes, bool allow_disk)
      : max_bytes_(max_bytes), allow_disk_(allow_disk) {}

  bool Exists(const char* file) const override {
    return allow_disk_ && Assimp::DefaultIOSystem::Exists(file);
  }
  Assimp::IOStream* Open(const char* file, const char* mode) override {
    if (!allow_disk_) {
      refused_ = std::string("cannot open '") + file + "': a memory import reads no other file";
      return nullptr;
    }
    Assimp::IOStream* stream = Assimp::DefaultIOSystem::Open(file, mode);
    if (stream != nullptr && stream->FileSize() > max_bytes_) {
      refused_ = std::string("'") + file + "' is " + std::to_string(stream->FileSize()) +
                 " bytes, over the limit of " + std::to_string(max_bytes_);
      Close(stream);
      return nullptr;
    }
    return stream;
  }
  const std::string& refused() const { return refused_; }

 private:
  std::uint64_t max_bytes_;
  bool allow_disk_;
  std::string refused_;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

core::Status fail(const std::string& name, const std::string& what) {
  return core::Status::error(name + ": " + what);
}

// The formats Spindle imports: assimp reads many more, but these are the ones tested and fuzzed
// here. `head` is the start of the file (at least 16 bytes when there are that many).
core::Status check_format(const std::string& name, const std::string& extension,
                          std::span<const std::byte> head) {
  if (extension != "gltf" && extension != "glb" && extension != "fbx" && extension != "x")
    return fail(
        name, "unknown format '" + extension + "' (Spindle imports .gltf, .glb, .fbx and text .x)");
  if (extension == "x") {
    // "xof 0303txt 0032": bytes 8-11 name the encoding. assimp 5.2's binary and compressed .x
    // readers crash or hang on damaged files (found by fuzzing), so only text is accepted.
    const std::string_view text("txt ");
    const bool is_text =
        head.size() >= 12 &&
        std::string_view(reinterpret_cast<const char*>(head.data()) + 8, 4) == text;
    if (!is_text)
      return fail(name,
                  "only text .x files are supported (binary and compressed .x are refused: "
                  "assimp's reader for them is unsafe on damaged files); export text .x or glTF");
  }
  return {};
}

}  // namespace
}  // namespace spindle::anim

// Sanitizer builds: a sanitizer's report in the probe's child must not run the death callback a
// fuzzer installed (it would record the parent's input as a crash); weak, so absent elsewhere.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace spindle::anim {
namespace {

LimitedIOSystem* configure(Assimp::Importer& importer, const ImportOptions& options,
                           bool allow_disk) {
  auto* io = new LimitedIOSystem(options.max_file_bytes, allow_disk);
  importer.SetIOHandler(io);  // the importer owns it
  // Bake FBX pivots into node transforms instead of adding $AssimpFbx$ helper nodes, which
  // would become extra joints.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
  return io;
}

const char* signal_label(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV, an invalid memory access";
    case SIGABRT:
      return "SIGABRT, an abort (a double free, a failed check)";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE, an arithmetic fault";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    default:
      return "a fatal signal";
  }
}

// Held shared by every read of assimp in this process and exclusively around fork(): a child is
// never forked while another thread is inside assimp, so it cannot inherit a lock that thread
// holds (assimp's lazily built statics) and then wait on it forever.
std::shared_mutex& assimp_fork_lock() {
  static std::shared_mutex lock;
  return lock;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

// assimp 5.2's readers crash on some damaged files, more than preflight checks can list (found by
// fuzzing: a double free in the FBX reader, null dereferences in the text .x reader). So assimp
// reads each file first in a child process: if the child dies before it writes "read through" to
// a pipe, or has not written it after options.probe_seconds, the file is refused with what
// happened, and this process never runs that read. The pipe, not the child's exit status, is the
// verdict, so a game that ignores or reaps SIGCHLD itself gets the same answer. If the pipe or
// fork() fails, the read happens here unprobed, as before.
template <class Read>
core::Status probe_in_child(const std::string& name, const ImportOptions& options, bool allow_disk,
                            Read& read) {
  if (options.probe_seconds <= 0) return {};
  int verdict[2];
  if (::pipe2(verdict, O_CLOEXEC) != 0) return {};
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t child = -1;
  {
    std::unique_lock no_reads(assimp_fork_lock());
    child = ::fork();
  }
  if (child < 0) {
    ::close(verdict[0]);
    ::close(verdict[1]);
    return {};
  }
  if (child == 0) {
    // The child: read, report, then leave at once (no atexit handlers, no leak check, no flush).
    // Crashes end it by their own signal, not through the game's handlers: its crash report
    // (signals and std::terminate) would otherwise overwrite the game's with one of the child.
    // Only stdin, stdout, stderr and the verdict stay open: the game's files are not the child's to
    // touch, and another probe's pipe held open here would hide that probe's child dying.
    const unsigned keep = static_cast<unsigned>(verdict[1]);
    if (keep > 3) ::close_range(3, keep - 1, 0);
    ::close_range(keep + 1, ~0U, 0);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    std::set_terminate([] { std::abort(); });
    if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
    try {
      Assimp::Importer importer;
      configure(importer, options, allow_disk);
      (void)read(importer);
    } catch (...) {
    }  // the importer is destroyed here: assimp's FBX double free is in ~aiScene()
    const char done = 'k';
    (void)!::write(verdict[1], &done, 1);
    ::_exit(0);
  }
  ::close(verdict[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(options.probe_seconds);
  char got = 0;
  bool read_through = false, timed_out = false;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd wait_for{.fd = verdict[0], .events = POLLIN, .revents = 0};
    const int ready =
        ::poll(&wait_for, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;  // cannot tell: treated as a crash below
    if (ready <= 0) continue;
    const ssize_t n = ::read(verdict[0], &got, 1);
    if (n < 0 && errno == EINTR) continue;
    read_through = n == 1 && got == 'k';
    break;  // the verdict, or the end of the pipe: the child died first
  }
  ::close(verdict[0]);
  if (timed_out) ::kill(child, SIGKILL);
  // Reap it (it has ended or is ending). A game that set SIGCHLD to SIG_IGN has it reaped already
  // (ECHILD); its status is then unknown, and only the message loses the signal's name.
  int status = 0;
  bool have_status = false;
  for (int tries = 0; tries < 2000; ++tries) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      have_status = true;
      break;
    }
    if (done < 0 && errno != EINTR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (read_through) return {};
  if (timed_out)
    return fail(name, "assimp was still reading it after " + seconds_text(options.probe_seconds) +
                          " s (a hang on a damaged file?), so it is refused");
  if (have_status && WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return fail(name, "assimp failed reading it (exit status " +
                          std::to_string(WEXITSTATUS(status)) +
                          " of the child process that reads each file first; a sanitizer's "
                          "report above says why), so it is refused");
  const std::string how = have_status && WIFSIGNALED(status) ? signal_label(WTERMSIG(status))
                                                             : "the process ended early";
  return fail(name, "assimp crashed reading it (" + how +
                        ", in a child process that reads each file first): the file is "
                        "damaged or uses what assimp 5.2 cannot read, so it is refused");
}

// Runs one import; `read` calls ReadFile or ReadFileFromMemory on the configured importer.
template <class Read>
core::Result<ImportedAsset> run_import(const std::string& name, const ImportOptions& options,
                                       bool allow_disk, Read&& read) {
  if (core::Status probed = probe_in_child(name, options, allow_disk, read); !probed) return probed;
  try {
    std::shared_lock no_fork(assimp_fork_lock());
    Assimp::Importer importer;
    LimitedIOSystem* io = configure(importer, options, allow_disk);
    const aiScene* scene = read(importer);
    if (scene == nullptr) {
      std::string why = importer.GetErrorString();
      if (!io->refused().empty()) why = io->refused() + " (" + why + ")";
      return fail(name,
                  "assimp could not read it (damaged, truncated or missing a buffer?): " + why);
    }
    if ((scene->mFlags & AI_SCENE_FLAGS_INCOMPLETE) != 0)
      return fail(name, "assimp marked the scene incomplete");
    return detail::scene_to_runtime(*scene, name, options);
  } catch (const std::exception& e) {
    return fail(name, std::string("import failed: ") + e.what());
  } catch (...) {
    return fail(name, "import failed with an unknown exception");
  }
}

}  // namespace

core::Result<ImportedAsset> import_asset(const std::filesystem::path& file,
                                         const ImportOptions& options) {
  const std::string name = file.string();
  // Looked at (and opened) the way every loader of outside files is, before assimp opens the path
  // itself: a FIFO would block it, a device never end. The checks read through this handle.
  core::Result<core::OpenedFile> opened =
      core::open_file_capped(name, options.max_file_bytes, "a model file");
  if (!opened) return opened.status();
  std::FILE* in = opened.value().file.get();
  const std::uint64_t size = opened.value().size;
  if (size == 0) return fail(name, "empty file");
  std::string extension = lower(file.extension().string());
  if (!extension.empty()) extension.erase(0, 1);
  std::array<std::byte, 16> head{};
  const std::size_t got = std::fread(head.data(), 1, head.size(), in);
  if (core::Status s = check_format(name, extension, std::span(head).first(got)); !s) return s;
  if (extension == "gltf" || extension == "glb") {
    std::string bytes(static_cast<std::size_t>(size), '\0');
    std::rewind(in);
    if (std::fread(bytes.data(), 1, bytes.size(), in) != bytes.size())
      return fail(name, "cannot read the file");
    const std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()),
                                          bytes.size());
    if (std::string problem = detail::gltf_preflight(view, extension == "glb"); !problem.empty())
      return fail(name, problem);
  }
  if (extension == "fbx") {
    std::string bytes(static_cast<std::size_t>(size), '\0');
    std::rewind(in);
    if (std::fread(bytes.data(), 1, bytes.size(), in) != bytes.size())
      return fail(name, "cannot read the file");
    if (std::string problem =
            detail::fbx_preflight({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
        !problem.empty())
      return fail(name, problem);
  }
  return run_import(name, options, true, [&](Assimp::Importer& importer) {
    return importer.ReadFile(name, kPostProcess);
  });
}

core::Result<ImportedAsset> import_asset_from_memory(std::span<const std::byte> bytes,
                                                     std::string_view name,
                                                     std::string_view format_hint,
                                                     const ImportOptions& options) {
  const std::string label(name);
  if (bytes.empty()) return fail(label, "empty file");
  if (bytes.size() > options.max_file_bytes)
    return fail(label, "file is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
                           std::to_string(options.max_file_bytes));
  const std::string extension = lower(format_hint);
  if (core::Status s =
          check_format(label, extension, bytes.first(std::min<std::size_t>(16, bytes.size())));
      !s)
    return s;
  if (extension == "gltf" || extension == "glb")
    if (std::string problem = detail::gltf_preflight(bytes, extension == "glb"); !problem.empty())
      return fail(label, problem);
  if (extension == "fbx")
    if (std::string problem = detail::fbx_preflight(bytes); !problem.empty())
      return fail(label, problem);
  return run_import(label, options, false, [&](Assimp::Importer& importer) {
    return importer.ReadFileFromMemory(bytes.data(), bytes.size(), kPostProcess, extension.c_str());
  });
}

}  // namespace spindle::anim
