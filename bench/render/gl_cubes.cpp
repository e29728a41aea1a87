#include "gl_cubes.h"

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <GL/glcorearb.h>
#include <SDL.h>

namespace spindle::cubes {

namespace {

// The GL functions this file calls, loaded through SDL_GL_GetProcAddress (no link-time GL).
#define SPINDLE_GL_FUNCTIONS(X)                                  \
  X(PFNGLGETSTRINGPROC, glGetString)                             \
  X(PFNGLGETERRORPROC, glGetError)                               \
  X(PFNGLVIEWPORTPROC, glViewport)                               \
  X(PFNGLCLEARCOLORPROC, glClearColor)                           \
  X(PFNGLCLEARPROC, glClear)                                     \
  X(PFNGLENABLEPROC, glEnable)                                   \
  X(PFNGLDISABLEPROC, glDisable)                                 \
  X(PFNGLDEPTHFUNCPROC, glDepthFunc)                             \
  X(PFNGLCULLFACEPROC, glCullFace)                               \
  X(PFNGLFRONTFACEPROC, glFrontFace)                             \
  X(PFNGLFINISHPROC, glFinish)                                   \
  X(PFNGLREADPIXELSPROC, glReadPixels)                           \
  X(PFNGLPIXELSTOREIPROC, glPixelStorei)                         \
  X(PFNGLGENBUFFERSPROC, glGenBuffers)                           \
  X(PFNGLDELETEBUFFERSPROC, glDeleteBuffers)                     \
  X(PFNGLBINDBUFFERPROC, glBindBuffer)                           \
  X(PFNGLBUFFERDATAPROC, glBufferData)                           \
  X(PFNGLGENVERTEXARRAYSPROC, glGenVertexArrays)                 \
  X(PFNGLDELETEVERTEXARRAYSPROC, glDeleteVertexArrays)           \
  X(PFNGLBINDVERTEXARRAYPROC, glBindVertexArray)                 \
  X(PFNGLENABLEVERTEXATTRIBARRAYPROC, glEnableVertexAttribArray) \
  X(PFNGLVERTEXATTRIBPOINTERPROC, glVertexAttribPointer)         \
  X(PFNGLVERTEXATTRIBDIVISORPROC, glVertexAttribDivisor)         \
  X(PFNGLCREATESHADERPROC, glCreateShader)                       \
  X(PFNGLDELETESHADERPROC, glDeleteShader)                       \
  X(PFNGLSHADERSOURCEPROC, glShaderSource)                       \
  X(PFNGLCOMPILESHADERPROC, glCompileShader)                     \
  X(PFNGLGETSHADERIVPROC, glGetShaderiv)                         \
  X(PFNGLGETSHADERINFOLOGPROC, glGetShaderInfoLog)               \
  X(PFNGLCREATEPROGRAMPROC, glCreateProgram)                     \
  X(PFNGLDELETEPROGRAMPROC, glDeleteProgram)                     \
  X(PFNGLATTACHSHADERPROC, glAttachShader)                       \
  X(PFNGLLINKPROGRAMPROC, glLinkProgram)                         \
  X(PFNGLGETPROGRAMIVPROC, glGetProgramiv)                       \
  X(PFNGLGETPROGRAMINFOLOGPROC, glGetProgramInfoLog)             \
  X(PFNGLUSEPROGRAMPROC, glUseProgram)                           \
  X(PFNGLGETUNIFORMLOCATIONPROC, glGetUniformLocation)           \
  X(PFNGLUNIFORM1FPROC, glUniform1f)                             \
  X(PFNGLUNIFORM1IPROC, glUniform1i)                             \
  X(PFNGLUNIFORM3FPROC, glUniform3f)                             \
  X(PFNGLUNIFORMMATRIX4FVPROC, glUniformMatrix4fv)               \
  X(PFNGLGENTEXTURESPROC, glGenTextures)                         \
  X(PFNGLDELETETEXTURESPROC, glDeleteTextures)                   \
  X(PFNGLBINDTEXTUREPROC, glBindTexture)                         \
  X(PFNGLACTIVETEXTUREPROC, glActiveTexture)                     \
  X(PFNGLTEXIMAGE2DPROC, glTexImage2D)                           \
  X(PFNGLTEXPARAMETERIPROC, glTexParameteri)                     \
  X(PFNGLDRAWELEMENTSINSTANCEDPROC, glDrawElementsInstanced)     \
  X(PFNGLGENQUERIESPROC, glGenQueries)                           \
  X(PFNGLDELETEQUERIESPROC, glDeleteQueries)                     \
  X(PFNGLBEGINQUERYPROC, glBeginQuery)                           \
  X(PFNGLENDQUERYPROC, glEndQuery)                               \
  X(PFNGLGETQUERYOBJECTUI64VPROC, glGetQueryObjectui64v)

struct Gl {
#define SPINDLE_GL_MEMBER(type, name) type name = nullptr;
  SPINDLE_GL_FUNCTIONS(SPINDLE_GL_MEMBER)
#undef SPINDLE_GL_MEMBER

