// crowd: skinned characters walking in circles on a ground plane, a camera you fly, and the frame
// overlay of FPS, stage times and each worker's busy time. The characters are procedural (a few
// kinds sharing skeletons, walk clips and meshes); the animation plugin poses and skins them, and
// each one is drawn with its skinned vertices through the RenderPlugin's submit hook.
//
//   W A S D or the arrows (left stick) fly, Space / C (triggers) rise and sink, Q / E turn,
//   R / F look up and down, the mouse or the right stick looks around, Escape quits.
//
//   spindle_sample_crowd [--headless] [--frames N] [--characters N] [--workers N]
//                        [--mode single|static|dynamic|tbb] [--record FILE | --replay FILE]
//                        [--screenshot FILE] [--golden FILE] [--model FILE]
//
// --model FILE imports a skinned character through spindle::anim_import (glTF, FBX, .x) and
// makes every fifth character one of it, playing the file's first animation, stood 1.8 m tall
// on the ground. Debian's assimp-testmodels has one (BSD-3-clause, the assimp team):
// /usr/share/assimp/models/X/BCN_Epileptic.X, a body of 54 bones and 15,378 vertices whose
// animation "Epileptisch" makes it jump about.
//
// Far characters get coarser meshes (a quarter and an eighth of the vertices, chosen by height on
// screen with render::lod_for_size) and the farthest are posed every other frame
// (anim::AnimationLod): the `lod` stage below.
//
// With --frames N a scripted flight drives the camera through the same actions the keys press
// (forward, turn left, forward), and the sample checks that every character walked and that the
// camera ended where the script puts it. --headless runs on SDL's dummy driver with 1/60 s
// frames, so a run is the same in every mode. --record saves the input every step saw; --replay
// plays a recording instead (the mouse and sticks are not recorded, so they are off whenever a
// run records or replays, or is scripted). The last frame is drawn without the overlay, whose
// timings differ every run, so --screenshot / --golden images are deterministic.
//
// Last line: frames=N median_ms=X p99_ms=Y hash=H (the world hash, the same in every mode).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <spindle/anim/import.h>
#include <spindle/spindle.h>

#include "sample_args.h"
#include "sample_golden.h"
#include "sample_replay.h"

using namespace spindle;

namespace {

constexpr float kTau = 6.2831853f;
constexpr float kCellSide = 4.0f;      // metres of ground each character's circle gets
constexpr float kFlySpeed = 6.0f;      // metres per second
constexpr float kTurnRate = 1.5f;      // radians per second, keys
constexpr float kLookRate = 2.5f;      // radians per second, right stick at full deflection
constexpr float kMouseLook = 0.0025f;  // radians per pixel of relative mouse motion
constexpr float kMaxPitch = 1.4f;

// A character walking a circle; `walked` (metres so far) is what the sample checks.
struct Walker {
  glm::vec2 centre{0.0f};
  float radius = 1.0f;
  float angle = 0.0f;  // where on the circle, radians
  float rate = 1.0f;   // radians per second; the sign is the direction
  float walked = 0.0f;
};

// The renderer's mesh and material for a character, its slot in the per-frame vertex overrides
// (a fixed slot per character, so the draws do not depend on query order), the matrix that fits
// its mesh to the walker (an imported model's own size and origin), its kind and its level of
// detail (0: full).
struct Look {
  render::MeshId mesh = 0;
  render::MaterialId material = 0;
  std::uint32_t slot = 0;
  glm::mat4 fit{1.0f};
  std::uint32_t kind = 0;
  std::uint32_t lod = 0;
};

// Levels of detail: level l + 1 under kLodBelow[l] pixels tall; each level has a quarter, then an
// eighth, of the full mesh's vertices, and the last is posed every other frame.
constexpr int kLods = 3;
constexpr float kLodBelow[kLods - 1] = {60.0f, 20.0f};
constexpr int kLodVertices[kLods] = {900, 225, 112};
constexpr std::uint32_t kLodUpdateEvery[kLods] = {1, 1, 2};

// The fly camera, a component on its own entity so the world hash covers it.
struct FlyCamera {
  glm::vec3 position{0.0f};
  float yaw = 0.0f;    // radians; 0 looks down -Z, positive turns left
  float pitch = 0.0f;  // radians; positive looks up
};

struct Controls {
  core::ActionId forward, back, left, right, up, down, turn_left, turn_right, look_up, look_down,
      quit;
};

glm::vec3 facing(float yaw, float pitch) {
  return {-std::sin(yaw) * std::cos(pitch), std::sin(pitch), -std::cos(yaw) * std::cos(pitch)};
}

render::Camera camera_view(const FlyCamera& c, float aspect) {
  return {.position = c.position,
          .target = c.position + facing(c.yaw, c.pitch),
          .aspect = aspect,
          .far_plane = 500.0f};
}

// A value in [0, 1) fixed by (index, salt): the same layout in every mode.
float unit(std::uint32_t index, std::uint32_t salt) {
  std::uint32_t x = index * 0x9e3779b9u + salt * 0x85ebca6bu + 0x2545f491u;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return static_cast<float>(x & 0xffffff) / static_cast<float>(0x1000000);
}

// The generator's skin as a render mesh: its vertices (replaced each frame by the skinned ones)
// and its triangles, tubes around the bones (drawn from both sides: their ends are open).
core::Result<render::Mesh> skin_triangles(const anim::Character& c, int kind) {
  const anim::SkinnedMesh& skin = c.mesh;
  std::vector<render::Vertex> vertices(skin.vertex_count());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    vertices[i].position = {skin.px[i], skin.py[i], skin.pz[i]};
    vertices[i].normal = {skin.nx[i], skin.ny[i], skin.nz[i]};
  }
  return render::Mesh::create(
      {.name = "crowd kind " + std::to_string(kind), .vertices = vertices, .indices = c.indices});
}

