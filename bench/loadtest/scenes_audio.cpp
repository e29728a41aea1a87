// orchestra  N looping 3D voices (the comparison's test sound at pitches 0.8..1.2) circling a
//            listener at distances 1..50, with doppler from their motion, plus one streamed
//            music track on its own bus with a low-pass: the audio stage carries the frame.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <vector>

#include <spindle/gameplay/transform.h>
#include <spindle/render/mesh.h>
#include <glm/gtc/matrix_transform.hpp>

#include "scene_common.h"

namespace spindle::loadtest {

namespace {

// Speed along the circle (rad/s) and radius of each emitter: fixed by its index and the seed.
struct Orbit {
  float radius = 1;
  float speed = 0;
  float angle = 0;
  float height = 0;
};

glm::vec3 orbit_position(const Orbit& o) {
  return {o.radius * std::cos(o.angle), o.height, o.radius * std::sin(o.angle)};
}

// Ten seconds of a slow chord, written once per process to the temp folder and streamed.
std::string music_file() {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "spindle_orchestra_music.wav";
  if (std::filesystem::exists(path)) return path.string();
  constexpr std::uint32_t kRate = 44100, kFrames = 10 * kRate;
  std::vector<float> s(2 * kFrames);
  for (std::uint32_t i = 0; i < kFrames; ++i) {
    const double t = static_cast<double>(i) / kRate;
    const double env = 0.5 + 0.5 * std::sin(2 * std::numbers::pi * 0.2 * t);
    for (int c = 0; c < 2; ++c) {
      const double f = c == 0 ? 1.0 : 1.003;  // a little width
      s[2 * i + c] = static_cast<float>(0.15 * env *
                                        (std::sin(2 * std::numbers::pi * 110 * f * t) +
                                         std::sin(2 * std::numbers::pi * 138.6 * f * t) +
                                         std::sin(2 * std::numbers::pi * 164.8 * f * t)));
    }
  }
  const auto bytes = audio::encode_wav(s, 2, kRate, audio::WavFormat::Pcm16);
  const std::filesystem::path tmp = path.string() + "." + std::to_string(::getpid());
  std::ofstream(tmp, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  std::filesystem::rename(tmp, path);  // atomic: concurrent runs never read half a file
  return path.string();
}

void setup_orchestra(core::Engine& engine, const SceneParams& p) {
  const std::uint32_t n = p.objects;
  core::World& w = engine.world();
  w.register_component<Orbit>("orbit");
  SceneAudio& a = add_scene_audio(
      engine, p, glm::vec3(0.0f), 0,
      {.max_voices = n + 16, .max_mixed = n + 16, .block_frames = 1024, .max_streams = 2});
  const audio::BusId music_bus =
      a.plugin->mixer()
          .add_bus({.name = "music",
                    .volume = 0.5f,
                    .filter = {.type = audio::BiquadDesc::Type::LowPass, .frequency = 4000}})
          .value();
  if (auto music = a.plugin->mixer().add_stream(music_file())) {
    a.plugin->mixer().play(music.value(), {.bus = music_bus, .loop = true});
  }
  const bool draw = p.param("draw") != 0;
  render::MeshId dart = 0;
  std::vector<render::MaterialId> colours;
  if (draw) {
    render::Renderer& r =
        add_scene_renderer(engine, p, overview_camera(110.0f, 0.8f, 0.6f), n + 16);
    dart = r.add_mesh(render::make_dart(1.2f)).value();
    colours = add_palette(r, 8);
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    const core::Entity e = w.create();
    const Orbit o{.radius = 1.0f + 49.0f * static_cast<float>(i % 50) / 49.0f,
                  .speed = (scene_unit(p.seed, i, 1) - 0.5f) * 1.2f,
                  .angle = 2.39996f * static_cast<float>(i),  // the golden angle
                  .height = (scene_unit(p.seed, i, 2) - 0.5f) * 4.0f};
    w.add<Orbit>(e, o);
    w.add<core::WorldTransform>(
        e, core::WorldTransform{.matrix = glm::translate(glm::mat4(1), orbit_position(o))});
    w.add<audio::AudioEmitter>(
        e, audio::AudioEmitter{
               .sound = a.tone,
               .volume = std::clamp(static_cast<float>((i * 37) % 100) / 100.0f, 0.05f, 0.95f),
               .pitch = 0.8f + 0.4f * scene_unit(p.seed, i, 3),
               .start_frame =
                   (std::uint64_t{i} * 27253) % 44100});  // golden-ratio steps: no two in phase
    if (draw)
      w.add<render::MeshInstance>(e,
                                  render::MeshInstance{.mesh = dart, .material = colours[i % 8]});
  }
  // Emitters circle the listener; their velocity (for doppler) is the orbit's tangent.
  engine.add_system<Orbit, core::WorldTransform, audio::AudioEmitter>(
      "orbit", [](core::StageContext& ctx, core::Entity, Orbit& o, core::WorldTransform& t,
                  audio::AudioEmitter& e) {
        o.angle += o.speed * ctx.dt();
        t.matrix = glm::translate(glm::mat4(1), orbit_position(o));
        e.velocity = o.speed * o.radius * glm::vec3(-std::sin(o.angle), 0.0f, std::cos(o.angle));
      });
}

}  // namespace

void register_audio_scenes() {
  register_scene({.name = "orchestra",
                  .description = "N looping 3D voices circling a listener (pitch, doppler), "
                                 "plus streamed music: the audio mixing stage",
                  .objects = {1, 20'000},
                  .setup = setup_orchestra,
                  // With the darts drawn, dynamic mode runs the mix beside the render stages (the
                  // frame gains, the mixing stage keeps one worker); --draw 0 leaves the workers
                  // to the mix, which is how its own scaling is measured.
                  .params = {{"draw", "1: draw each voice as a dart; 0: audio only", 1, 0, 1}},
                  .default_objects = {100, 1000, 2000, 5000, 10000, 20000}});
}

}  // namespace spindle::loadtest
