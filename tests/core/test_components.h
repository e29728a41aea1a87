// Plain components shared by the world and engine tests.
#pragma once

#include <cstdint>

namespace spindle::core::test {

struct Pos {
  float x = 0, y = 0;
};
struct Vel {
  float x = 0, y = 0;
};

}  // namespace spindle::core::test