  // Empty on success, else the first function SDL could not find.
  std::string load() {
#define SPINDLE_GL_LOAD(type, name)                            \
  name = reinterpret_cast<type>(SDL_GL_GetProcAddress(#name)); \
  if (name == nullptr) return #name;
    SPINDLE_GL_FUNCTIONS(SPINDLE_GL_LOAD)
#undef SPINDLE_GL_LOAD
    return {};
  }
};

// The anchor's vertex shader: a = uTime + w; R = Rx(a) * Ry(a) from GLSL's column-major mat3
// constructors; world = R*pos + offset; Gouraud colour = 0.15 + 0.85*max(dot(R*n, L), 0).
constexpr const char* kVertexShader = R"(#version 330 core
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aNormal;
layout(location = 2) in vec2 aUv;
layout(location = 3) in vec4 aInstance;  // offset.xyz, phase
uniform mat4 uVP;
uniform float uTime;
uniform vec3 uLight;
out vec2 vUv;
out vec3 vColor;
void main() {
  float a = uTime + aInstance.w;
  float c = cos(a);
  float s = sin(a);
  mat3 ry = mat3(c, 0.0, -s, 0.0, 1.0, 0.0, s, 0.0, c);
  mat3 rx = mat3(1.0, 0.0, 0.0, 0.0, c, s, 0.0, -s, c);
  mat3 R = rx * ry;
  vec3 world = R * aPos + aInstance.xyz;
  vec3 n = R * aNormal;
  vColor = vec3(0.15 + 0.85 * max(dot(n, uLight), 0.0));
  vUv = aUv;
  gl_Position = uVP * vec4(world, 1.0);
}
)";

constexpr const char* kFragmentShader = R"(#version 330 core
in vec2 vUv;
in vec3 vColor;
uniform sampler2D uTex;
out vec4 fragColor;
void main() {
  fragColor = vec4(texture(uTex, vUv).rgb * vColor, 1.0);
}
)";

std::string gl_string(const Gl& gl, GLenum name) {
  const GLubyte* s = gl.glGetString(name);
  return s != nullptr ? reinterpret_cast<const char*>(s) : std::string("(null)");
}

}  // namespace

struct GlCubes::Impl {
  SDL_Window* window = nullptr;
  SDL_GLContext context = nullptr;
  bool sdl_initialised = false;
  Gl gl;
  GLuint program = 0, vao = 0, vbo = 0, ibo = 0, instance_vbo = 0, texture = 0, query = 0;
  GLint u_time = -1;
  int width = 0, height = 0;
  GLsizei instances = 0;

  ~Impl() {
    if (context != nullptr) {
      if (query != 0) gl.glDeleteQueries(1, &query);
      if (texture != 0) gl.glDeleteTextures(1, &texture);
      const GLuint buffers[] = {vbo, ibo, instance_vbo};
      gl.glDeleteBuffers(3, buffers);
      if (vao != 0) gl.glDeleteVertexArrays(1, &vao);
      if (program != 0) gl.glDeleteProgram(program);
      SDL_GL_DeleteContext(context);
    }
    if (window != nullptr) SDL_DestroyWindow(window);
    if (sdl_initialised) SDL_QuitSubSystem(SDL_INIT_VIDEO);
  }

  GLuint compile(GLenum type, const char* source, std::string& error) {
    const GLuint shader = gl.glCreateShader(type);
    gl.glShaderSource(shader, 1, &source, nullptr);
    gl.glCompileShader(shader);
    GLint ok = 0;
    gl.glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (ok == GL_FALSE) {
      char log[2048] = {};
      gl.glGetShaderInfoLog(shader, sizeof log, nullptr, log);
      error = std::string(type == GL_VERTEX_SHADER ? "vertex" : "fragment") +
              " shader does not compile: " + log;
      gl.glDeleteShader(shader);
      return 0;
    }
    return shader;
  }