core::Result<Controls> bind_controls(core::Engine& engine, platform::Devices& devices) {
  core::Input& input = core::use_input(engine);
  Controls c{input.add_action("forward").value(),   input.add_action("back").value(),
             input.add_action("left").value(),      input.add_action("right").value(),
             input.add_action("up").value(),        input.add_action("down").value(),
             input.add_action("turn_left").value(), input.add_action("turn_right").value(),
             input.add_action("look_up").value(),   input.add_action("look_down").value(),
             input.add_action("quit").value()};
  const std::pair<core::ActionId, const char*> bindings[] = {
      {c.forward, "key:W"},       {c.forward, "key:Up"},
      {c.forward, "axis:lefty-"}, {c.back, "key:S"},
      {c.back, "key:Down"},       {c.back, "axis:lefty+"},
      {c.left, "key:A"},          {c.left, "key:Left"},
      {c.left, "axis:leftx-"},    {c.right, "key:D"},
      {c.right, "key:Right"},     {c.right, "axis:leftx+"},
      {c.up, "key:Space"},        {c.up, "axis:righttrigger+"},
      {c.down, "key:C"},          {c.down, "axis:lefttrigger+"},
      {c.turn_left, "key:Q"},     {c.turn_right, "key:E"},
      {c.look_up, "key:R"},       {c.look_down, "key:F"},
      {c.quit, "key:Escape"}};
  for (const auto& [action, control] : bindings)
    if (core::Status s = devices.bind(action, control); !s) return s;
  return c;
}

// The scripted flight, in steps: 5 m forward, a 0.75 rad turn to the left, 2 m forward.
constexpr std::uint64_t kScriptEnd = 115;  // frames a run needs for the whole script

core::ScriptedInput make_flight(const Controls& c) {
  core::ScriptedInput flight;
  flight.hold(c.forward, 10, 59);
  flight.hold(c.turn_left, 60, 89);
  flight.hold(c.forward, 90, 109);
  return flight;
}

