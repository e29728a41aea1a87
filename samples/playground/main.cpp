// playground: a Bullet physics playground in a window. Two play areas, each its own physics
// region (its own Bullet world, stepped beside the other), hold stacks of boxes and balls on a
// shared floor, with a low wall on the boundary between them. Space (or a controller's A) throws
// a body from the camera along the view; the left mouse button picks the body under the cursor
// with a physics raycast, highlights it and pushes it away; E (or X) does the same through the
// crosshair at the screen's centre; Left/Right (or the left stick) turn the view; Escape quits.
// Debug text shows the bodies, the regions, the picked body and the frame rate.
//
// With --frames N a scripted player turns, throws six bodies and picks two through the
// crosshair, and the sample checks what happened: the throws flew and hit the stacks, the picks
// hit bodies and pushed them. --headless runs on SDL's dummy driver with a fixed 1/60 s frame.
//
//   spindle_sample_playground [--headless] [--frames N] [--mode single|static|dynamic|tbb]
//                             [--workers N] [--record FILE | --replay FILE]
//                             [--screenshot FILE] [--golden FILE]
//
// --record writes the actions every step saw; --replay plays them instead of the script (or the
// player) and ends with the same hash. The cursor is not an action, so it is not recorded: a
// replay aims mouse picks through the crosshair (picks made with E replay exactly).
//
// Last line: frames=N median_ms=X p99_ms=Y hash=H (the world hash, the same in every mode).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <glm/gtc/matrix_transform.hpp>

#include <spindle/spindle.h>

#include "sample_args.h"
#include "sample_golden.h"
#include "sample_replay.h"

using namespace spindle;

