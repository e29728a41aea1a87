// Camera matrices and the view frustum as six normalised planes.
//
// Usage:
//
//   spindle::render::Camera cam;
//   cam.position = {0, 2, 10};
//   cam.target = {0, 0, 0};
//   cam.aspect = 1280.0f / 720.0f;
//   glm::mat4 vp = cam.view_projection();                      // projection() * view()
//   auto frustum = spindle::render::Frustum::from_matrix(vp);
//   if (frustum.intersects_sphere(center, radius)) draw(...);  // conservative: may keep a few
//                                                              // spheres near frustum corners
//
// Conventions are GLM's defaults: right-handed view space looking down -z, OpenGL clip space
// (z in [-w, w]). A plane (n, d) keeps the points p with dot(n, p) + d >= 0; |n| == 1, so the
// value is a signed distance and a sphere is outside when it is below -radius for any plane.
#pragma once

#include <glm/glm.hpp>

namespace spindle::render {

struct Camera {
  glm::vec3 position{0.0f, 0.0f, 0.0f};
  glm::vec3 target{0.0f, 0.0f, -1.0f};
  glm::vec3 up{0.0f, 1.0f, 0.0f};
  float fov_y_radians = 1.0471976f;  // 60 degrees
  float aspect = 16.0f / 9.0f;       // width / height
  float near_plane = 0.1f;
  float far_plane = 1000.0f;

  glm::mat4 view() const;             // world -> view (lookAt)
  glm::mat4 projection() const;       // view -> clip (perspective)
  glm::mat4 view_projection() const;  // projection() * view()
};

struct Frustum {
  enum Plane { Left, Right, Bottom, Top, Near, Far };

  // planes[Plane]: xyz the inward unit normal, w the offset.
  glm::vec4 planes[6];

  // Gribb-Hartmann: each plane is row 3 of the matrix plus or minus row 0, 1 or 2, normalised.
  static Frustum from_matrix(const glm::mat4& view_proj);
  // False only when the sphere lies wholly outside one plane.
  bool intersects_sphere(glm::vec3 center, float radius) const;
};

}  // namespace spindle::render