FlyCamera expected_after_flight(FlyCamera c) {
  c.position += 5.0f * facing(c.yaw, c.pitch);
  c.yaw += 0.75f;
  c.position += 2.0f * facing(c.yaw, c.pitch);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t frames = 0;  // 0: until quit (or the replay's length)
  std::uint32_t characters = 200;
  bool headless = false;
  std::string model;  // --model: an imported character joins the crowd
  samples::ReplayArgs replay_args;
  argc = samples::take_replay_args(argc, argv, replay_args);
  samples::GoldenArgs golden;
  argc = samples::take_golden_args(argc, argv, golden);
  // This sample's own flags; the rest are every sample's (--mode, --workers).
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--frames") == 0 && has_value) {
      frames = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--characters") == 0 && has_value) {
      characters = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--headless") == 0) {
      headless = true;
    } else if (std::strcmp(argv[i], "--model") == 0 && has_value) {
      model = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  samples::SampleArgs args;
  if (!samples::parse_sample_args(kept, argv, args)) {
    std::fprintf(stderr,
                 "crowd also takes: [--headless] [--frames N] [--characters N] [--record FILE | "
                 "--replay FILE] [--screenshot FILE] [--golden FILE] [--model FILE]\n");
    return 2;
  }
  if (characters < 1 || characters > 5000) {
    std::fprintf(stderr, "crowd: --characters must be in [1, 5000]\n");
    return 2;
  }
  if ((!golden.screenshot.empty() || !golden.golden.empty()) && frames == 0 &&
      replay_args.replay.empty()) {
    std::fprintf(stderr, "crowd: --screenshot and --golden need --frames or --replay\n");
    return 2;
  }

  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  const bool scripted = frames > 0 && replay_args.replay.empty();
  const bool live = frames == 0 && replay_args.replay.empty();  // a player at the keys
  auto opened = platform::Window::open({.title = "Spindle crowd",
                                        .width = 960,
                                        .height = 540,
                                        .vsync = live,
                                        .driver = headless ? "dummy" : ""});
  if (!opened) {
    std::fprintf(stderr, "crowd: %s\n", opened.status().c_str());
    return 1;
  }
  std::unique_ptr<platform::Window> window = std::move(opened).value();
  auto devices = platform::Devices::open().value();
  const core::Result<Controls> bound = bind_controls(engine, *devices);
  if (!bound) {
    std::fprintf(stderr, "crowd: %s\n", bound.status().c_str());
    return 1;
  }
  const Controls controls = bound.value();
  // The mouse and sticks are analogue and not recorded: only a live run that is not recorded
  // looks with them, so every recording replays to the same world.
  const bool analogue_look = live && replay_args.record.empty();
  if (analogue_look && !window->headless()) {
    if (core::Status s = devices->set_relative_mouse(true); !s)
      std::fprintf(stderr, "crowd: no relative mouse (%s); look with R/F and Q/E\n", s.c_str());
  }
  devices->attach(engine);  // pumps SDL's events every frame (closing the window quits)
  devices->watch(*window);

  // Input: the devices, or the scripted flight, or a recording; recorded either way.
  core::ScriptedInput flight = make_flight(controls);
  samples::InputSession session;
  if (!session.start(engine,
                     scripted ? static_cast<core::InputSource*>(&flight)
                              : static_cast<core::InputSource*>(devices.get()),
                     replay_args, "crowd"))
    return 2;
  if (frames == 0) frames = session.replay_steps();

  // Animation and rendering. The overlay is drawn by the submit hook below, not by the plugin,
  // so the captured last frame can go without it.
  anim::Animation& animation = engine.add_plugin<anim::AnimationPlugin>().animation();
  engine.add_plugin<core::TransformPlugin>();
  const int width = live ? 960 : 480, height = live ? 540 : 270;
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  core::World& world = engine.world();
  world.register_component<Walker>("walker");
  world.register_component<Look>("look");
  world.register_component<FlyCamera>("fly_camera");
  std::vector<render::VertexOverride> skinned(characters);
  core::Entity camera;
  const bool capture = !golden.screenshot.empty() || !golden.golden.empty();
  std::uint64_t frames_begun = 0;
  engine.add_frame_hook([&frames_begun](core::Engine&) { ++frames_begun; });
  render::RenderPluginConfig config{
      .renderer = {.width = width, .height = height, .max_draws = characters + 16},
      .submit =
          [&](core::StageContext& ctx, render::Renderer& r) {
            r.set_camera(camera_view(*ctx.world().get<FlyCamera>(camera), aspect));
            if (!(capture && frames_begun == frames))
              render::draw_frame_overlay(r, ctx.engine(),
                                         ctx.engine().last_frame());  // the frame before
            ctx.world().query<const core::WorldTransform, const Look>().each([&](core::Entity e,
                                                                                 const core::
                                                                                     WorldTransform&
                                                                                         w,
                                                                                 const Look& look) {
              // Where anim_skin writes the vertices: taken beside the skinning; the
              // renderer's geometry reads them after it (geometry_access below).
              const anim::SkinTargets where = animation.skin_targets(e);
              if (!where.valid || where.positions.empty()) return;
              render::VertexOverride& o = skinned[look.slot];
              o = {where.positions.x.data(), where.positions.y.data(), where.positions.z.data()};
              if (!where.normals.empty()) {
                o.nx = where.normals.x.data();
                o.ny = where.normals.y.data();
                o.nz = where.normals.z.data();
              }
              r.submit({.mesh = look.mesh,
                        .material = look.material,
                        .model = w.matrix * look.fit,
                        .vertices = &o});
            });
          },
      .submit_access = core::Access{}.read<anim::SkinTargets, Look, FlyCamera>(),
      .geometry_access = core::Access{}.read<anim::Animation>()};
  render::Renderer& r = engine.add_plugin<render::RenderPlugin>(std::move(config)).renderer();
  r.lights().ambient = glm::vec3(0.25f);
  r.lights().directional = {.direction = {0.4f, 1.0f, 0.3f}, .color = glm::vec3(0.8f)};

  // Four kinds of character, each shared by a quarter of the crowd as a real crowd shares assets.
  struct Kind {
    anim::SkeletonId skeleton;
    anim::ClipId walk;
    anim::MeshId mesh[kLods];  // an imported kind has one level: the same mesh at each
    render::MeshId look[kLods];
    render::MaterialId material;
    float stride;  // metres per second at clip speed 1
    glm::mat4 fit{1.0f};
  };
  const glm::vec4 colours[] = {{0.85f, 0.7f, 0.55f, 1},
                               {0.55f, 0.65f, 0.9f, 1},
                               {0.9f, 0.5f, 0.45f, 1},
                               {0.6f, 0.85f, 0.5f, 1}};
  std::vector<Kind> kinds;
  for (std::uint32_t k = 0; k < 4; ++k) {
    const float height_m = 1.6f + 0.1f * static_cast<float>(k);
    Kind kind{};
    // Each level from the same seed: the generator's skeleton and clips depend on nothing else,
    // so the coarser meshes fit the first level's skeleton.
    for (int l = 0; l < kLods; ++l) {
      core::Result<anim::Character> made = anim::make_character({.seed = 11 + k,
                                                                 .joint_count = 24,
                                                                 .vertex_count = kLodVertices[l],
                                                                 .height = height_m,
                                                                 .walk_duration = 1.0f});
      if (!made) {
        std::fprintf(stderr, "crowd: %s\n", made.message().c_str());
        return 1;
      }
      anim::Character& c = made.value();
      core::Result<render::Mesh> mesh = skin_triangles(c, static_cast<int>(k));
      if (!mesh) {
        std::fprintf(stderr, "crowd: %s\n", mesh.message().c_str());
        return 1;
      }
      if (l == 0) {
        kind.skeleton = animation.add_skeleton(std::move(c.skeleton)).value();
        kind.walk = animation.add_clip(std::move(c.walk), kind.skeleton).value();
      }
      kind.mesh[l] = animation.add_mesh(std::move(c.mesh), kind.skeleton).value();
      kind.look[l] = r.add_mesh(std::move(mesh).value()).value();
    }
    kind.material =
        r.add_material({.name = "skin", .color = colours[k], .cull_back = false}).value();
    kind.stride = 0.75f * height_m;
    kinds.push_back(kind);
  }

  // An imported character: one more kind, for every fifth character.
  if (!model.empty()) {
    core::Result<anim::ImportedAsset> imported = anim::import_asset(model);
    if (!imported) {
      std::fprintf(stderr, "crowd: --model %s: %s\n", model.c_str(), imported.message().c_str());
      return 1;
    }
    anim::ImportedAsset& a = imported.value();
    if (a.mesh.vertex_count() == 0 || a.indices.empty() || a.clips.empty()) {
      std::fprintf(stderr, "crowd: --model %s: %s\n", model.c_str(),
                   a.clips.empty() ? "has no animation to play" : "has no skinned mesh");
      return 1;
    }
    // Stood 1.8 m tall with its feet on the ground, centred on the walker.
    glm::vec3 lo(1e30f), hi(-1e30f);
    std::vector<render::Vertex> vertices(a.mesh.vertex_count());
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      vertices[i].position = {a.mesh.px[i], a.mesh.py[i], a.mesh.pz[i]};
      if (!a.mesh.nx.empty()) vertices[i].normal = {a.mesh.nx[i], a.mesh.ny[i], a.mesh.nz[i]};
      lo = glm::min(lo, vertices[i].position);
      hi = glm::max(hi, vertices[i].position);
    }
    const float scale = 1.8f / std::max(hi.y - lo.y, 1e-6f);
    const glm::mat4 fit =
        glm::translate(glm::scale(glm::mat4(1.0f), glm::vec3(scale)),
                       -glm::vec3(0.5f * (lo.x + hi.x), lo.y, 0.5f * (lo.z + hi.z)));
    core::Result<render::Mesh> mesh = render::Mesh::create(
        {.name = model,
         .vertices = vertices,
         .indices = std::vector<std::uint32_t>(a.indices.begin(), a.indices.end())});
    if (!mesh) {
      std::fprintf(stderr, "crowd: --model %s: %s\n", model.c_str(), mesh.message().c_str());
      return 1;
    }
    Kind kind{};
    std::printf("crowd: %s: %d joints, %zu vertices, %zu triangles, playing \"%s\" (%.2f s)\n",
                model.c_str(), a.skeleton.joint_count(), a.mesh.vertex_count(),
                a.indices.size() / 3, a.clips[0].name().c_str(),
                static_cast<double>(a.clips[0].duration()));
    kind.skeleton = animation.add_skeleton(std::move(a.skeleton)).value();
    kind.walk = animation.add_clip(std::move(a.clips[0]), kind.skeleton).value();
    const anim::MeshId skin = animation.add_mesh(std::move(a.mesh), kind.skeleton).value();
    const render::MeshId look = r.add_mesh(std::move(mesh).value()).value();
    for (int l = 0; l < kLods; ++l) kind.mesh[l] = skin, kind.look[l] = look;
    kind.material =
        r.add_material({.name = "imported", .color = {0.8f, 0.8f, 0.85f, 1}, .cull_back = false})
            .value();
    kind.stride = 1.0f;  // its clip plays at its own speed
    kind.fit = fit;
    kinds.push_back(kind);
  }

  // The crowd on a square grid of cells, one circle per cell, and the ground under it.
  const auto side =
      static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(characters))));
  const float field = static_cast<float>(side) * kCellSide;
  for (std::uint32_t i = 0; i < characters; ++i) {
    // With --model, every fifth character is the imported one (the last kind).
    const Kind& kind = kinds.size() > 4 && i % 5 == 4 ? kinds[4] : kinds[i % 4];
    const glm::vec2 cell{(static_cast<float>(i % side) + 0.5f) * kCellSide - 0.5f * field,
                         (static_cast<float>(i / side) + 0.5f) * kCellSide - 0.5f * field};
    const float radius = 0.8f + unit(i, 1);
    const float speed = 0.9f + 0.6f * unit(i, 2);  // metres per second
    const float direction = unit(i, 3) < 0.5f ? 1.0f : -1.0f;
    const core::Entity e = world.create();
    world.add<Walker>(e, Walker{.centre = cell + 0.3f * glm::vec2(unit(i, 4) - 0.5f, unit(i, 5)),
                                .radius = radius,
                                .angle = kTau * unit(i, 6),
                                .rate = direction * speed / radius});
    anim::AnimationPlayer player{.skeleton = kind.skeleton};
    player.layers[0] = {.clip = kind.walk, .time = unit(i, 7), .speed = speed / kind.stride};
    world.add<anim::AnimationPlayer>(e, player);
    world.add<anim::SkinnedMeshInstance>(e, anim::SkinnedMeshInstance{kind.mesh[0]});
    world.add<anim::AnimationLod>(e);
    world.add<core::Transform>(e);
    world.add<core::WorldTransform>(e);
    world.add<Look>(e, Look{.mesh = kind.look[0],
                            .material = kind.material,
                            .slot = i,
                            .fit = kind.fit,
                            .kind = static_cast<std::uint32_t>(&kind - kinds.data())});
  }
  const core::Entity ground = world.create();
  world.add<core::Transform>(ground);
  world.add<core::WorldTransform>(ground);
  world.add<render::MeshInstance>(
      ground,
      render::MeshInstance{
          .mesh = r.add_mesh(render::make_plane(field + 8.0f)).value(),
          .material =
              r.add_material({.name = "ground", .color = {0.35f, 0.4f, 0.35f, 1}}).value()});
  // The camera starts south of the crowd, above it, looking at its middle.
  const FlyCamera start{.position = {0.0f, 3.0f + 0.2f * field, 0.5f * field + 6.0f},
                        .pitch = -std::atan2(3.0f + 0.2f * field, 0.5f * field + 6.0f)};
  camera = world.create();
  world.add<FlyCamera>(camera, start);

  // Every character walks its circle, facing the way it goes.
  engine.add_system<Walker, core::Transform>(
      "walk", [](core::StageContext& ctx, core::Entity, Walker& w, core::Transform& t) {
        const float dt = ctx.dt();
        w.angle = std::fmod(w.angle + w.rate * dt, kTau);
        w.walked += std::abs(w.rate) * w.radius * dt;
        t.set_translation({w.centre.x + w.radius * std::sin(w.angle), 0.0f,
                           w.centre.y + w.radius * std::cos(w.angle)});
        const float heading = w.angle + (w.rate >= 0.0f ? 0.25f : -0.25f) * kTau;
        t.set_rotation(glm::angleAxis(heading, glm::vec3(0, 1, 0)));
      });
  // The camera flies with the actions, and looks with the mouse and right stick in a live run.
  platform::Devices* look_devices = analogue_look ? devices.get() : nullptr;
  engine.add_system<FlyCamera>("fly", [controls, look_devices](core::StageContext& ctx,
                                                               core::Entity, FlyCamera& c) {
    const core::Input& in = *ctx.world().resource<core::Input>();
    const float dt = ctx.dt();
    c.yaw += kTurnRate * dt * in.axis(controls.turn_left, controls.turn_right);
    c.pitch += kTurnRate * dt * in.axis(controls.look_up, controls.look_down);
    if (look_devices != nullptr) {
      const platform::StickValue stick = look_devices->stick(0, platform::Stick::Right);
      c.yaw -= kMouseLook * static_cast<float>(look_devices->mouse_dx()) + kLookRate * dt * stick.x;
      c.pitch -=
          kMouseLook * static_cast<float>(look_devices->mouse_dy()) + kLookRate * dt * stick.y;
    }
    c.pitch = std::clamp(c.pitch, -kMaxPitch, kMaxPitch);
    const glm::vec3 right(std::cos(c.yaw), 0.0f, -std::sin(c.yaw));
    c.position += kFlySpeed * dt *
                  (in.axis(controls.forward, controls.back) * facing(c.yaw, c.pitch) +
                   in.axis(controls.right, controls.left) * right +
                   in.axis(controls.up, controls.down) * glm::vec3(0, 1, 0));
  });
  // Levels of detail from each character's height on screen as the camera now sees it.
  engine.add_stage(
      {.name = "lod",
       .phase = core::Phase::Gameplay,
       .access = core::Access{}
                     .read<FlyCamera, core::Transform>()
                     .write<Look, anim::SkinnedMeshInstance, anim::AnimationLod>(),
       .after = {"walk", "fly"},
       .run = [&kinds, camera, aspect, height](core::StageContext& ctx) {
         const render::Camera eye = camera_view(*ctx.world().get<FlyCamera>(camera), aspect);
         ctx.world()
             .query<const core::Transform, Look, anim::SkinnedMeshInstance, anim::AnimationLod>()
             .each([&](core::Entity, const core::Transform& t, Look& look,
                       anim::SkinnedMeshInstance& skin, anim::AnimationLod& rate) {
               const float pixels = render::screen_size(
                   eye, height, t.translation() + glm::vec3(0.0f, 0.9f, 0.0f), 1.8f);
               look.lod =
                   render::lod_for_size(pixels, static_cast<std::uint8_t>(look.lod), kLodBelow);
               const Kind& kind = kinds[look.kind];
               look.mesh = kind.look[look.lod];
               skin.mesh = kind.mesh[look.lod];
               rate.every = kLodUpdateEvery[look.lod];
             });
       }});
  engine.add_stage(
      {.name = "quit", .phase = core::Phase::Gameplay, .run = [&](core::StageContext& ctx) {
         if (ctx.world().resource<core::Input>()->pressed(controls.quit))
           ctx.engine().request_quit();
       }});

  const render::Image& image = r.image();
  const platform::RunStats stats =
      platform::run(engine, window.get(), image,
                    {.max_frames = frames,
                     .target_fps = headless ? 0.0 : 60.0,
                     .fixed_delta_ns = live ? 0 : core::kNsPerSecond / 60});

  if (!session.finish("crowd")) return 1;
  const bool image_ok = !capture || samples::check_golden(image, golden, "crowd");

  // The outcome: every character walked (at its speed, for the time that passed), all were
  // skinned and drawn, and a scripted camera ended where the script puts it.
  float least_walked = 1e30f;
  world.query<const Walker>().each(
      [&](core::Entity, const Walker& w) { least_walked = std::min(least_walked, w.walked); });
  const float seconds = static_cast<float>(engine.tick()) / 60.0f;
  const FlyCamera& flown = *world.get<FlyCamera>(camera);
  const FlyCamera expected = expected_after_flight(start);
  std::printf(
      "crowd: driver %s, %s, %u characters (%u skinned, %u draws visible), least walked "
      "%.2f m, camera at (%.2f, %.2f, %.2f) yaw %.3f\n",
      window->driver(), jobs::to_string(engine.mode()), characters, animation.stats().skinned,
      r.stats().draws_visible, static_cast<double>(least_walked),
      static_cast<double>(flown.position.x), static_cast<double>(flown.position.y),
      static_cast<double>(flown.position.z), static_cast<double>(flown.yaw));
  std::uint32_t at_level[kLods] = {};
  world.query<const Look>().each([&](core::Entity, const Look& l) { ++at_level[l.lod]; });
  std::printf(
      "crowd: levels of detail at the end: %u full, %u at 1/4, %u at 1/8 (%u updated in "
      "the last frame)\n",
      at_level[0], at_level[1], at_level[2], animation.stats().updated);
  std::printf("frames=%llu median_ms=%.3f p99_ms=%.3f hash=%016llx\n",
              static_cast<unsigned long long>(stats.frames), stats.median_ms, stats.p99_ms,
              static_cast<unsigned long long>(world.state_hash()));

  bool ok = image_ok && stats.frames > 0;
  if (stats.frames >= 30 && !(least_walked > 0.8f * seconds)) {
    std::fprintf(stderr, "crowd: a character walked only %.2f m in %.2f s\n",
                 static_cast<double>(least_walked), static_cast<double>(seconds));
    ok = false;
  }
  if (stats.frames >= 2 && animation.stats().skinned != characters) {
    std::fprintf(stderr, "crowd: %u of %u characters were skinned\n", animation.stats().skinned,
                 characters);
    ok = false;
  }
  if (scripted && stats.frames >= kScriptEnd &&
      !(glm::distance(flown.position, expected.position) < 0.05f &&
        std::abs(flown.yaw - expected.yaw) < 1e-3f)) {
    std::fprintf(stderr, "crowd: the scripted flight should end at (%.2f, %.2f, %.2f) yaw %.3f\n",
                 static_cast<double>(expected.position.x), static_cast<double>(expected.position.y),
                 static_cast<double>(expected.position.z), static_cast<double>(expected.yaw));
    ok = false;
  }
  return ok ? 0 : 1;
}