  bool build_program(std::string& error) {
    const GLuint vs = compile(GL_VERTEX_SHADER, kVertexShader, error);
    if (vs == 0) return false;
    const GLuint fs = compile(GL_FRAGMENT_SHADER, kFragmentShader, error);
    if (fs == 0) {
      gl.glDeleteShader(vs);
      return false;
    }
    program = gl.glCreateProgram();
    gl.glAttachShader(program, vs);
    gl.glAttachShader(program, fs);
    gl.glLinkProgram(program);
    gl.glDeleteShader(vs);
    gl.glDeleteShader(fs);
    GLint ok = 0;
    gl.glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (ok == GL_FALSE) {
      char log[2048] = {};
      gl.glGetProgramInfoLog(program, sizeof log, nullptr, log);
      error = std::string("shader program does not link: ") + log;
      return false;
    }
    return true;
  }

  bool build_scene(const Scene& scene, std::string& error) {
    width = scene.width;
    height = scene.height;
    instances = static_cast<GLsizei>(scene.count);
    if (!build_program(error)) return false;
    gl.glUseProgram(program);
    const glm::mat4 vp = scene.camera.view_projection();
    gl.glUniformMatrix4fv(gl.glGetUniformLocation(program, "uVP"), 1, GL_FALSE, &vp[0][0]);
    const glm::vec3 light = light_direction();
    gl.glUniform3f(gl.glGetUniformLocation(program, "uLight"), light.x, light.y, light.z);
    gl.glUniform1i(gl.glGetUniformLocation(program, "uTex"), 0);
    u_time = gl.glGetUniformLocation(program, "uTime");

    gl.glGenVertexArrays(1, &vao);
    gl.glBindVertexArray(vao);
    gl.glGenBuffers(1, &vbo);
    gl.glBindBuffer(GL_ARRAY_BUFFER, vbo);
    gl.glBufferData(GL_ARRAY_BUFFER, sizeof(CubeVertex) * kCubeVertexCount, cube_vertices().data(),
                    GL_STATIC_DRAW);
    constexpr GLsizei kStride = sizeof(CubeVertex);
    gl.glEnableVertexAttribArray(0);
    gl.glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, kStride,
                             reinterpret_cast<const void*>(offsetof(CubeVertex, position)));
    gl.glEnableVertexAttribArray(1);
    gl.glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, kStride,
                             reinterpret_cast<const void*>(offsetof(CubeVertex, normal)));
    gl.glEnableVertexAttribArray(2);
    gl.glVertexAttribPointer(2, 2, GL_FLOAT, GL_FALSE, kStride,
                             reinterpret_cast<const void*>(offsetof(CubeVertex, uv)));

    std::vector<glm::vec4> per_instance(scene.count);
    for (std::uint32_t i = 0; i < scene.count; ++i)
      per_instance[i] = glm::vec4(scene.offsets[i], scene.phases[i]);
    gl.glGenBuffers(1, &instance_vbo);
    gl.glBindBuffer(GL_ARRAY_BUFFER, instance_vbo);
    gl.glBufferData(GL_ARRAY_BUFFER,
                    static_cast<GLsizeiptr>(per_instance.size() * sizeof(glm::vec4)),
                    per_instance.data(), GL_STATIC_DRAW);
    gl.glEnableVertexAttribArray(3);
    gl.glVertexAttribPointer(3, 4, GL_FLOAT, GL_FALSE, sizeof(glm::vec4), nullptr);
    gl.glVertexAttribDivisor(3, 1);

    gl.glGenBuffers(1, &ibo);
    gl.glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ibo);  // part of the VAO's state
    gl.glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof(std::uint16_t) * kCubeIndexCount,
                    cube_indices().data(), GL_STATIC_DRAW);

    const std::vector<std::uint8_t> texels = checker_texture();
    gl.glActiveTexture(GL_TEXTURE0);
    gl.glGenTextures(1, &texture);
    gl.glBindTexture(GL_TEXTURE_2D, texture);
    gl.glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    gl.glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, kTextureSize, kTextureSize, 0, GL_RGBA,
                    GL_UNSIGNED_BYTE, texels.data());
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);  // no mipmaps
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_REPEAT);
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_REPEAT);
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);

    gl.glViewport(0, 0, width, height);
    gl.glClearColor(kClearColor.r, kClearColor.g, kClearColor.b, 1.0f);
    gl.glEnable(GL_DEPTH_TEST);
    gl.glDepthFunc(GL_LESS);
    gl.glEnable(GL_CULL_FACE);
    gl.glCullFace(GL_BACK);
    gl.glFrontFace(GL_CCW);
    gl.glDisable(GL_MULTISAMPLE);
    gl.glGenQueries(1, &query);

    if (const GLenum e = gl.glGetError(); e != GL_NO_ERROR) {
      error = "GL error " + std::to_string(e) + " while creating the scene's resources";
      return false;
    }
    return true;
  }

  void draw(std::uint32_t frame) {
    gl.glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    gl.glUniform1f(u_time, time_of_frame(frame));
    gl.glDrawElementsInstanced(GL_TRIANGLES, kCubeIndexCount, GL_UNSIGNED_SHORT, nullptr,
                               instances);
  }
};

