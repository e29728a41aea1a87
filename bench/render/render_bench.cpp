// spindle_bench_render: the anchor's `cubes` scene (cubes_scene.h) drawn by OpenGL 3.3 on Mesa
// llvmpipe and by Spindle's software renderer in one run, frames interleaved (frame f is drawn by
// both, in alternating order), so that the noise of a shared machine hits both alike. Prints
// median and p99 frame times side by side with their ratio (or CSV), and writes both images and
// their difference. See README.md for the flags.
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "../cli_integer.h"

#include "cubes_scene.h"
#include "gl_cubes.h"
#include "spindle/jobs/job_system.h"

#include <cstring>

#include "spindle/render/image.h"
#include "spindle_cubes.h"

namespace {

using namespace spindle;

struct Options {
  std::uint32_t cubes = 10000;
  int width = 640;
  int height = 360;
  std::uint32_t frames = 200;
  std::uint32_t warmup = 20;
  std::uint32_t workers = 0;  // 0: one per hardware thread
  std::string mode = "dynamic";
  std::string out;
  bool csv = false;
  std::string only;
};

// CPUs this process may run on (the affinity mask), else the hardware threads.
unsigned cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

struct Series {
  std::string name;  // "spindle", "llvmpipe"
  std::function<double(std::uint32_t)> draw;
  std::vector<double> ms;
  double median = 0, p99 = 0;
  double coverage = -1;  // of the image frame, pixels not the clear colour
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Nearest rank: the ceil(p/100 * n)-th smallest.
double percentile_nearest_rank(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// Fraction of pixels (RGBA8 rows, `stride` bytes apart) further than 1 from the clear colour.
double coverage_of(const std::uint8_t* rgba, int width, int height, std::size_t stride) {
  const int clear[3] = {static_cast<int>(std::lround(cubes::kClearColor.r * 255.0f)),
                        static_cast<int>(std::lround(cubes::kClearColor.g * 255.0f)),
                        static_cast<int>(std::lround(cubes::kClearColor.b * 255.0f))};
  std::size_t covered = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const std::uint8_t* p = rgba + static_cast<std::size_t>(y) * stride + x * 4;
      for (int c = 0; c < 3; ++c)
        if (std::abs(p[c] - clear[c]) > 1) {
          ++covered;
          break;
        }
    }
  return static_cast<double>(covered) / (static_cast<double>(width) * height);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "spindle_bench_render: the `cubes` scene through OpenGL 3.3 on Mesa llvmpipe (SDL "
      "offscreen/EGL) and through Spindle's software renderer, frames interleaved in one run"};
  app.add_option("--cubes", o.cubes, "cubes N (12 triangles each)")
      ->check(spindle::bench::integer_in(1, 1000000));
  app.add_option("--width", o.width, "image width")->check(spindle::bench::integer_in(1, 16384));
  app.add_option("--height", o.height, "image height")->check(spindle::bench::integer_in(1, 16384));
  app.add_option("--frames", o.frames, "timed frames per renderer")
      ->check(spindle::bench::integer_in(1, 1000000));
  app.add_option("--warmup", o.warmup, "untimed frames first")
      ->check(spindle::bench::integer_in(0, 1000000));
  app.add_option("--workers", o.workers, "Spindle's job participants (0: one per CPU)")
      ->check(spindle::bench::integer_in(0, 256));
  app.add_option("--mode", o.mode, "Spindle's job mode: single, static, dynamic, tbb");
  app.add_option("--out", o.out,
                 "folder for llvmpipe.png, spindle.png and diff.png (default: no images)");
  app.add_flag("--csv", o.csv, "CSV: renderer,cubes,width,height,frames,median_ms,p99_ms");
  app.add_option("--only", o.only, "run one renderer")
      ->check(CLI::IsMember({"spindle", "llvmpipe"}));
  if (const auto code = spindle::bench::parse_or_exit_code(app, argc, argv, "spindle_bench_render"))
    return *code;