namespace {

constexpr int kImageWidth = 480, kImageHeight = 270;
constexpr glm::vec3 kEye{0.0f, 5.0f, 13.0f};
constexpr float kPitch = -0.3f;          // radians, looking down at the floor
constexpr float kTurnSpeed = 1.0f;       // radians per second
constexpr float kThrowSpeed = 15.0f;     // metres per second
constexpr float kPushSpeed = 6.0f;       // what a pick's impulse adds, metres per second
constexpr float kRegionBoundary = 0.0f;  // x: the left play area is region 0, the right one 1

// A body thrown by the player, and where it left the hand.
struct Thrown {
  glm::vec3 from{0.0f};
};

// The player's view and what the player has done (a resource: one per game).
struct Player {
  float yaw = 0;  // radians, positive turns right
  int thrown = 0;
  int picks = 0;       // pick attempts
  int picks_hit = 0;   // those that hit a dynamic body
  int throws_hit = 0;  // collisions of a thrown body with anything but the floor
  core::Entity picked{};
  render::MaterialId picked_paint = 0;  // its own paint, back when another is picked
  glm::vec3 picked_at{0.0f};            // its centre when it was picked
};

struct Controls {
  core::ActionId throw_body, pick, pick_centre, turn_left, turn_right, quit;
};

// What the stages share: ids made at start-up.
struct Assets {
  physics::ShapeId ball_shape, box_shape;
  render::MeshId ball_mesh = 0, box_mesh = 0;
  render::MaterialId thrown_paint = 0, picked_paint = 0;
  core::Entity floor{};
};

glm::vec3 view_direction(float yaw) {
  return {std::sin(yaw) * std::cos(kPitch), std::sin(kPitch), -std::cos(yaw) * std::cos(kPitch)};
}

render::Camera camera_of(const Player& p) {
  return {.position = kEye,
          .target = kEye + view_direction(p.yaw),
          .aspect = static_cast<float>(kImageWidth) / kImageHeight};
}

// The ray under a point of the screen, given in normalised device coordinates (-1..1, y up).
struct Ray {
  glm::vec3 from, direction;
};
Ray ray_through(const render::Camera& camera, glm::vec2 ndc) {
  const glm::mat4 inverse = glm::inverse(camera.view_projection());
  const glm::vec4 near = inverse * glm::vec4(ndc, -1.0f, 1.0f);
  const glm::vec4 far = inverse * glm::vec4(ndc, 1.0f, 1.0f);
  const glm::vec3 a = glm::vec3(near) / near.w, b = glm::vec3(far) / far.w;
  return {a, glm::normalize(b - a)};
}

Controls declare_controls(core::Engine& engine) {
  core::Input& input = core::use_input(engine);
  return {input.add_action("throw").value(),       input.add_action("pick").value(),
          input.add_action("pick_centre").value(), input.add_action("turn_left").value(),
          input.add_action("turn_right").value(),  input.add_action("quit").value()};
}

// The scripted player (tick numbers): turn to the left stack, throw three, pick through the
// crosshair; turn to the right stack, pick the tower and throw three; turn back to the middle.
core::ScriptedInput make_script(const Controls& c) {
  core::ScriptedInput s;
  s.hold(c.turn_left, 5, 26);  // 22 steps: about 21 degrees left
  for (std::uint64_t t : {35, 50, 65}) s.hold(c.throw_body, t, t);
  s.hold(c.pick_centre, 110, 110);
  s.hold(c.turn_right, 120, 163);   // 44 steps: as far right of the centre
  s.hold(c.pick_centre, 170, 170);  // the tower, before throws fly through the view
  for (std::uint64_t t : {180, 195, 210}) s.hold(c.throw_body, t, t);
  s.hold(c.turn_left, 214, 235);  // back to the middle: both areas in view
  return s;
}

// A body with a mesh: Transform (pose, written back by physics), WorldTransform (drawn).
core::Entity place(core::World& world, const core::Transform& pose, const physics::RigidBody& body,
                   render::MeshId mesh, render::MaterialId paint) {
  const core::Entity e = world.create();
  world.add<core::Transform>(e, pose);
  world.add<core::WorldTransform>(e);
  world.add<physics::RigidBody>(e, body);
  world.add<render::MeshInstance>(e, render::MeshInstance{.mesh = mesh, .material = paint});
  return e;
}

// The two play areas: a floor coloured per region, the wall on the boundary, and a stack in
// each area (a pyramid of boxes on the left; a tower of boxes with balls around it on the right).
Assets build_scene(core::World& world, physics::Physics& physics, render::Renderer& r) {
  const auto shape = [&](const physics::ShapeDesc& d) { return physics.create_shape(d).value(); };
  const auto paint = [&](glm::vec4 c) { return r.add_material({.color = c}).value(); };
  Assets a;
  a.ball_shape = shape(physics::ShapeDesc::sphere(0.3f));
  a.box_shape = shape(physics::ShapeDesc::box(glm::vec3(0.3f)));
  a.ball_mesh = r.add_mesh(render::make_sphere(0.3f)).value();
  a.box_mesh = r.add_mesh(render::make_cube(0.6f)).value();
  a.thrown_paint = paint({1.0f, 0.55f, 0.15f, 1});
  a.picked_paint = paint({1.0f, 0.95f, 0.2f, 1});

  // Static bodies belong to every region: one plane is the floor of both.
  const render::MeshId tile = r.add_mesh(render::make_plane(1.0f)).value();
  a.floor = place(world, core::Transform::from({-5, 0, 2}, {1, 0, 0, 0}, {10, 1, 20}),
                  physics::RigidBody::fixed(shape(physics::ShapeDesc::plane({0, 1, 0}, 0))), tile,
                  paint({0.25f, 0.32f, 0.45f, 1}));
  const core::Entity right_floor = world.create();
  world.add<core::Transform>(right_floor,
                             core::Transform::from({5, 0, 2}, {1, 0, 0, 0}, {10, 1, 20}));
  world.add<core::WorldTransform>(right_floor);
  world.add<render::MeshInstance>(
      right_floor, render::MeshInstance{.mesh = tile, .material = paint({0.27f, 0.42f, 0.3f, 1})});
  // Bodies never touch across a boundary in one step, so it runs under a wall, where little
  // happens; what flies over it migrates to the other region.
  const render::MeshId unit_cube = r.add_mesh(render::make_cube(1.0f)).value();
  place(world, core::Transform::from({kRegionBoundary, 0.4f, 0}, {1, 0, 0, 0}, {0.2f, 0.8f, 12}),
        physics::RigidBody::fixed(shape(physics::ShapeDesc::box({0.1f, 0.4f, 6}))), unit_cube,
        paint({0.6f, 0.6f, 0.65f, 1}));

  const render::MaterialId left_paint = paint({0.35f, 0.6f, 1.0f, 1});
  const render::MaterialId right_paint = paint({0.45f, 0.9f, 0.45f, 1});
  const auto box = [&](glm::vec3 at, render::MaterialId m) {
    place(world, core::Transform::from(at), physics::RigidBody::dynamic(a.box_shape, 1.0f),
          a.box_mesh, m);
  };
  for (int row = 0; row < 4; ++row) {
    for (int i = 0; i < 4 - row; ++i)
      box({-5.0f + 0.62f * (static_cast<float>(i) - 0.5f * static_cast<float>(3 - row)),
           0.3f + 0.6f * static_cast<float>(row), 0},
          left_paint);
  }
  for (int row = 0; row < 5; ++row) box({5, 0.3f + 0.6f * static_cast<float>(row), 0}, right_paint);
  for (int i = 0; i < 6; ++i) {
    const float angle = 6.2831853f * static_cast<float>(i) / 6.0f;
    place(world, core::Transform::from({5 + 1.2f * std::cos(angle), 0.3f, 1.2f * std::sin(angle)}),
          physics::RigidBody::dynamic(a.ball_shape, 0.5f), a.ball_mesh, right_paint);
  }
  return a;
}

void add_stages(core::Engine& engine, const Controls& c, const Assets& a,
                const platform::Devices& devices, const platform::Window& window,
                const bool& live_cursor) {
  // Turning: the view (and where throws and crosshair picks go) follows the actions only, so a
  // replay turns the same way.
  engine.add_stage({.name = "turn",
                    .access = core::Access{}.write<Player>(),
                    .run = [c](core::StageContext& ctx) {
                      const core::Input& in = *ctx.world().resource<core::Input>();
                      ctx.world().resource<Player>()->yaw +=
                          in.axis(c.turn_right, c.turn_left) * kTurnSpeed * ctx.dt();
                    }});

  // Throwing: a body spawned in front of the camera with a velocity along the view (and a little
  // up, so it arcs onto the stacks); physics_sync creates it and sets the velocity this step.
  engine.add_stage({.name = "throw",
                    .access = core::Access{}.write<Player>(),
                    .after = {"turn"},
                    .run = [c, a](core::StageContext& ctx) {
                      const core::Input& in = *ctx.world().resource<core::Input>();
                      if (!in.pressed(c.throw_body)) return;
                      Player& p = *ctx.world().resource<Player>();
                      const glm::vec3 dir = view_direction(p.yaw);
                      const glm::vec3 at = kEye + 1.0f * dir;
                      const bool ball = p.thrown % 2 == 0;
                      physics::RigidBody body =
                          physics::RigidBody::dynamic(ball ? a.ball_shape : a.box_shape, 2.0f);
                      body.set_linear_velocity(kThrowSpeed * dir + glm::vec3(0, 3, 0));
                      ctx.commands().spawn(
                          core::Transform::from(at), core::WorldTransform{}, body,
                          render::MeshInstance{.mesh = ball ? a.ball_mesh : a.box_mesh,
                                               .material = a.thrown_paint},
                          Thrown{at});
                      ++p.thrown;
                    }});

  // Picking: a raycast through the cursor (a live mouse click) or the crosshair; the body hit
  // turns yellow (the one picked before gets its paint back) and is pushed along the ray.
  engine.add_stage(
      {.name = "pick",
       .access = core::Access{}
                     .read<physics::Physics, core::Transform>()
                     .write<Player, physics::RigidBody, render::MeshInstance>(),
       .after = {"throw"},
       .run = [c, a, &devices, &window, &live_cursor](core::StageContext& ctx) {
         core::World& w = ctx.world();
         const core::Input& in = *w.resource<core::Input>();
         const bool mouse = in.pressed(c.pick);
         if (!mouse && !in.pressed(c.pick_centre)) return;
         Player& p = *w.resource<Player>();
         glm::vec2 ndc{0.0f};  // the crosshair
         if (mouse && live_cursor) {
           ndc = {2.0f * (static_cast<float>(devices.mouse_x()) + 0.5f) /
                          static_cast<float>(window.width()) -
                      1.0f,
                  1.0f - 2.0f * (static_cast<float>(devices.mouse_y()) + 0.5f) /
                             static_cast<float>(window.height())};
         }
         const Ray ray = ray_through(camera_of(p), ndc);
         ++p.picks;
         const auto hit =
             w.resource<physics::Physics>()->raycast(ray.from, ray.from + 60.0f * ray.direction);
         physics::RigidBody* body = hit ? w.get<physics::RigidBody>(hit->entity) : nullptr;
         if (body == nullptr || body->type != physics::BodyType::Dynamic) return;
         ++p.picks_hit;
         std::printf("playground: step %llu: picked entity %u at (%.2f, %.2f, %.2f)\n",
                     static_cast<unsigned long long>(ctx.tick()), hit->entity.index,
                     static_cast<double>(hit->point.x), static_cast<double>(hit->point.y),
                     static_cast<double>(hit->point.z));
         if (render::MeshInstance* before = w.get<render::MeshInstance>(p.picked))
           before->material = p.picked_paint;
         render::MeshInstance& mesh = *w.get<render::MeshInstance>(hit->entity);
         p.picked = hit->entity;
         p.picked_paint = mesh.material;
         p.picked_at = w.get<core::Transform>(hit->entity)->translation();
         mesh.material = a.picked_paint;
         body->add_impulse(body->mass * kPushSpeed * ray.direction);
       }});

  // Last step's collisions: a thrown body against anything but the floor.
  engine.add_stage(
      {.name = "contacts",
       .access = core::Access{}.read<physics::CollisionBegan, Thrown>().write<Player>(),
       .after = {"pick"},
       .run = [a](core::StageContext& ctx) {
         core::World& w = ctx.world();
         Player& p = *w.resource<Player>();
         for (const physics::CollisionBegan& hit : w.read_events<physics::CollisionBegan>()) {
           const bool thrown = w.has<Thrown>(hit.a) || w.has<Thrown>(hit.b);
           if (thrown && hit.a != a.floor && hit.b != a.floor) ++p.throws_hit;
         }
       }});

  engine.add_stage({.name = "quit", .run = [c](core::StageContext& ctx) {
                      if (ctx.world().resource<core::Input>()->pressed(c.quit))
                        ctx.engine().request_quit();
                    }});
}

// The camera and the debug text, set while the frame's draws are submitted.
void draw_overlay(core::StageContext& ctx, render::Renderer& r) {
  core::World& w = ctx.world();
  const Player& p = *w.resource<Player>();
  const physics::Physics& physics = *w.resource<physics::Physics>();
  r.set_camera(camera_of(p));
  const std::uint64_t frame_ns = ctx.engine().last_frame().frame_ns;
  char text[256];
  std::snprintf(text, sizeof text,
                "bodies %u (%u awake)  thrown %d  fps %.0f\n"
                "region 0: %u objects  region 1: %u  migrated %llu\n"
                "picked %s",
                physics.stats().bodies, physics.stats().active, p.thrown,
                frame_ns > 0 ? 1e9 / static_cast<double>(frame_ns) : 0.0, physics.region_objects(0),
                physics.region_objects(1),
                static_cast<unsigned long long>(physics.stats().migrated),
                w.alive(p.picked) ? "" : "none");
  if (w.alive(p.picked)) {
    const std::size_t n = std::strlen(text);
    std::snprintf(text + n, sizeof text - n, "entity %u", p.picked.index);
  }
  r.debug().text(glm::vec2{6, 6}, text, render::rgba(255, 255, 255));
  // A frame around the picked body, seen through whatever hides it.
  if (const core::Transform* t = w.get<core::Transform>(p.picked))
    r.debug().box(t->translation(), glm::vec3(0.4f), render::rgba(255, 240, 50));
  // The crosshair at the centre: where throws go and where E picks.
  const glm::vec2 centre{kImageWidth / 2 + 0.5f, kImageHeight / 2 + 0.5f};
  r.debug().screen_line(centre - glm::vec2(5, 0), centre + glm::vec2(6, 0),
                        render::rgba(255, 255, 255));
  r.debug().screen_line(centre - glm::vec2(0, 5), centre + glm::vec2(0, 6),
                        render::rgba(255, 255, 255));
}

}  // namespace