GlCubes::GlCubes(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GlCubes::~GlCubes() = default;

std::unique_ptr<GlCubes> GlCubes::create(const Scene& scene, unsigned lp_threads,
                                         std::string& error) {
  setenv("SDL_VIDEODRIVER", "offscreen", 1);  // headless: no display, EGL only
  setenv("LP_NUM_THREADS", std::to_string(lp_threads).c_str(), 0);
  auto impl = std::make_unique<Impl>();
  if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
    error = std::string("SDL_Init(video, offscreen driver): ") + SDL_GetError();
    return nullptr;
  }
  impl->sdl_initialised = true;
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
  SDL_GL_SetAttribute(SDL_GL_RED_SIZE, 8);
  SDL_GL_SetAttribute(SDL_GL_GREEN_SIZE, 8);
  SDL_GL_SetAttribute(SDL_GL_BLUE_SIZE, 8);
  SDL_GL_SetAttribute(SDL_GL_ALPHA_SIZE, 8);
  SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
  SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
  SDL_GL_SetAttribute(SDL_GL_MULTISAMPLEBUFFERS, 0);
  SDL_GL_SetAttribute(SDL_GL_MULTISAMPLESAMPLES, 0);
  impl->window = SDL_CreateWindow("spindle_bench_render", 0, 0, scene.width, scene.height,
                                  SDL_WINDOW_OPENGL | SDL_WINDOW_HIDDEN);
  if (impl->window == nullptr) {
    error = std::string("SDL_CreateWindow (OpenGL, offscreen/EGL): ") + SDL_GetError();
    return nullptr;
  }
  impl->context = SDL_GL_CreateContext(impl->window);
  if (impl->context == nullptr) {
    error = std::string("SDL_GL_CreateContext (GL 3.3 core): ") + SDL_GetError();
    return nullptr;
  }
  SDL_GL_SetSwapInterval(0);
  if (std::string missing = impl->gl.load(); !missing.empty()) {
    error = "SDL_GL_GetProcAddress cannot find " + missing;
    return nullptr;
  }
  if (!impl->build_scene(scene, error)) return nullptr;
  std::unique_ptr<GlCubes> out(new GlCubes(std::move(impl)));
  out->renderer_ = gl_string(out->impl_->gl, GL_RENDERER);
  out->version_ = gl_string(out->impl_->gl, GL_VERSION);
  const char* lp = std::getenv("LP_NUM_THREADS");
  out->lp_threads_ = lp != nullptr ? lp : "";
  return out;
}

double GlCubes::draw_frame(std::uint32_t frame) {
  const auto t0 = std::chrono::steady_clock::now();
  impl_->draw(frame);
  impl_->gl.glFinish();
  const auto t2 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t2 - t0).count();
}

GlImage GlCubes::read_frame(std::uint32_t frame, std::string& error) {
  Gl& gl = impl_->gl;
  GlImage out;
  out.width = impl_->width;
  out.height = impl_->height;
  gl.glBeginQuery(GL_SAMPLES_PASSED, impl_->query);
  impl_->draw(frame);
  gl.glEndQuery(GL_SAMPLES_PASSED);
  GLuint64 samples = 0;
  gl.glGetQueryObjectui64v(impl_->query, GL_QUERY_RESULT, &samples);
  out.samples_passed = samples;

  const std::size_t row_bytes = static_cast<std::size_t>(out.width) * 4;
  std::vector<std::uint8_t> bottom_up(row_bytes * static_cast<std::size_t>(out.height));
  gl.glPixelStorei(GL_PACK_ALIGNMENT, 1);
  gl.glReadPixels(0, 0, out.width, out.height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
  out.rgba.resize(bottom_up.size());
  for (int y = 0; y < out.height; ++y)  // GL's row 0 is the bottom one
    std::memcpy(&out.rgba[static_cast<std::size_t>(y) * row_bytes],
                &bottom_up[static_cast<std::size_t>(out.height - 1 - y) * row_bytes], row_bytes);
  if (const GLenum e = gl.glGetError(); e != GL_NO_ERROR)
    error = "glGetError = " + std::to_string(e) + " after the read-back frame";
  return out;
}

}  // namespace spindle::cubes
