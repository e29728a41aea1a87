// spindle_loadtest: load-test scenes at varying object counts compared across job modes.
// See loadtest.h for the flags, and README.md for the default comparison.
#include <iostream>

#include "loadtest.h"

int main(int argc, char** argv) {
  return spindle::loadtest::run_loadtest(argc, argv, std::cout, std::cerr, /*crash_report=*/true);
}