int main(int argc, char** argv) {
  samples::GoldenArgs golden;
  argc = samples::take_golden_args(argc, argv, golden);
  std::uint64_t frames = 0;  // 0: until quit
  bool headless = false;
  samples::ReplayArgs replay_args;
  argc = samples::take_replay_args(argc, argv, replay_args);
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--frames") == 0 && has_value) {
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
  auto opened = platform::Window::open({.title = "Spindle playground",
                                        .width = 960,
                                        .height = 540,
                                        .vsync = frames == 0,
                                        .driver = headless ? "dummy" : ""});
  if (!opened) {
    std::fprintf(stderr, "playground: %s\n", opened.status().c_str());
    return 1;
  }
  std::unique_ptr<platform::Window> window = std::move(opened).value();

  // Actions bound in text, as a controls file would hold them.
  const Controls controls = declare_controls(engine);
  auto devices = platform::Devices::open().value();
  for (const auto& [action, control] :
       {std::pair{controls.throw_body, "key:Space"}, std::pair{controls.throw_body, "button:a"},
        std::pair{controls.pick, "mouse:1"}, std::pair{controls.pick_centre, "key:E"},
        std::pair{controls.pick_centre, "button:x"}, std::pair{controls.turn_left, "key:Left"},
        std::pair{controls.turn_left, "axis:leftx-"}, std::pair{controls.turn_right, "key:Right"},
        std::pair{controls.turn_right, "axis:leftx+"}, std::pair{controls.quit, "key:Escape"}}) {
    if (core::Status s = devices->bind(action, control); !s) {
      std::fprintf(stderr, "playground: %s\n", s.c_str());
      return 1;
    }
  }
  devices->attach(engine);  // pumps SDL's events every frame, and is the input source...
  devices->watch(*window);
  // ...unless the script or a replay plays; the recorder notes what each step saw.
  core::ScriptedInput script = make_script(controls);
  const bool scripted = frames > 0 && replay_args.replay.empty();
  samples::InputSession session;
  if (!session.start(engine, scripted ? static_cast<core::InputSource*>(&script) : devices.get(),
                     replay_args, "playground"))
    return 2;
  if (frames == 0) frames = session.replay_steps();
  const bool live_cursor = !scripted && !session.replaying();

  engine.add_plugin<core::TransformPlugin>();
  physics::Physics& physics = engine
                                  .add_plugin<physics::PhysicsPlugin>(physics::PhysicsConfig{
                                      .region_boundaries = {kRegionBoundary}, .region_axis = 0})
                                  .physics();
  // The overlay reads what it shows, so render_submit runs after the stages that write it.
  render::RenderPluginConfig view{
      .renderer = {.width = kImageWidth, .height = kImageHeight},
      .submit = draw_overlay,
      .submit_access = core::Access{}.read<Player, physics::Physics, core::Transform>()};
  render::Renderer& r = engine.add_plugin<render::RenderPlugin>(std::move(view)).renderer();
  r.lights().directional = {.direction = {0.4f, 1.0f, 0.3f}, .color = glm::vec3(0.8f)};
  core::World& world = engine.world();
  world.register_component<Thrown>("thrown");
  world.set_resource<Player>();
  const Assets assets = build_scene(world, physics, r);
  add_stages(engine, controls, assets, *devices, *window, live_cursor);

  const render::Image& image = r.image();
  const platform::RunStats stats =
      platform::run(engine, window.get(), image,
                    {.max_frames = frames,
                     .target_fps = frames == 0 ? 60.0 : 0.0,
                     .fixed_delta_ns = frames == 0 ? 0 : core::kNsPerSecond / 60});

  if (!session.finish("playground")) return 1;

  // What the script (or its replay) did: every thrown body flew from the hand, some hit the
  // stacks, the picks hit bodies and the last one pushed its body away.
  const Player& p = *world.resource<Player>();
  int thrown_alive = 0;
  float shortest_flight = 1e9f;
  world.query<const Thrown, const core::Transform>().each(
      [&](core::Entity, const Thrown& t, const core::Transform& pose) {
        ++thrown_alive;
        shortest_flight = std::fmin(shortest_flight, glm::distance(t.from, pose.translation()));
      });
  const core::Transform* picked = world.get<core::Transform>(p.picked);
  const float pushed = picked != nullptr ? glm::distance(p.picked_at, picked->translation()) : 0;
  std::printf(
      "playground: driver %s, %s, %d thrown (%d hits besides the floor), picks %d/%d, last picked "
      "moved %.2f m, %llu migrations\n",
      window->driver(), jobs::to_string(engine.mode()), p.thrown, p.throws_hit, p.picks_hit,
      p.picks, static_cast<double>(pushed),
      static_cast<unsigned long long>(physics.stats().migrated));
  std::printf("frames=%llu median_ms=%.3f p99_ms=%.3f hash=%016llx\n",
              static_cast<unsigned long long>(stats.frames), stats.median_ms, stats.p99_ms,
              static_cast<unsigned long long>(world.state_hash()));
  if (!samples::check_golden(image, golden, "playground")) return 1;
  if (live_cursor || frames < 240) return stats.frames > 0 ? 0 : 1;
  const char* failed = p.thrown < 6 || thrown_alive != p.thrown ? "six bodies thrown"
                       : shortest_flight < 3.0f                 ? "every thrown body flew"
                       : p.throws_hit < 1                       ? "a throw hit a stack"
                       : p.picks_hit < 2                        ? "both picks hit a body"
                       : physics.region_objects(0) < 12 || physics.region_objects(1) < 12
                           ? "each region simulating its own stack"
                       : pushed < 0.3f ? "the picked body pushed away"
                                       : nullptr;
  if (failed != nullptr) {
    std::fprintf(stderr, "playground: expected %s, and it did not happen\n", failed);
    return 1;
  }
  return 0;
}