  jobs::Mode mode{};
  if (!jobs::parse_mode(o.mode, mode) || !jobs::mode_available(mode)) {
    std::cerr << "spindle_bench_render: --mode " << o.mode
              << ": not a job mode this build has (single, static, dynamic, tbb)\n";
    return 2;
  }
  // Readable notes go to stderr with --csv, so stdout is the CSV alone.
  std::ostream& info = o.csv ? std::cerr : std::cout;
  const bool want_gl = o.only.empty() || o.only == "llvmpipe";
  const bool want_spindle = o.only.empty() || o.only == "spindle";
  const unsigned cpus = cpu_count();
  const cubes::Scene scene = cubes::make_scene(o.cubes, o.width, o.height);
  const std::uint32_t image_frame = o.warmup + o.frames;  // drawn once more, after the timing

  info << "cubes: N=" << scene.count << " (" << scene.gx << "x" << scene.gy << "x" << scene.gz
       << "), " << scene.width << "x" << scene.height << ", " << o.frames << " frames after "
       << o.warmup << " warm-up, renderers alternating frame by frame\n";

  std::vector<Series> series;
  // GL first: llvmpipe's raster threads start with the context and inherit this thread's CPU
  // mask, which the job system below narrows (it pins the constructing thread).
  std::unique_ptr<cubes::GlCubes> gl;
  if (want_gl) {
    std::string error;
    gl = cubes::GlCubes::create(scene, cpus, error);
    if (!gl) {
      std::cerr << "spindle_bench_render: no OpenGL 3.3 context (" << error
                << "); needs SDL2's offscreen driver with EGL and Mesa (libegl-mesa0, "
                   "libgl1-mesa-dri). "
                << (want_spindle ? "Running the Spindle side only.\n" : "Nothing to run.\n");
      if (!want_spindle) return 1;
    } else {
      info << "llvmpipe: GL_RENDERER " << gl->renderer() << ", GL_VERSION " << gl->version()
           << ", LP_NUM_THREADS=" << gl->lp_num_threads() << "\n";
      if (gl->renderer().find("llvmpipe") == std::string::npos)
        std::cerr << "spindle_bench_render: warning: the GL renderer is not llvmpipe; the "
                     "'llvmpipe' rows measure "
                  << gl->renderer() << "\n";
      series.push_back({"llvmpipe", [&](std::uint32_t f) { return gl->draw_frame(f); }, {}});
    }
  }

  std::unique_ptr<jobs::JobSystem> job_system;
  std::unique_ptr<cubes::SpindleCubes> sp;
  if (want_spindle) {
    job_system =
        std::make_unique<jobs::JobSystem>(jobs::Config{.workers = o.workers, .mode = mode});
    std::string error;
    sp = cubes::SpindleCubes::create(scene, *job_system, error);
    if (!sp) {
      std::cerr << "spindle_bench_render: Spindle's renderer refused the scene: " << error << "\n";
      return 1;
    }
    info << "spindle: " << job_system->worker_count() << " workers, mode " << jobs::to_string(mode)
         << "\n";
    series.insert(series.begin(),
                  Series{"spindle", [&](std::uint32_t f) { return sp->draw_frame(f); }, {}});
  }
  if (series.empty()) return 1;

  // Frame f is drawn by every renderer; who goes first alternates, so neither always follows
  // the other's cache and scheduler footprint.
  for (std::uint32_t f = 0; f < image_frame; ++f)
    for (std::size_t k = 0; k < series.size(); ++k) {
      Series& s = series[f % 2 == 0 ? k : series.size() - 1 - k];
      const double ms = s.draw(f);
      if (f >= o.warmup) s.ms.push_back(ms);
    }
  for (Series& s : series) {
    s.median = median_of(s.ms);
    s.p99 = percentile_nearest_rank(s.ms, 99.0);
  }

