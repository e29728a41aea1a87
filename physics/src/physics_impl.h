// Physics::Impl: the Bullet side of the physics world (shapes, one Bullet world per region, one
// slot per entity index), shared by the files of each concept. Private: a game never sees
// Bullet.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <btBulletDynamicsCommon.h>
#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/base/mutex.h>
#include <spindle/physics/world.h>

#include "contact_events.h"

namespace spindle::physics {

struct Physics::Impl {
  struct Shape {
    ShapeType type;
    std::unique_ptr<btCollisionShape> shape;
    // Triangle meshes: the data Bullet's mesh interface points into.
    std::vector<float> vertices;
    std::vector<int> indices;
    std::unique_ptr<btTriangleIndexVertexArray> mesh;
  };
  struct Region {
    std::unique_ptr<btDefaultCollisionConfiguration> config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    std::unique_ptr<btDbvtBroadphase> broadphase;
    std::unique_ptr<btSequentialImpulseConstraintSolver> solver;
    std::unique_ptr<btDiscreteDynamicsWorld> world;
    std::vector<std::uint32_t> forced;     // bodies with a force or torque this step
    std::vector<std::uint32_t> kinematic;  // kinematic bodies moving this step
    std::vector<std::uint32_t> leaving;    // sync: bodies to remove, in live order
    std::vector<std::uint32_t> joining;    // sync: bodies to add, in entity-index order
    std::vector<Contact> contacts;         // touching pairs after the step
  };
  struct Slot {
    std::unique_ptr<btRigidBody> body;
    std::vector<std::unique_ptr<btRigidBody>> copies;  // a static body in regions 1..R-1
    std::uint32_t generation = 0;
    std::uint32_t region = 0;
    bool live = false;
    bool rejected = false;          // this generation failed validation (logged once)
    bool removing = false;          // scratch of sync: leaves this step
    bool moving = false;            // kinematic with a new target this step
    std::uint32_t next_region = 0;  // scratch of migrate_bodies()
    BodyType type = BodyType::Dynamic;
    std::uint32_t group = 1, mask = 0xffffffffu;  // the filter it was created with
    glm::vec3 force{0.0f}, torque{0.0f};
    btTransform kinematic_from, kinematic_to;  // a moving kinematic body's path this step
    glm::vec3 last_position{0.0f};             // what writeback put in the Transform
    glm::quat last_rotation{1.0f, 0.0f, 0.0f, 0.0f};
  };

  std::vector<Shape> shapes;
  std::vector<Region> regions;
  std::vector<Slot> slots;           // by entity index
  std::vector<std::uint32_t> live;   // entity indices with bodies, in creation order
  std::vector<std::uint32_t> fresh;  // scratch: new bodies of this sync
  ContactEvents contact_events;      // the last step's touching pairs; events from the diff
  mutable core::Mutex query_lock;

  void add_to_region(btRigidBody* body, std::uint32_t region, const Slot& slot) {
    regions[region].world->addRigidBody(body, static_cast<int>(slot.group),
                                        static_cast<int>(slot.mask));
  }
};

}  // namespace spindle::physics
