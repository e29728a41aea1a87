// window: the platform layer. A window shows the renderer's image every frame, the arrow keys
// (or a controller's left stick) move a cube, Escape or closing the window quits, and run() is
// the game loop. With --frames N a scripted player presses Right for half a second through
// SDL's own event queue (the same path a real key takes), and the sample checks that the cube
// moved; with --headless it runs on SDL's dummy driver whatever the machine has. --record FILE
// saves the actions every step saw (what the keys and controller did); --replay FILE plays them
// back instead of the devices, to the same world hash in every mode and worker count.
//
//   spindle_sample_window [--frames N] [--headless] [--mode single|static|dynamic|tbb]
//                         [--workers N] [--record FILE | --replay FILE]
//
// Last line: frames=N median_ms=X p99_ms=Y hash=H (the world hash, the same in every mode).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include <SDL.h>  // only for the scripted key presses: a game never needs it

#include <spindle/spindle.h>

#include "sample_args.h"
#include "sample_replay.h"

using namespace spindle;

namespace {

struct Hero {
  float speed = 4.0f;  // units per second
};

void push_key(SDL_Scancode key, bool down) {
  SDL_Event e{};
  e.type = down ? SDL_KEYDOWN : SDL_KEYUP;
  e.key.state = down ? SDL_PRESSED : SDL_RELEASED;
  e.key.keysym.scancode = key;
  SDL_PushEvent(&e);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t frames = 0;  // 0: until quit
  bool headless = false;
  samples::ReplayArgs replay_args;
  argc = samples::take_replay_args(argc, argv, replay_args);
  // --frames, --headless, --record and --replay are this sample's own flags; the rest are every
  // sample's.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
      frames = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--headless") == 0) {
      headless = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  samples::SampleArgs args;
  if (!samples::parse_sample_args(kept, argv, args)) return 2;

  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  auto opened = platform::Window::open({.title = "Spindle window sample",
                                        .width = 960,
                                        .height = 540,
                                        .vsync = frames == 0,
                                        .driver = headless ? "dummy" : ""});
  if (!opened) {
    std::fprintf(stderr, "window: %s\n", opened.status().c_str());
    return 1;
  }
  std::unique_ptr<platform::Window> window = std::move(opened).value();

  // Actions, bound to keys and a controller, in text as a config file would hold them.
  core::Input& input = core::use_input(engine);
  const core::ActionId left = input.add_action("left").value();
  const core::ActionId right = input.add_action("right").value();
  const core::ActionId quit = input.add_action("quit").value();
  auto devices = platform::Devices::open().value();
  for (const auto& [action, control] :
       {std::pair{left, "key:Left"}, std::pair{left, "axis:leftx-"}, std::pair{right, "key:Right"},
        std::pair{right, "axis:leftx+"}, std::pair{quit, "key:Escape"}}) {
    if (core::Status s = devices->bind(action, control); !s) {
      std::fprintf(stderr, "window: %s\n", s.c_str());
      return 1;
    }
  }
  // The scripted player: its key events go through SDL's queue before the Devices pump them.
  if (frames > 0 && replay_args.replay.empty()) {
    engine.add_frame_hook([](core::Engine& e) {
      if (e.frame_number() == 10) push_key(SDL_SCANCODE_RIGHT, true);
      if (e.frame_number() == 40) push_key(SDL_SCANCODE_RIGHT, false);
    });
  }
  devices->attach(engine);
  devices->watch(*window);
  // The devices stay attached (their pump answers the window and quit); a recorder between them
  // and the input saves what each step saw, a replay takes their place as the source.
  samples::InputSession session;
  if (!session.start(engine, devices.get(), replay_args, "window")) return 2;

  // A lit cube on a floor, drawn by the render stages into the image the window shows.
  engine.add_plugin<core::TransformPlugin>();
  render::Renderer& r = engine
                            .add_plugin<render::RenderPlugin>(render::RenderPluginConfig{
                                .renderer = {.width = 480, .height = 270}})
                            .renderer();
  r.set_camera({.position = {0, 3, 8}, .target = {0, 0.5f, 0}, .aspect = 480.0f / 270.0f});
  r.lights().directional = {.direction = {0.4f, 1.0f, 0.3f}, .color = glm::vec3(0.8f)};
  core::World& world = engine.world();
  world.register_component<Hero>("hero");
  const auto place = [&](glm::vec3 at, render::MeshId mesh, glm::vec4 colour) {
    const core::Entity e = world.create();
    world.add<core::Transform>(e, core::Transform::from(at));
    world.add<core::WorldTransform>(e);
    const render::MaterialId m = r.add_material({.name = "paint", .color = colour}).value();
    world.add<render::MeshInstance>(e, render::MeshInstance{.mesh = mesh, .material = m});
    return e;
  };
  place({0, 0, 0}, r.add_mesh(render::make_plane(12.0f, 6.0f)).value(), {0.3f, 0.35f, 0.4f, 1});
  const core::Entity hero =
      place({0, 0.5f, 0}, r.add_mesh(render::make_cube(1.0f)).value(), {1.0f, 0.55f, 0.2f, 1});
  world.add<Hero>(hero);
  engine.add_system<const Hero, core::Transform>("move", [&](core::StageContext& ctx, core::Entity,
                                                             const Hero& h, core::Transform& t) {
    const core::Input& in = *ctx.world().resource<core::Input>();
    t.set_translation(t.translation() + glm::vec3(in.axis(right, left) * h.speed * ctx.dt(), 0, 0));
  });
  engine.add_stage(
      {.name = "quit", .phase = core::Phase::Gameplay, .run = [&](core::StageContext& ctx) {
         if (ctx.world().resource<core::Input>()->pressed(quit)) ctx.engine().request_quit();
       }});

  const render::Image& image = r.image();
  const platform::RunStats stats =
      platform::run(engine, window.get(), image,
                    {.max_frames = frames,
                     .target_fps = frames == 0 ? 60.0 : 0.0,
                     .fixed_delta_ns = frames == 0 ? 0 : core::kNsPerSecond / 60});

  if (!session.finish("window")) return 1;
  const float x = world.get<core::Transform>(hero)->translation().x;
  std::printf("window: driver %s, %s, cube at x = %.2f, last copy %.3f ms\n", window->driver(),
              jobs::to_string(engine.mode()), static_cast<double>(x),
              static_cast<double>(window->last_copy_ns()) * 1e-6);
  std::printf("frames=%llu median_ms=%.3f p99_ms=%.3f hash=%016llx\n",
              static_cast<unsigned long long>(stats.frames), stats.median_ms, stats.p99_ms,
              static_cast<unsigned long long>(world.state_hash()));
  // The scripted half second of Right at 4 units per second: the cube ends near x = 2.
  if (frames >= 60 && !(x > 1.8f && x < 2.2f)) {
    std::fprintf(stderr, "window: the cube should have moved about 2 units right, it is at %.2f\n",
                 static_cast<double>(x));
    return 1;
  }
  return stats.frames > 0 ? 0 : 1;
}