  // The image frame: drawn once more by each, read back, written.
  std::error_code ec;
  if (!o.out.empty()) std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::cerr << "spindle_bench_render: cannot create " << o.out << ": " << ec.message() << "\n";
    return 1;
  }
  int status = 0;
  cubes::GlImage gl_image;
  if (gl) {
    std::string error;
    gl_image = gl->read_frame(image_frame, error);
    if (!error.empty()) {
      std::cerr << "spindle_bench_render: llvmpipe: " << error << "\n";
      status = 1;
    }
    for (Series& s : series)
      if (s.name == "llvmpipe")
        s.coverage = coverage_of(gl_image.rgba.data(), gl_image.width, gl_image.height,
                                 static_cast<std::size_t>(gl_image.width) * 4);
    info << "llvmpipe: GL_SAMPLES_PASSED per pixel "
         << fixed(static_cast<double>(gl_image.samples_passed) / (double(o.width) * o.height), 3)
         << "\n";
  }
  render::Image gl_picture;
  if (gl) {
    gl_picture = render::Image(gl_image.width, gl_image.height);
    for (int y = 0; y < gl_image.height; ++y)
      std::memcpy(gl_picture.row(y),
                  &gl_image.rgba[static_cast<std::size_t>(y) * gl_image.width * 4],
                  static_cast<std::size_t>(gl_image.width) * 4);
  }
  if (sp) {
    sp->draw_frame(image_frame);
    const render::Image& img = sp->image();
    const render::Renderer::Stats st = sp->stats();
    info << "spindle: " << st.triangles_in << " triangles submitted, " << st.triangles_binned
         << " set up after culling and clipping, " << st.bin_entries << " bin entries, "
         << st.pixels << " pixels written (" << st.batches << " batches, " << st.tiles
         << " tiles)\n";
    for (Series& s : series)
      if (s.name == "spindle")
        s.coverage = coverage_of(img.bytes(), img.width(), img.height(),
                                 static_cast<std::size_t>(img.stride_bytes()));
  }
  auto save = [&](const render::Image& img, const std::string& name) {
    const std::string path = (std::filesystem::path(o.out) / name).string();
    if (auto s = render::write_png(img, path); !s) {
      std::cerr << "spindle_bench_render: " << s.message() << "\n";
      status = 1;
    } else {
      info << "wrote " << path << "\n";
    }
  };
  if (!o.out.empty()) {
    if (gl) save(gl_picture, "llvmpipe.png");
    if (sp) save(sp->image(), "spindle.png");
    if (gl && sp) {
      auto diff = render::diff_images(sp->image(), gl_picture);
      if (!diff) {
        std::cerr << "spindle_bench_render: " << diff.message() << "\n";
        status = 1;
      } else {
        save(diff.value().difference, "diff.png");
        const double pixels = double(o.width) * o.height;
        info << "spindle vs llvmpipe: "
             << fixed(100.0 * double(diff.value().pixels_differing) / pixels, 2)
             << "% of pixels differ, max channel difference " << diff.value().max_channel_difference
             << ", mean " << fixed(diff.value().mean_channel_difference, 3) << "\n";
      }
    }
  }

  const double triangles = double(cubes::kTrianglesPerCube) * scene.count;
  if (o.csv) {
    std::cout << "renderer,cubes,width,height,frames,median_ms,p99_ms\n";
    for (const Series& s : series)
      std::cout << s.name << "," << scene.count << "," << o.width << "," << o.height << ","
                << o.frames << "," << fixed(s.median, 3) << "," << fixed(s.p99, 3) << "\n";
  } else {
    std::printf("\n%-10s %10s %10s %10s %9s\n", "renderer", "median ms", "p99 ms", "Mtri/s",
                "coverage");
    for (const Series& s : series)
      std::printf("%-10s %10.3f %10.3f %10.2f %8.1f%%\n", s.name.c_str(), s.median, s.p99,
                  triangles / (s.median * 1e3), 100.0 * s.coverage);
    if (series.size() == 2)
      std::printf("ratio llvmpipe / spindle: median %.2fx, p99 %.2fx\n",
                  series[1].median / series[0].median, series[1].p99 / series[0].p99);
  }
  return status;
}
