// The Bullet load-test scenes: `spawn` (the thesis experiment) and `boxes` (regions).
#include "scene.h"

namespace spindle::loadtest {

void register_physics_scenes() {}

}  // namespace spindle::loadtest
