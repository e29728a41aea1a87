// spindle_soak: hours of the mixed `soak` scene with job modes switching and input replayed,
// sampled every second and checked against the soak targets. See soak.h for the flags.
#include <iostream>

#include "soak.h"

int main(int argc, char** argv) {
  return spindle::loadtest::run_soak(argc, argv, std::cout, std::cerr);
}
